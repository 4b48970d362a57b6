#!/usr/bin/env python3
"""Run a shell script inside a Debian-kernel test VM (QEMU, TCG) and exit with
the script's status: 124 = timeout (QEMU killed), 125 = the VM ended without
reporting a status (kernel panic, early power-off), 123 = the script exited 0
but the guest kernel complained (a warning, BUG, oops, lockup, poison report:
scripts/kernel_complaints.py), 2 = could not start. Complaints are shown
after the script's output whatever its status.

The guest boots with Debian's own debug checks on (DEBUG_CHECKS) unless a
benchmark turns them off. A run repeated (a hung boot, a stall of Linux's
own) says why and is counted (scripts/vm_record.py).

Another kernel can be booted instead (`make test-kdebug`'s debug kernel):
--kernel / run_vm(kernel=) / ATOLL_VM_KERNEL name a bzImage that has virtio
PCI and 9p built in (no modules are loaded into it); ATOLL_VM_MODULE names
the atoll.ko built for it (its atoll_test.ko beside it). ATOLL_VM_SLOW=N multiplies every VM's timeout
and boot timeout by N, for a kernel that runs N times slower under TCG.

The guest boots the installed Debian kernel (scripts/debian-kernel.sh) with a
busybox initramfs built here: /init (scripts/vm-init.sh) loads /atoll.ko and
then the test module /atoll_test.ko when present, runs the script as /run.sh
and prints "ATOLL-VM-EXIT: N".
In the guest: /bin/atoll (the CLI's test build, build/atoll-test, with the
message checks), /lib/atoll/atoll-kernel and -test, and the modules when built,
the --extra directory under /extra, busybox applets in /bin, and Debian's
userland: the host's /usr and /etc, shared read-only over virtio-9p, so the
guest runs the host's dynamic programs, libraries and MPI as they are.
"""
import argparse
import codecs
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import kernel_complaints
import vm_record
from cpio_newc import NewcWriter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")

# guest path -> host path; run_vm(files=None) takes those that exist.
MODULE = os.environ.get("ATOLL_VM_MODULE") or os.path.join(ROOT, "build", "atoll.ko")
DEFAULT_FILES = {
    "/atoll.ko": MODULE,
    # The test parts (make module cli build them): the message checks and
    # benchmarks on /dev/atoll-test, and the CLI that has kmsg-check,
    # kmsg-bench and kmsg-mcast.
    "/atoll_test.ko": os.path.join(os.path.dirname(MODULE), "atoll_test.ko"),
    "/bin/atoll": os.path.join(ROOT, "build", "atoll-test"),
    "/lib/atoll/atoll-kernel": os.path.join(ROOT, "build", "atoll-kernel"),
    # The same LWK with its self-tests, benchmarks and crash/hang tests.
    "/lib/atoll/atoll-kernel-test": os.path.join(ROOT, "build", "atoll-kernel-test"),
}

# The top 1536 MiB of guest RAM goes to ZONE_MOVABLE: twelve 128 MiB memory
# blocks, eleven of which can be offlined (to hand to the LWK); the last one
# holds the kernel's early allocations (struct pages).
MOVABLECORE = "1536M"
# The guest's RAM: 1 GiB for Linux beside the movable part. No more: with
# page_poison=1 Linux writes every free page at boot, about 5 s a GiB under
# TCG (4 GiB took 28 s to boot and power off, 2.5 GiB 21 s, 12 s unchecked).
MEM_MB = 2560
# nokaslr: with physical KASLR the kernel image may land in ZONE_MOVABLE and
# pin a random block; fixed addresses also make oopses match System.map.
# cryptomgr.notests: the crypto self-tests at boot are slow under TCG, and
# one run hung in them (a soft lockup in cryptomgr_test) before any test began.
CMDLINE = (f"console=ttyS0 quiet loglevel=4 movablecore={MOVABLECORE} "
           "nokaslr panic=-1 panic_on_oops=1 cryptomgr.notests")
