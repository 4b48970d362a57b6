"""Shared helpers for the system tests: where the built artefacts are and
how to boot the LWK and the Debian-kernel test VM."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import run_lwk  # noqa: E402
import vm_record  # noqa: E402

import program_mode as modes  # noqa: E402


def pytest_configure(config):
    # `make test` (CI) leaves these out; `make test-all` runs them too.
    config.addinivalue_line(
        "markers", "long: a slow variant (size, stress, second mode) of what the quick set tests")


@pytest.fixture(autouse=True)
def guest_kernel_quiet(request):
    """Fails a test in which a test VM's kernel complained (a warning, BUG,
    lockup, poison report: scripts/kernel_complaints.py), whatever the
    script's status and the test's own checks said."""
    yield
    found = vm_record.complaints_in(request.node.nodeid)
    if found:
        pytest.fail("the guest kernel complained in this test: " + "; ".join(found)
                    + " (the lines are in the test's output)", pytrace=False)


# (test, reason) of every VM run repeated in pytest-xdist's workers, which
# hand them over as they end (make systest runs two at once).
WORKERS_REPEATED = []


def pytest_sessionfinish(session):
    output = getattr(session.config, "workeroutput", None)
    if output is not None:  # in an xdist worker
        output["vm_repeats"] = list(vm_record.REPEATS)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    WORKERS_REPEATED.extend(tuple(r) for r in getattr(node, "workeroutput", {}).get("vm_repeats", []))


@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter):
    # The last words of every run: how many VM runs were repeated, and why.
    terminalreporter.section("VM runs repeated")
    for line in vm_record.summary(WORKERS_REPEATED + vm_record.REPEATS):
        terminalreporter.write_line(line)


# The test image: the LWK built with its self-tests and benchmarks.
KERNEL = os.path.join(ROOT, "build", "atoll-kernel-test")


@pytest.fixture(scope="session")
def kernel():
    if not os.path.exists(KERNEL):
        pytest.fail("build/atoll-kernel-test is missing: run `make kernel` first")
    return KERNEL


@pytest.fixture
def boot():
    """boot(kernel, smp=.., cmdline=..) -> (status, console)."""
    def _boot(kernel, **kw):
        kw.setdefault("timeout", 240)
        kw.setdefault("echo", False)
        return run_lwk.run(kernel, **kw)
    return _boot


def pytest_generate_tests(metafunc):
    # The program tests run once more with their programs at CPL 0, in the
    # long set (tests/program_mode.py).
    if metafunc.module.__name__ in modes.MODULES and "program_mode" in metafunc.fixturenames:
        metafunc.parametrize("program_mode", ["ring3", pytest.param("hrt", marks=pytest.mark.long)],
                             indirect=True, scope="module")


@pytest.fixture(scope="module")
def program_mode(request):
    """"ring3", or "hrt" for the program tests' second run."""
    return getattr(request, "param", "ring3")


@pytest.fixture
def vm(tmp_path, program_mode):
    """vm(script_text, extra_dir=None, timeout=300, **run_vm_kw) -> VMResult
    with .status, .output (script output + kernel lines) and .console.
    Boots the Debian-kernel test VM (scripts/vm.py) quietly; pass files={}
    to leave build/atoll.ko and the other built files out of the guest."""
    import vm as vm_tool  # scripts/vm.py; imported here to keep the name free

    def _vm(script_text, extra_dir=None, timeout=300, **kw):
        script = tmp_path / "vm-script.sh"
        script.write_text(modes.script_for(program_mode, script_text))
        kw.setdefault("echo", False)
        return vm_tool.run_vm(str(script), extra_dir=extra_dir,
                              timeout=timeout, **kw)
    return _vm


@pytest.fixture(scope="session")
def programs(tmp_path_factory):
    """The test programs (tests/programs), built into a fresh directory (the VM's /extra)."""
    out = tmp_path_factory.mktemp("programs")
    res = subprocess.run([os.path.join(ROOT, "scripts", "build-programs.sh"), str(out), "tests"],
                         capture_output=True, text=True)
    assert res.returncode == 0, f"building tests/programs failed:\n{res.stdout}{res.stderr}"
    return out
