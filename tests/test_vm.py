"""The Debian-kernel test VM itself (scripts/vm.py). These run without
atoll.ko (files={}), so they check the tool, not the module."""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

import kernel_complaints
import vm as vm_tool
import vm_record
from conftest import ROOT

NO_FILES = {}


def values(output):
    """key=value lines printed by a guest script, as a dict."""
    return dict(re.findall(r"^(\w+)=(.*)$", output, re.M))


def test_status_and_output(vm):
    res = vm("echo hello; exit 3\n", files=NO_FILES)
    assert res.status == 3, res.console
    assert "hello" in res.output
    assert "ATOLL-VM" not in res.output  # markers are not script output
    status, output = res  # also unpacks as (status, output)
    assert (status, output) == (3, res.output)


def test_kernel_warnings_show_but_not_info(vm):
    # Warning level or worse reaches the console (a module's WARN or oops
    # shows up); informational lines do not flood it.
    script = ("echo '<4>atoll-vm-test warning' >/dev/kmsg\n"
              "echo '<6>atoll-vm-test info' >/dev/kmsg\n")
    res = vm(script, files=NO_FILES)
    assert res.status == 0, res.console
    assert "atoll-vm-test warning" in res.output
    assert "atoll-vm-test info" not in res.console


def stand_in_qemu(tmp_path, monkeypatch, text):
    """QEMU replaced by a shell script of `text` (run_vm boots it); the
    script file to write again, and a script for run_vm to run."""
    fake = tmp_path / "fake-qemu"
    fake.write_text(text)
    fake.chmod(0o755)
    monkeypatch.setattr(vm_tool, "qemu_command", lambda *a: [str(fake)])
    monkeypatch.setattr(vm_tool, "build_initramfs", lambda *a: None)
    # Its repeats are the test's own, not the session's to report.
    monkeypatch.setattr(vm_record, "REPEATS", [])
    script = tmp_path / "script.sh"
    script.write_text("echo hi\n")
    return fake, script


def test_hung_boot_is_retried_once(tmp_path, monkeypatch):
    # A stand-in for QEMU that hangs before the script on its first boot
    # (as Debian's kernel once did under TCG) and runs it on the second.
    booted = tmp_path / "booted-once"
    fake, script = stand_in_qemu(
        tmp_path, monkeypatch,
        "#!/bin/sh\n"
        f"if [ ! -e {booted} ]; then touch {booted}\n"
        "  echo '[   29.8] watchdog: BUG: soft lockup - CPU#2 stuck'; exec sleep 60\n"
        "fi\n"
        "echo 'ATOLL-VM: script starts'; echo hi; echo 'ATOLL-VM-EXIT: 0'\n")
    res = vm_tool.run_vm(str(script), files={}, echo=False, boot_timeout=2)
    assert res.status == 0, res.console
    assert res.output.startswith("vm: Linux did not reach the script in 2 s "
                                 "(boot attempt 1 hung); running the VM once more\nhi\n")
    assert "soft lockup" in res.console and "soft lockup" not in res.output
    # Counted for the session's summary, under this test.
    test = vm_record.current_test()
    assert test.endswith("test_hung_boot_is_retried_once"), test
    assert len(vm_record.repeats_in(test)) == 1

    # Hung twice: a clear timeout, not a third boot.
    booted.unlink()
    fake.write_text("#!/bin/sh\nexec sleep 60\n")
    res = vm_tool.run_vm(str(script), files={}, echo=False, boot_timeout=1)
    assert res.status == vm_tool.STATUS_TIMEOUT
    assert res.output.endswith("vm: Linux did not reach the script in 1 s, "
                               "2 boots in a row; QEMU killed\n")


def test_qemu_dying_before_the_module_is_run_again_once(tmp_path, monkeypatch):
    # QEMU 7.2 aborted once on an MSI-X table write while Linux's virtio
    # drivers probed, before /init loaded Atoll's module: run again, counted.
    died = tmp_path / "died-once"
    fake, script = stand_in_qemu(
        tmp_path, monkeypatch,
        "#!/bin/sh\n"
        f"if [ ! -e {died} ]; then touch {died}\n"
        "  echo 'qemu-system-x86_64: msix.c:218: msix_table_mmio_write: Assertion failed.'\n"
        "  exit 134\n"
        "fi\n"
        "echo 'ATOLL-VM: Linux booted'; echo 'ATOLL-VM: script starts'\n"
        "echo hi; echo 'ATOLL-VM-EXIT: 0'\n")
    res = vm_tool.run_vm(str(script), files={}, echo=False, timeout=30)
    assert res.status == 0, res.console
    assert res.output == ("vm: QEMU stopped before Atoll's module was loaded "
                          "(qemu-system-x86_64: msix.c:218: msix_table_mmio_write: "
                          "Assertion failed.); running the VM once more\nhi\n"), res.output
    assert len(vm_record.repeats_in(vm_record.current_test())) == 1

    # Dying once Linux has booted (the module may be at fault): never again.
    fake.write_text("#!/bin/sh\necho 'ATOLL-VM: Linux booted'; echo 'boom'; exit 134\n")
    res = vm_tool.run_vm(str(script), files={}, echo=False, timeout=30)
    assert res.status == vm_tool.STATUS_NO_MARKER and "once more" not in res.output, res.output
    assert len(vm_record.repeats_in(vm_record.current_test())) == 1


