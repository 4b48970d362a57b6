#!/usr/bin/env python3
"""Where enclave CPUs spend their time: boots the test VM with a guest script
and samples chosen vCPUs through QEMU's monitor (RIP, and the stack for
callers) while the script runs between the lines `=== profile start` and
`=== profile stop` (or all of it). LWK addresses are named from the kernel
image's symbols. Prints, per CPU, the share halted, in user mode, in Linux,
and in each LWK function with its most common callers.

  python3 scripts/vcpu_profile.py --script guest.sh --extra DIR --cpus 2,3

A sample is not one snapshot: the stack is read a monitor round trip after
the registers, so callers can come from a later frame; function shares are
sound, caller chains a hint."""
import argparse
import bisect
import collections
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import vm  # noqa: E402

LWK_HALF = 0xffff80  # top 24 bits of the LWK's addresses (KERNEL_OFFSET)
LINK_BASE = 0xffff800000200000  # where the image is linked; loads keep the 2 MiB offset


class Monitor:
    """QEMU's human monitor on a Unix socket, one command at a time."""

    def __init__(self, path):
        for _ in range(300):
            if os.path.exists(path):
                break
            time.sleep(0.1)
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.sock.settimeout(5)
        self.read_to_prompt()  # QEMU's greeting

    def read_to_prompt(self):
        out = b""
        while not out.endswith(b"(qemu) "):
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("monitor closed")
            out += chunk
        return out.decode(errors="replace")

    def command(self, text):
        self.sock.sendall(text.encode() + b"\n")
        return self.read_to_prompt()


def sample(mon, cpus, image_size):
    """[(cpu, rip, user, halted, stack words in the LWK's image)] for `cpus`."""
    out = []
    for block in mon.command("info registers -a").split("\nCPU#")[1:]:
        cpu = int(re.match(r"(\d+)", block).group(1))
        if cpu not in cpus:
            continue
        rip = int(re.search(r"RIP=([0-9a-f]+)", block).group(1), 16)
        rsp = re.search(r"RSP=([0-9a-f]+)", block).group(1)
        user = re.search(r"CPL=3", block) is not None
        halted = re.search(r"HLT=1", block) is not None
        stack = []
        if rip >> 40 == LWK_HALF and not halted:
            mon.command(f"cpu {cpu}")
            dump = mon.command(f"x /48gx 0x{rsp}")
            # Only the memory lines (the monitor echoes the command too), and
            # only words inside this kernel's image (not heap or stack pointers).
            words = [int(w, 16) for line in dump.splitlines() if re.match(r"^[0-9a-f]+:", line)
                     for w in re.findall(r"0x([0-9a-f]{16})", line)]
            base = rip & ~((2 << 20) - 1)
            stack = [w for w in words if base <= w < base + image_size]
        out.append((cpu, rip, user, halted, stack))
    return out


class Symbols:
    def __init__(self, image):
        names = subprocess.run(["nm", "-C", "-n", image], capture_output=True, text=True, check=True)
        # Every symbol, so that a stack word pointing at data names data, not code.
        self.table = []
        for line in names.stdout.splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and len(parts[0]) == 16:
                self.table.append((int(parts[0], 16), parts[1] in "tTwW", parts[2]))
        self.addrs = [a for a, _, _ in self.table]
        end = max(a for a, _, n in self.table if n.endswith("__image_end"))
        # Names come from an address's offset in its 2 MiB block: the image must fit in one.
        self.size = end - LINK_BASE
        if not 0 < self.size <= 2 << 20:
            raise SystemExit(f"vcpu_profile: {image}: image of {self.size} bytes; expected up to 2 MiB")

    def name(self, rip):
        """The function `rip` is in, or None if it is not code of the image."""
        # Each enclave's image sits at its own 2 MiB-aligned place, linked at LINK_BASE.
        linked = LINK_BASE + (rip & ((2 << 20) - 1))
        i = bisect.bisect_right(self.addrs, linked) - 1
        if i < 0 or not self.table[i][1] or self.table[i][0] < LINK_BASE:
            return None
        return self.table[i][2]


def report(samples, cpus, symbols, top):
    for cpu in cpus:
        mine = [s for s in samples if s[0] == cpu]
        if not mine:
            print(f"CPU {cpu}: no samples")
            continue
        where = collections.Counter()
        callers = collections.defaultdict(collections.Counter)
        for _, rip, user, halted, stack in mine:
            if halted:
                where["(halted)"] += 1
            elif user:
                where["(user mode)"] += 1
            elif rip >> 40 != LWK_HALF:
                where["(Linux)"] += 1
            else:
                fn = symbols.name(rip) or "?"
                where[fn] += 1
                chain = []
                for word in stack:
                    caller = symbols.name(word)
                    if caller and caller not in chain and caller != fn:
                        chain.append(caller)
                callers[fn][" < ".join(c[:50] for c in chain[:3])] += 1
        print(f"CPU {cpu}: {len(mine)} samples")
        for fn, n in where.most_common(top):
            print(f"  {100 * n / len(mine):5.1f}%  {fn[:90]}")
            for chain, m in callers[fn].most_common(2):
                if chain:
                    print(f"            {100 * m / n:3.0f}% from {chain}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--script", required=True, help="guest shell script")
    ap.add_argument("--extra", help="directory copied to /extra in the guest")
    ap.add_argument("--cpus", default="2,3", help="guest CPUs to sample")
    ap.add_argument("--kernel", default=os.path.join(HERE, "..", "build", "atoll-kernel"),
                    help="the LWK image the enclaves run (for names)")
    ap.add_argument("--interval", type=float, default=0.002, help="seconds between samples")
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--timeout", type=int, default=900)
    args = ap.parse_args()
    cpus = [int(c) for c in args.cpus.split(",")]
    symbols = Symbols(args.kernel)
    with open(args.script) as f:
        marked = "=== profile start" in f.read()
    window = threading.Event()
    if not marked:
        window.set()
    done = threading.Event()
    samples = []

    recent = [""]

    def on_console(text):
        # A marker may arrive split across two pieces.
        seen = recent[0] + text
        recent[0] = seen[-64:]
        if "=== profile start" in seen:
            window.set()
        if "=== profile stop" in seen:
            window.clear()
            done.set()

    with tempfile.TemporaryDirectory(prefix="atoll-prof-") as tmp:
        path = os.path.join(tmp, "monitor.sock")

        def sampler(proc):
            try:
                mon = Monitor(path)
                while proc.poll() is None and not done.is_set():
                    if window.is_set():
                        samples.extend(sample(mon, cpus, symbols.size))
                    time.sleep(args.interval)
            except (OSError, EOFError) as e:
                if proc.poll() is None:
                    print(f"vcpu_profile: sampling stopped: {e}", file=sys.stderr)

        res = vm.run_vm(args.script, extra_dir=args.extra, timeout=args.timeout, echo=on_console,
                        qemu_args=["-monitor", f"unix:{path},server,nowait"],
                        on_start=lambda proc: threading.Thread(target=sampler, args=(proc,),
                                                               daemon=True).start())
    print(f"vcpu_profile: guest script exited {res.status}; {len(samples)} samples")
    if res.status != 0:
        print(res.output[-2000:])
    report(samples, cpus, symbols, args.top)
    return 0 if res.status == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
