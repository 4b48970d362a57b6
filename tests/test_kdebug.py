"""The debug-kernel run itself (`make test-kdebug`): a module's leak is found
by kmemleak at the end of a VM run, its report reaches the console, and the
run fails. Needs the debug kernel (ATOLL_VM_KERNEL, build/kdebug/obj to
build the module against); skipped elsewhere."""
import os
import shutil
import subprocess

import pytest

from conftest import ROOT

KDIR = os.path.join(ROOT, "build", "kdebug", "obj")

pytestmark = pytest.mark.skipif(
    not os.environ.get("ATOLL_VM_KERNEL") or not os.path.exists(os.path.join(KDIR, "Module.symvers")),
    reason="needs the debug kernel: make test-kdebug")


def test_a_leak_is_reported_and_fails_the_run(vm, tmp_path):
    src = tmp_path / "leak_once"
    shutil.copytree(os.path.join(ROOT, "tests", "kmodules", "leak_once"), src)
    built = subprocess.run(["make", "-s", "-C", KDIR, f"M={src}"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    (tmp_path / "extra").mkdir()
    shutil.copy(src / "leak_once.ko", tmp_path / "extra")
    res = vm("insmod /extra/leak_once.ko && echo loaded\n", files={},
             extra_dir=str(tmp_path / "extra"), complaints_expected=True)
    assert res.status == 0 and "loaded" in res.output, res.output
    leaks = [lines for what, lines in res.complaints if what == "a memory leak (kmemleak)"]
    assert leaks, res.complaints
    # The report itself, each object with the backtrace of its allocation.
    assert "kmemleak: unreferenced object" in "\n".join(leaks[0]), leaks[0]
    assert "leak_some" in res.console and "[leak_once]" in res.console, res.console