def test_stall_outside_atoll_is_run_again_once(tmp_path, monkeypatch):
    # A stand-in for QEMU whose Linux CPU is reported stuck twice in the
    # script, in Linux's own code (as Debian's kernel once was under TCG),
    # on its first run and not on its second.
    ran = tmp_path / "ran-once"
    report = ("[   48.5] watchdog: BUG: soft lockup - CPU#2 stuck for {}s! [sh:129]\n"
              "[   48.5] Modules linked in: atoll(OE) 9p\n"
              "[   48.5]  free_unref_page+0x25/0x1d0\n"
              "[   48.5]  </TASK>\n")
    fake, script = stand_in_qemu(
        tmp_path, monkeypatch,
        "#!/bin/sh\n"
        "echo 'ATOLL-VM: script starts'\n"
        f"if [ ! -e {ran} ]; then touch {ran}\n"
        f"  printf '{report.format(22)}'; sleep 0.2; printf '{report.format(48)}'; exec sleep 60\n"
        "fi\n"
        "echo hi; echo 'ATOLL-VM-EXIT: 0'\n")
    res = vm_tool.run_vm(str(script), files={}, echo=False, timeout=30)
    assert res.status == 0, res.console
    assert res.output == ("vm: a CPU of Linux stalled in a soft lockup outside Atoll's "
                          "module, no enclave up; running the VM once more\nhi\n"), res.output
    assert res.complaints == []  # the stall was the reason to repeat, and counted
    assert len(vm_record.repeats_in(vm_record.current_test())) == 1

    # A second stall in the same test: a failure, not another run.
    ran.unlink()
    res = vm_tool.run_vm(str(script), files={}, echo=False, timeout=30,
                         complaints_expected=True)
    assert res.status == vm_tool.STATUS_TIMEOUT and "once more" not in res.output, res.output
    assert "stalled in a soft lockup outside Atoll's module again" in res.output, res.output
    assert {w for w, _ in res.complaints} == {"a soft lockup"}, res.complaints


def test_stall_with_atoll_or_an_enclave_is_never_run_again(tmp_path, monkeypatch):
    report = ("[   48.5] watchdog: BUG: soft lockup - CPU#2 stuck for {}s! [sh:129]\n"
              "[   48.5] Modules linked in: atoll(OE) 9p\n"
              "[   48.5]  {}\n"
              "[   48.5]  </TASK>\n")
    for before, frame in [("", "atoll_kmsg_poll+0x10/0x80 [atoll]"),
                          ("[   40.1] atoll: enclave e (id 1) up on 1 CPUs and 128 MiB\n",
                           "free_unref_page+0x25/0x1d0")]:
        fake, script = stand_in_qemu(
            tmp_path, monkeypatch,
            "#!/bin/sh\n"
            "echo 'ATOLL-VM: script starts'\n"
            f"printf '{before}{report.format(22, frame)}'; sleep 0.2\n"
            f"printf '{report.format(48, frame)}'; exec sleep 60\n")
        res = vm_tool.run_vm(str(script), files={}, echo=False, timeout=3,
                             complaints_expected=True)
        assert res.status == vm_tool.STATUS_TIMEOUT and "once more" not in res.output, res.output
        assert res.output.endswith("vm: no exit status after 3 s; QEMU killed\n"), res.output
        assert {w for w, _ in res.complaints} == {"a soft lockup"}, res.complaints
    assert vm_record.repeats_in(vm_record.current_test()) == []


