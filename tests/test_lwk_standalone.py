"""The LWK booted on its own under QEMU (TCG): self-tests, fault reports,
position independence."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT


def summary(console):
    m = re.search(r"^(\d+) passed, (\d+) failed$", console, re.M)
    assert m, "no summary line in the console:\n" + console[-3000:]
    return int(m.group(1)), int(m.group(2))


@pytest.mark.parametrize("smp", [1, 4])
def test_selftest_passes(kernel, boot, smp):
    status, console = boot(kernel, smp=smp, cmdline="selftest")
    passed, failed = summary(console)
    assert status == "pass", console[-3000:]
    assert failed == 0 and passed >= 14
    assert f"smp: {smp} of {smp} CPUs online" in console
    # With several CPUs, every one of them ran test threads.
    ran_on = set(int(c) for c in re.findall(r"cpu (\d+): thread \d+ ran here", console))
    assert ran_on == set(range(smp))


def test_selftest_with_1gib_pages(kernel, boot):
    """`-cpu max` offers 1 GiB pages: the direct map must use them and the
    suite must still pass."""
    status, console = boot(kernel, smp=2, cmdline="selftest", cpu="max", mem_mb=2048)
    assert "direct map with 1 GiB/2 MiB pages" in console
    assert status == "pass", console[-3000:]
    assert summary(console)[1] == 0


@pytest.mark.long
def test_selftest_in_x2apic_and_tsc_deadline_mode(kernel, boot):
    """QEMU 7.2's TCG offers neither x2APIC nor the TSC-deadline timer; the
    /dev/kvm back end does. Runs only where that back end starts this CPU
    model (everything else in the suite is TCG)."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        pytest.skip("no usable /dev/kvm")
    status, console = boot(kernel, smp=2, cmdline="selftest", accel="kvm",
                           cpu="qemu64,+x2apic,+tsc-deadline", timeout=120)
    if status.startswith("exit") and "Atoll LWK" not in console:
        pytest.skip(f"the KVM back end could not start the VM: {console[-300:]}")
    assert "APIC x2APIC mode, timer TSC-deadline" in console, console[-2000:]
    assert status == "pass", console[-3000:]
    assert summary(console)[1] == 0


def test_bench_runs_and_reports_every_measurement(kernel, boot):
    """Not a speed check: the benchmark must finish and report each figure."""
    status, console = boot(kernel, smp=4, cmdline="bench", timeout=400)
    assert status == "pass", console[-3000:]
    for name in ["thread_create_join_same_core", "thread_create_join_other_core",
                 "wakeup_condvar_ipi_kick", "wakeup_condvar_no_kick",
                 "ipi_round_trip", "lock_ticket", "lock_pmtlock"]:
        assert re.search(rf"^result {name} ", console, re.M), name
    for jain in re.findall(r"jain=([0-9.]+)", console):
        assert 0.0 < float(jain) <= 1.0


def test_crashtest_reports_fault_and_fails(kernel, boot):
    status, console = boot(kernel, smp=4, cmdline="crashtest", timeout=60)
    assert status == "fail", f"status {status}:\n{console[-2000:]}"
    assert "EXCEPTION on CPU 3" in console
    assert 'thread' in console and '"crash-test"' in console
    assert "page fault (#PF) (vector 14)" in console
    assert "faulting address 0x00000deadbeef000" in console
    assert re.search(r"rip 0xffff8[0-9a-f]{11}", console)


def test_runs_when_loaded_elsewhere(kernel, boot, tmp_path):
    """The co-kernel is loaded wherever Linux's free memory is: the same
    image moved 30 MiB up must relocate itself and pass its self-tests."""
    moved = tmp_path / "atoll-kernel-moved"
    subprocess.run([sys.executable, f"{ROOT}/scripts/relocate_image.py",
                    kernel, str(moved), hex(30 << 20)], check=True)
    status, console = boot(str(moved), smp=2, cmdline="selftest")
    assert "image at physical 0x2000000," in console
    assert status == "pass", console[-3000:]
    assert summary(console)[1] == 0


def test_unknown_command_line_word_is_harmless(kernel, boot):
    """Without a known word the kernel boots, says so, and keeps running
    (the runner then kills it at the timeout)."""
    status, console = boot(kernel, smp=2, cmdline="nothing-to-do", timeout=20)
    assert status == "timeout"
    assert "booted, nothing to run" in console