# Debian's kernel's own checks: slab red zones, poisoning and sanity checks,
# and freed pages poisoned, so a use-after-free or overrun by the module is
# reported (kernel_complaints.py fails the run). Benchmarks leave them off.
DEBUG_CHECKS = os.environ.get("ATOLL_DEBUG_CHECKS", "slub_debug=FZPU page_poison=1")

START_MARKER = "ATOLL-VM: script starts"
# /init prints this once Linux's own boot (virtio, 9p) is done, before it
# loads Atoll's module: QEMU dying before it is QEMU's or Linux's failure.
BOOTED_MARKER = "ATOLL-VM: Linux booted"
EXIT_RE = re.compile(r"ATOLL-VM-EXIT: (\d+)\n")
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\] ")
POWER_OFF_LINE = re.compile(r"^\[\s*\d+\.\d+\] reboot: Power down")
STATUS_TIMEOUT, STATUS_NO_MARKER, STATUS_COMPLAINED = 124, 125, 123
POWEROFF_GRACE = 30  # seconds QEMU gets to exit after the marker
# Seconds Linux gets to boot and reach the script (about 5 normally, 30 on a
# loaded host). Debian's kernel has hung at boot under TCG before any of our
# code ran (a kworker in a soft lockup for minutes); such a boot is retried.
BOOT_TIMEOUT = 180
BOOT_ATTEMPTS = 2
# How many times slower than Debian's the booted kernel runs (a debug
# kernel's KASAN, lockdep and kmemleak under TCG): scales the timeouts.
SLOW = float(os.environ.get("ATOLL_VM_SLOW") or 1)
# A CPU of Debian's kernel has also stalled under TCG in the middle of a
# script, at one instruction of Linux's own code for minutes (a soft lockup
# in free_pcp_prepare, forking a shell, before any enclave existed), and
# did not recur in reruns. A run where one CPU is reported stuck twice with
# none of Atoll's module in its call trace, before any enclave existed, is
# stopped and run once more, at most once per test; one with Atoll's code in
# it, or with an enclave up, is a failure like any other.
SOFT_LOCKUP = "watchdog: BUG: soft lockup"
LOCKUP_WINDOW = 64 * 1024  # characters of console searched for two reports
LOCKUP_LINE = re.compile(r"CPU#(\d+) stuck for (\d+)s! \[(.*?)\]")
# host/enclave.c's notice when an enclave is up (vm-init.sh shows notices).
ENCLAVE_UP = re.compile(r"atoll: enclave .* up on ")

GUEST_DIRS = ["/bin", "/sbin", "/usr", "/etc", "/lib", "/lib64",
              "/dev", "/proc", "/sys", "/tmp", "/root", "/extra"]

# Host directories the guest mounts read-only (9p mount tag -> host path).
SHARED_DIRS = {"usr": "/usr", "etc": "/etc"}
# Where the merged-/usr paths that programs name lead in the guest: the
# dynamic loader is /lib64/ld-linux-x86-64.so.2 -> /lib/x86_64-linux-gnu/...
GUEST_LINKS = {
    "/lib/x86_64-linux-gnu": "/usr/lib/x86_64-linux-gnu",
    "/lib64/ld-linux-x86-64.so.2": "/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2",
}
# The kernel modules that mount the shared directories, virtio_blk for a
# disk and virtio_net for a network card given with qemu_args (the noise
# benchmark's I/O load, the two-node Slurm cluster), in load order (/init
# loads them from /lib/vm-modules).
VM_MODULES = [
    "drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
    "drivers/virtio/virtio_pci_legacy_dev.ko",
    "drivers/virtio/virtio_pci_modern_dev.ko", "drivers/virtio/virtio_pci.ko",
    "fs/netfs/netfs.ko", "fs/fscache/fscache.ko", "net/9p/9pnet.ko",
    "net/9p/9pnet_virtio.ko", "fs/9p/9p.ko", "drivers/block/virtio_blk.ko",
    "net/core/failover.ko", "drivers/net/net_failover.ko", "drivers/net/virtio_net.ko",
]