def test_complaints_found_in_a_console():
    console = ("ATOLL-VM: script starts\n"
               "WARNING: printed by a program, not the kernel\n"
               "[    5.5] page dumped because: unmovable page\n"
               "out[    6.1] BUG: sleeping function called from invalid context at x.c:1\n"
               "[    6.1] in_atomic(): 1, irqs_disabled(): 0\n"
               "more script output\n"
               "[    6.2] Call Trace:\n")
    found = kernel_complaints.scan(console)
    assert [w for w, _ in found] == ["a BUG report (incl. sleeping in atomic context, "
                                     "scheduling while atomic, bad page state)"], found
    assert found[0][1] == console.splitlines()[2:5] + ["[    6.2] Call Trace:"], found
    slab = "[    7.0] BUG kmalloc-64 (Tainted: G           OE     ): Redzone overwritten\n"
    assert [w for w, _ in kernel_complaints.scan(slab)] == [
        "a slab report (red zone, poison, free pointer)"]
    warn = "[    8.0] WARNING: CPU: 1 PID: 77 at drivers/x.c:9 f+0x1/0x2 [atoll]\n"
    assert [w for w, _ in kernel_complaints.scan(warn)] == ["a WARN()"]
    # Once Linux has stopped its other CPUs to power down, no longer.
    halt = "[    9.0] reboot: Power down\n"
    assert kernel_complaints.scan(halt + warn) == []
    assert len(kernel_complaints.scan(warn + halt + warn)) == 1
    # An entry of the allowed list excuses a line, and only that line.
    monkey = [(re.compile("BUG kmalloc-64"), "an example")]
    saved, kernel_complaints._ALLOWED = kernel_complaints._ALLOWED, monkey
    try:
        assert kernel_complaints.scan(slab) == []
        assert len(kernel_complaints.scan(slab + warn)) == 1
    finally:
        kernel_complaints._ALLOWED = saved


def test_kmemleak_report_is_a_complaint():
    # As the debug kernel's /init writes it (scripts/vm-init.sh): the
    # kernel's count, then the report copied to /dev/kmsg.
    console = ("[  90.1] kmemleak: 1 new suspected memory leaks (see /sys/kernel/debug/kmemleak)\n"
               "[  90.2] kmemleak: unreferenced object 0xffff888012345600 (size 96):\n"
               "[  90.2] kmemleak:   comm \"insmod\", pid 91, jiffies 4294900000 (age 9.1s)\n"
               "[  90.2] kmemleak:     [<ffffffffa0000010>] leak_some+0x10/0x40 [leak_once]\n")
    found = kernel_complaints.scan(console)
    assert [w for w, _ in found] == ["a memory leak (kmemleak)"], found
    assert found[0][1] == console.splitlines(), found


def test_another_kernel_must_exist(tmp_path, monkeypatch):
    # run_vm(kernel=) or ATOLL_VM_KERNEL: a missing one is a clear error.
    monkeypatch.setenv("ATOLL_VM_KERNEL", str(tmp_path / "bzImage"))
    with pytest.raises(FileNotFoundError, match="bzImage is missing"):
        vm_tool.run_vm(str(tmp_path / "script.sh"), files={}, echo=False)


def test_a_kernel_warning_fails_vm_run_after_the_script(tmp_path):
    # A module that warns once at load, built against the guest's kernel:
    # `make vm-run`'s script runs to its end, then the run fails (123) and
    # shows the warning.
    src = tmp_path / "warn_once"
    shutil.copytree(os.path.join(ROOT, "tests", "kmodules", "warn_once"), src)
    kdir = f"/usr/lib/modules/{vm_tool.kernel_version()}/build"
    built = subprocess.run(["make", "-s", "-C", kdir, f"M={src}"], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    (tmp_path / "extra").mkdir()
    shutil.copy(src / "warn_once.ko", tmp_path / "extra")
    script = tmp_path / "warn.sh"
    script.write_text("insmod /extra/warn_once.ko && echo loaded\necho script-ran-to-its-end\n")
    run = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "vm.py"),
                          "--script", str(script), "--extra", str(tmp_path / "extra")],
                         capture_output=True, text=True, timeout=600)
    out = run.stdout + run.stderr
    assert run.returncode == vm_tool.STATUS_COMPLAINED, out
    assert "script-ran-to-its-end" in run.stdout, out
    shown = out[out.index("the guest kernel complained"):]
    assert "--- a WARN()" in shown and "atoll test: a warning on purpose" in shown, shown


def test_split_console():
    console = ("[    1.000000] boot error\n"
               "ATOLL-VM: script starts\n"
               "line one\n"
               "no newline ATOLL-VM-EXIT: 42\n"
               "[    2.000000] late warning\n"
               "[    2.100000] reboot: Power down\n")
    assert vm_tool.split_console(console) == (42, (
        "[    1.000000] boot error\nline one\nno newline \n"
        "[    2.000000] late warning\n"))
    assert vm_tool.split_console("ATOLL-VM: script starts\nhi\n") == (
        None, "hi\n")


