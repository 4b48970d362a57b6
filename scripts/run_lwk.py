#!/usr/bin/env python3
"""Boot the Atoll LWK standalone under QEMU (TCG) and turn its verdict into an
exit status: 0 = the kernel reported success, 1 = it reported failure or QEMU
ended without a verdict, 124 = it did not finish before the timeout (killed).

The kernel reports through QEMU's isa-debug-exit device (port 0xf4): QEMU
then exits with 33 for pass and 35 for fail.
"""
import argparse
import subprocess
import sys
import threading

QEMU_PASS, QEMU_FAIL = 33, 35


def qemu_command(kernel, smp, mem_mb, cmdline, cpu=None, icount=False, accel="tcg"):
    cmd = [
        "qemu-system-x86_64", "-machine", "q35", "-accel", accel,
        "-kernel", kernel, "-append", cmdline,
        "-smp", str(smp), "-m", f"{mem_mb}M",
        "-display", "none", "-monitor", "none", "-serial", "stdio",
        "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
        "-no-reboot",
    ]
    if cpu:
        cmd += ["-cpu", cpu]
    if icount:
        cmd += ["-icount", "shift=auto"]
    return cmd


def run(kernel, smp=4, mem_mb=512, cmdline="", timeout=120, cpu=None,
        icount=False, echo=True, accel="tcg"):
    """Boots the kernel; returns (status, console_text). status: 'pass',
    'fail', 'timeout', or 'exit N' when QEMU ended without a verdict."""
    proc = subprocess.Popen(
        qemu_command(kernel, smp, mem_mb, cmdline, cpu, icount, accel),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT)
    lines = []

    def pump():
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace").replace("\r", "")
            lines.append(line)
            if echo:
                sys.stdout.write(line)
                sys.stdout.flush()

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        reader.join(5)
        return "timeout", "".join(lines)
    reader.join(5)
    status = {QEMU_PASS: "pass", QEMU_FAIL: "fail"}.get(code, f"exit {code}")
    return status, "".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="build/atoll-kernel-test")
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--mem", type=int, default=512, help="MiB")
    ap.add_argument("--cmdline", default="")
    ap.add_argument("--timeout", type=int, default=120, help="seconds")
    ap.add_argument("--cpu", help="QEMU -cpu model (default: QEMU's)")
    ap.add_argument("--icount", action="store_true",
                    help="deterministic instruction-count time")
    args = ap.parse_args()
    status, _ = run(args.kernel, args.smp, args.mem, args.cmdline,
                    args.timeout, args.cpu, args.icount)
    if status == "pass":
        return 0
    if status == "timeout":
        print(f"run_lwk: no verdict after {args.timeout} s; QEMU killed",
              file=sys.stderr)
        return 124
    print(f"run_lwk: kernel verdict: {status}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