class VMResult(tuple):
    """(status, output) as a tuple, plus attributes:
    status   the script's exit status, or 124 / 125 (see the module doc)
    output   the script's output plus kernel lines and /init's messages,
             without the markers or the boot/power-off noise
    console  the whole serial console text
    """

    def __new__(cls, status, output, console):
        self = super().__new__(cls, (status, output))
        self.console = console
        return self

    status = property(lambda self: self[0])
    output = property(lambda self: self[1])


def kernel_version():
    """The Debian kernel version dir to boot, e.g. 6.1.0-56-amd64."""
    res = subprocess.run([os.path.join(SCRIPTS, "debian-kernel.sh")],
                         capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(res.stderr.strip() or "debian-kernel.sh failed")
    return res.stdout.strip()


def default_files():
    return {g: h for g, h in DEFAULT_FILES.items() if os.path.exists(h)}


def module_files(version):
    """guest path -> host path of VM_MODULES for kernel `version`."""
    base = f"/lib/modules/{version}/kernel"
    files = {}
    for i, rel in enumerate(VM_MODULES):
        # The number keeps /init's `ls` in load order.
        files[f"/lib/vm-modules/{i:02d}-{os.path.basename(rel)}"] = f"{base}/{rel}"
    return files


def build_initramfs(out_path, files, script_path, extra_dir=None, version=None):
    """Writes a newc cpio to out_path, uncompressed (gzip here and gunzip in
    the guest under TCG cost seconds a boot). files maps guest -> host path;
    version: the Debian kernel whose VM_MODULES go in (None: none, for a
    kernel with them built in)."""
    wanted = dict(files)
    wanted["/run.sh"] = script_path
    if version is not None:
        wanted.update(module_files(version))
    for guest, host in wanted.items():
        if not os.path.isfile(host):
            raise FileNotFoundError(f"vm: {host} (for {guest} in the guest) "
                                    "is missing or not a file")
    if extra_dir is not None and not os.path.isdir(extra_dir):
        raise FileNotFoundError(f"vm: extra dir {extra_dir} is not a directory")

    with open(out_path, "wb") as out:
        w = NewcWriter(out)
        made = set()

        def parents(path):
            # The kernel does not create missing parents while unpacking.
            parts = path.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                d = "/" + "/".join(parts[:i])
                if d not in made:
                    made.add(d)
                    w.dir(d)

        for d in GUEST_DIRS:
            parents(d + "/x")
        # The kernel opens /dev/console for /init before devtmpfs is mounted.
        w.chardev("/dev/console", 5, 1)
        w.file("/bin/busybox", _read("/bin/busybox"), 0o755)
        w.file("/init", _read(os.path.join(SCRIPTS, "vm-init.sh")), 0o755)
        for guest, target in GUEST_LINKS.items():
            parents(guest)
            w.symlink(guest, target)
        for guest, host in sorted(wanted.items()):
            parents(guest)
            w.file(guest, _read(host), os.stat(host).st_mode & 0o7777)
        if extra_dir is not None:
            _add_tree(w, extra_dir, "/extra")
        w.close()


def _add_tree(w, host_dir, guest_dir):
    """Copies host_dir's contents under guest_dir, keeping modes and links."""
    for name in sorted(os.listdir(host_dir)):
        host, guest = os.path.join(host_dir, name), f"{guest_dir}/{name}"
        st = os.lstat(host)
        if os.path.islink(host):
            w.symlink(guest, os.readlink(host))
        elif os.path.isdir(host):
            w.dir(guest, st.st_mode & 0o7777)
            _add_tree(w, host, guest)
        elif os.path.isfile(host):
            w.file(guest, _read(host), st.st_mode & 0o7777)
        # Sockets, fifos and devices in extra_dir are skipped on purpose.


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def share_args():
    """QEMU's arguments that share SHARED_DIRS read-only with the guest."""
    args = []
    for i, (tag, path) in enumerate(SHARED_DIRS.items()):
        args += ["-fsdev", f"local,id=fs{i},path={path},security_model=none,readonly=on",
                 "-device", f"virtio-9p-pci,fsdev=fs{i},mount_tag={tag}"]
    return args


def qemu_command(kernel, initrd, smp, mem_mb, cmdline):
    return [
        "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg",
        "-cpu", "qemu64", "-smp", str(smp), "-m", f"{mem_mb}M",
        "-kernel", kernel, "-initrd", initrd, "-append", cmdline,
        "-display", "none", "-serial", "stdio", "-monitor", "none",
        "-no-reboot", "-nodefaults", "-net", "none",
    ]


def run_vm(script_path, extra_dir=None, smp=4, mem_mb=MEM_MB, timeout=600,
           echo=True, files=None, append_extra="", qemu_args=(), on_start=None,
           boot_timeout=BOOT_TIMEOUT, checks=True, complaints_expected=False,
           kernel=None):
    """Boots the VM, runs script_path as /run.sh; returns a VMResult, which
    unpacks as (exit_status, output) and also has .console.
    files: guest -> host path; None = DEFAULT_FILES that exist, {} = none.
    echo: True prints the console as it comes, a function gets each piece.
    qemu_args: added to QEMU's command; on_start(proc): called once QEMU runs
    (the benchmarks pin its vCPU threads). boot_timeout: seconds until the
    script must have started, else the VM boots once more (None: no limit).
    checks: boot with DEBUG_CHECKS (benchmarks pass False). The guest
    kernel's complaints make the status STATUS_COMPLAINED if it was 0, are
    shown in the output and recorded (vm_record), unless complaints_expected
    (a test that provokes one); they are in .complaints either way.
    kernel: a bzImage to boot instead of Debian's (default ATOLL_VM_KERNEL),
    with virtio PCI and 9p built in. Both timeouts are multiplied by SLOW."""
    if files is None:
        files = default_files()
    kernel = kernel or os.environ.get("ATOLL_VM_KERNEL")
    if kernel:
        if not os.path.isfile(kernel):
            raise FileNotFoundError(f"vm: kernel {kernel} is missing")
        version = None
    else:
        version = kernel_version()
        kernel = f"/boot/vmlinuz-{version}"
    timeout = round(timeout * SLOW)
    if boot_timeout:
        boot_timeout = round(boot_timeout * SLOW)
    cmdline = " ".join(filter(None, [CMDLINE, DEBUG_CHECKS if checks else "",
                                     append_extra]))
    if shutil.which("qemu-system-x86_64") is None:
        raise RuntimeError("vm: qemu-system-x86_64 not found; run `make deps`")
    with tempfile.TemporaryDirectory(prefix="atoll-vm-") as tmp:
        initrd = os.path.join(tmp, "initramfs.cpio")
        build_initramfs(initrd, files, script_path, extra_dir, version)
        cmd = (qemu_command(kernel, initrd, smp, mem_mb, cmdline) + share_args()
               + list(qemu_args))
        earlier = ""
        for attempt in range(1, BOOT_ATTEMPTS + 1):
            console, timed_out, boot_hung, stalled, died_in_boot = _run_qemu(
                cmd, timeout, echo, on_start, boot_timeout)
            retry = _repeat_reason(attempt, boot_hung, stalled, boot_timeout,
                                   console if died_in_boot else None)
            if retry is None:
                break
            vm_record.repeated(retry)
            retry = f"vm: {retry}; running the VM once more\n"
            # Shown even when quiet: a repeat must never pass unseen.
            print(retry, end="", file=sys.stderr, flush=True)
            earlier += console + retry

    status, output = split_console(console)
    if earlier:  # the script's output stays its own; the console keeps all
        output = earlier.splitlines(keepends=True)[-1] + output
        console = earlier + console
    if status is None:
        if boot_hung:
            status = STATUS_TIMEOUT
            note = (f"vm: Linux did not reach the script in {boot_timeout} s, "
                    f"{BOOT_ATTEMPTS} boots in a row; QEMU killed")
        elif stalled:
            status = STATUS_TIMEOUT
            note = ("vm: a CPU of Linux stalled in a soft lockup outside Atoll's "
                    "module again (repeated at most once per test); QEMU killed")
        elif timed_out:
            status = STATUS_TIMEOUT
            note = f"vm: no exit status after {timeout} s; QEMU killed"
        else:
            status = STATUS_NO_MARKER
            note = ("vm: the VM stopped without reporting the script's exit "
                    "status (kernel panic or early power-off?)")
        output += note + "\n"
        if echo:
            print(note, file=sys.stderr, flush=True)
    # A repeated run's stall was its reason to repeat; anything else counts.
    found = (kernel_complaints.scan(earlier, but_stalls=True)
             + kernel_complaints.scan(console[len(earlier):]))
    if found and not complaints_expected:
        vm_record.complained(found)
        text = kernel_complaints.describe(found)
        output += text
        if status == 0:
            status = STATUS_COMPLAINED
        print(text, end="", file=sys.stderr, flush=True)
    res = VMResult(status, output, console)
    res.complaints = found
    return res


def _repeat_reason(attempt, boot_hung, stalled, boot_timeout, died_in_boot=None):
    """Why the run just ended should run once more, or None: a hung boot
    (before the script, so before any enclave), QEMU or Linux dying before
    Atoll's module was loaded (died_in_boot: the console then), or Linux's
    own stall in a run where no enclave was up, once per test."""
    if attempt == BOOT_ATTEMPTS:
        return None
    if boot_hung:
        return f"Linux did not reach the script in {boot_timeout} s (boot attempt {attempt} hung)"
    if died_in_boot is not None:
        last = (died_in_boot.strip().splitlines() or ["no output"])[-1]
        return f"QEMU stopped before Atoll's module was loaded ({last.strip()[:200]})"
    if stalled and not any("stalled" in r for r in vm_record.repeats_in(vm_record.current_test())):
        return ("a CPU of Linux stalled in a soft lockup outside Atoll's module, "
                "no enclave up")
    return None


def _run_qemu(cmd, timeout, echo, on_start=None, boot_timeout=None):
    """Runs QEMU, streaming its console; returns (console_text, timed_out,
    boot_hung, stalled, died_in_boot). died_in_boot: QEMU ended by itself
    before /init's BOOTED_MARKER (a QEMU assertion while Linux's virtio
    drivers probed ended one CI run). Stops QEMU at the timeout, POWEROFF_GRACE s after
    the exit marker, at boot_timeout if the script has not started by then
    (boot_hung; timed_out too), or at a soft lockup whose call trace has none
    of Atoll's module while no enclave has been up (stalled)."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if on_start:
        on_start(proc)
    chunks = []
    marker_at = []  # time the exit marker arrived, once it has
    started = []  # set once the script's start marker has arrived
    booted = []  # set once /init's BOOTED_MARKER has arrived
    lockups = []  # set once a soft lockup report has begun
    recent = [""]  # the console's last LOCKUP_WINDOW characters from the first report on
    stalled = []  # set at a lasting soft lockup outside Atoll's module
    enclave_up = []  # set once an enclave was up: no stall is Linux's alone then

    def pump():
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        tail = ""
        while True:
            data = os.read(proc.stdout.fileno(), 65536)
            text = decoder.decode(data, final=not data).replace("\r", "")
            if text:
                chunks.append(text)
                if callable(echo):
                    echo(text)
                elif echo:
                    sys.stdout.write(text)
                    sys.stdout.flush()
                # Keep a short tail: the marker may span two reads.
                tail = (tail + text)[-4096:]
                if not booted and BOOTED_MARKER in tail:
                    booted.append(True)
                if not started and START_MARKER in tail:
                    started.append(True)
                if not enclave_up and ENCLAVE_UP.search(tail):
                    enclave_up.append(True)
                if not marker_at and EXIT_RE.search(tail):
                    marker_at.append(time.monotonic())
                if not lockups and SOFT_LOCKUP in tail:
                    # From the tail: the report's first line may have begun
                    # in the read before.
                    lockups.append(True)
                    recent[0] = tail
                elif lockups and not stalled:
                    recent[0] = (recent[0] + text)[-LOCKUP_WINDOW:]
                if (lockups and not stalled and not enclave_up
                        and lockup_outside_atoll(recent[0])):
                    stalled.append(True)
            if not data:
                return

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    begun = time.monotonic()
    deadline = begun + timeout
    timed_out = boot_hung = killed = False
    try:
        while proc.poll() is None:
            now = time.monotonic()
            if marker_at and now > marker_at[0] + POWEROFF_GRACE:
                break
            if boot_timeout and not started and now > begun + boot_timeout:
                timed_out = boot_hung = True
                break
            if not marker_at and now > deadline:
                timed_out = True
                break
            if stalled and not marker_at:
                break
            time.sleep(0.1)
    finally:
        if proc.poll() is None:
            killed = True
            proc.kill()
        proc.wait()
        reader.join(5)
        proc.stdout.close()
    died_in_boot = not (killed or booted or started or marker_at)
    return "".join(chunks), timed_out, boot_hung, bool(stalled), died_in_boot


def lockup_outside_atoll(text):
    """True if `text` holds two whole soft-lockup reports (each to its
    trace's end) of one stall, one CPU stuck longer in the same task, with
    none of Atoll's module's functions in them."""
    reports = []
    for piece in text.split(SOFT_LOCKUP)[1:]:
        end = piece.find("</TASK>")
        line = LOCKUP_LINE.search(piece[:200])
        if end >= 0 and line:
            reports.append((line, piece[:end]))
    if len(reports) < 2:
        return False
    (first, a), (second, b) = reports[-2:]
    one_stall = (first.group(1, 3) == second.group(1, 3)
                 and int(second.group(2)) > int(first.group(2)))
    # "Modules linked in: atoll(OE) ..." names it in every report.
    return one_stall and "[atoll]" not in a + b


def split_console(console):
    """Returns (status or None, output) from the console text. output is
    what the script printed plus, outside the script, the kernel's lines and
    /init's messages; the markers and the power-off line are left out."""
    status, phase, out = None, "boot", []
    for line in console.splitlines(keepends=True):
        m = EXIT_RE.search(line if line.endswith("\n") else line + "\n")
        if m and phase != "done":
            if line[:m.start()]:
                out.append(line[:m.start()] + "\n")  # output had no final \n
            status, phase = int(m.group(1)), "done"
        elif phase == "boot":
            # The boot is quiet (loglevel=4): whatever shows is an error
            # from the kernel or from /init's tools (e.g. insmod's message).
            if line.startswith(START_MARKER):
                phase = "script"
            elif line.startswith(BOOTED_MARKER):
                pass
            elif line.strip():
                out.append(line)
        elif phase == "script":
            out.append(line)
        elif KERNEL_LINE.match(line) and not POWER_OFF_LINE.match(line):
            out.append(line)
    return status, "".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="shell script to run")
    ap.add_argument("--extra", help="directory copied to /extra in the guest")
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--mem", type=int, default=4096, help="MiB")
    ap.add_argument("--timeout", type=int, default=600, help="seconds")
    ap.add_argument("--append", default="", help="extra kernel parameters")
    ap.add_argument("--kernel", help="a bzImage to boot instead of Debian's kernel, "
                    "with virtio PCI and 9p built in (default: $ATOLL_VM_KERNEL)")
    ap.add_argument("--no-debug-checks", action="store_true",
                    help=f"boot without {DEBUG_CHECKS} (as the benchmarks do)")
    args = ap.parse_args()
    # On SIGTERM unwind like Ctrl-C so QEMU is killed and temp files go.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        res = run_vm(args.script, args.extra, args.smp, args.mem, args.timeout,
                     echo=True, append_extra=args.append,
                     checks=not args.no_debug_checks, kernel=args.kernel)
    except (OSError, RuntimeError) as e:
        print(e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return res.status


if __name__ == "__main__":
    sys.exit(main())