def test_cpus_and_movable_memory(vm):
    # What the LWK needs from the guest: 4 CPUs, and at least eight 128 MiB
    # Movable blocks offline at once, which come back online afterwards.
    script = r"""
echo cpus=$(cat /sys/devices/system/cpu/online)
echo block=$(cat /sys/devices/system/memory/block_size_bytes)
meminfo() { grep MemTotal /proc/meminfo | tr -dc 0-9; }
echo before=$(meminfo)
cd /sys/devices/system/memory
movable=0; off=""
for b in memory*; do
    [ "$(cat $b/valid_zones)" = Movable ] || continue
    movable=$((movable + 1))
    echo offline >$b/state && off="$off $b"
done
echo movable=$movable
echo offlined=$(echo $off | wc -w)
echo during=$(meminfo)
back=0
for b in $off; do
    echo online_movable >$b/state &&
        [ "$(cat $b/valid_zones)" = Movable ] && back=$((back + 1))
done
echo onlined=$back
echo after=$(meminfo)
"""
    res = vm(script, files=NO_FILES, smp=4)
    assert res.status == 0, res.console
    v = {k: int(x, 16) if k == "block" else x for k, x in values(res.output).items()}
    assert v["cpus"] == "0-3"
    assert v["block"] == 128 << 20
    offlined = int(v["offlined"])
    assert offlined >= 8, res.output
    assert int(v["onlined"]) == offlined, res.output
    assert int(v["during"]) == int(v["before"]) - offlined * (128 << 10)
    assert v["after"] == v["before"]


def test_timeout_kills_the_vm(vm):
    # Long enough for a boot with the debug checks on a loaded host (45 s was not).
    start = time.monotonic()
    res = vm("echo sleeping; sleep 1000\n", files=NO_FILES, timeout=75)
    took = time.monotonic() - start
    assert res.status == 124, res.console
    assert "sleeping" in res.output  # the script ran: not a slow boot
    assert "QEMU killed" in res.output
    assert took < 120


def test_kernel_panic_gives_125(vm):
    res = vm("echo c >/proc/sysrq-trigger; sleep 100\n", files=NO_FILES,
             complaints_expected=True)
    assert res.status == 125, res.console
    assert "Kernel panic" in res.output  # kernel lines are kept
    assert "a kernel panic" in [w for w, _ in res.complaints], res.complaints


def test_insmod_failure_gives_99(vm, tmp_path):
    bogus = tmp_path / "not-a-module.ko"
    bogus.write_text("not an ELF module\n")
    res = vm("echo should-not-run\n", files={"/atoll.ko": str(bogus)})
    assert res.status == 99, res.console
    assert "should-not-run" not in res.output
    assert "insmod /atoll.ko failed" in res.output


def test_files_and_extra_dir(vm, tmp_path):
    extra = tmp_path / "extra"
    (extra / "sub").mkdir(parents=True)
    (extra / "sub" / "run.sh").write_text("echo from-extra\n")
    (extra / "sub" / "run.sh").chmod(0o750)
    (extra / "link").symlink_to("sub/run.sh")
    lwk = tmp_path / "lwk.bin"
    lwk.write_bytes(b"\x7fELF fake")
    script = r"""
echo mode=$(stat -c %a /extra/sub/run.sh)
echo via_link=$(/extra/link)
echo lwk=$(cat /lib/atoll/atoll-kernel | cut -c2-)
echo pwd=$(pwd)
"""
    res = vm(script, extra_dir=str(extra),
             files={"/lib/atoll/atoll-kernel": str(lwk)})
    assert res.status == 0, res.console
    v = values(res.output)
    assert v == {"mode": "750", "via_link": "from-extra",
                 "lwk": "ELF fake", "pwd": "/"}, res.output


def test_missing_host_file_is_a_clear_error(tmp_path):
    script = tmp_path / "s.sh"
    script.write_text("true\n")
    with pytest.raises(FileNotFoundError, match="for /atoll.ko in the guest"):
        vm_tool.build_initramfs(str(tmp_path / "i.cpio"),
                                {"/atoll.ko": str(tmp_path / "nope.ko")},
                                str(script))
    assert not os.path.exists(tmp_path / "i.cpio")


def test_debian_userland(vm):
    # The guest runs the host's own dynamic programs and Debian's MPI, with
    # the host's /usr and /etc read-only.
    script = r"""
echo py=$(/usr/bin/python3 -c 'print(6 * 7)')
echo ldso=$(/lib64/ld-linux-x86-64.so.2 --version | head -1 | cut -d' ' -f1)
echo mpirun=$(readlink -f /usr/bin/mpirun.openmpi | xargs basename)
touch /usr/atoll-write-test 2>/dev/null && echo usr=writable || echo usr=read-only
echo shm=$(stat -c %a /dev/shm)
echo lo=$(cat /sys/class/net/lo/operstate)
"""
    res = vm(script, files=NO_FILES)
    assert res.status == 0, res.console
    v = values(res.output)
    assert v["py"] == "42" and v["ldso"] == "ld.so", res.output
    assert v["mpirun"] == "orterun", res.output
    assert v["usr"] == "read-only" and v["shm"] == "1777", res.output
    assert v["lo"] in ("unknown", "up"), res.output
