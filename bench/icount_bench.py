#!/usr/bin/env python3
"""Per-call cost of a delegated call (1-byte write to /dev/null) and of a
local one (getpid) in an enclave, under QEMU -icount: guest time counts
instructions, so the figures repeat from run to run whatever else the host
runs. For before/after comparisons of the LWK path; it cannot show cache,
TLB or real-time spin effects. Two vCPUs; Linux 6.1 hangs bringing up a
second CPU at boot under -icount, so the VM boots with one and onlines the
other, which the enclave then takes.
  python3 bench/icount_bench.py [--tree DIR] [--shift 4] [--boots 2]
--tree: a worktree built with `make kernel module cli` (default: this one)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

GUEST = r'''
echo 1 > /sys/devices/system/cpu/cpu1/online || exit 1
atoll create --cpus 1 --mem 512M --name bench > /dev/null || exit 2
for r in $(seq $ROUNDS); do
    echo "=== devnull"; atoll run bench -- /extra/devnull $DEVNULL_CALLS $REPS || exit 3
    echo "=== getpid"; atoll run bench -- /extra/getpid $GETPID_CALLS $REPS || exit 4
done
atoll destroy bench > /dev/null || exit 5
'''


def medians(console):
    """{program: [median ns per call of each run]}"""
    out, name = {}, None
    for line in console.splitlines():
        m = re.match(r"=== (\w+)", line)
        if m:
            name = m.group(1)
        m = re.search(r"median_ns=([\d.]+)", line)
        if m and name:
            out.setdefault(name, []).append(float(m.group(1)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=ROOT)
    ap.add_argument("--shift", type=int, default=4, help="-icount shift: 2^N ns per instruction")
    ap.add_argument("--boots", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2, help="runs of each program per boot")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--devnull-calls", type=int, default=200)
    ap.add_argument("--getpid-calls", type=int, default=20000)
    a = ap.parse_args()
    sys.path.insert(0, os.path.join(a.tree, "scripts"))
    import vm  # the tree's own test VM
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([os.path.join(ROOT, "scripts", "build-programs.sh"), tmp, "bench"], check=True)
        script = os.path.join(tmp, "run.sh")
        with open(script, "w") as f:
            f.write(f"ROUNDS={a.rounds}\nREPS={a.reps}\nDEVNULL_CALLS={a.devnull_calls}\n"
                    f"GETPID_CALLS={a.getpid_calls}\n{GUEST}")
        for boot in range(a.boots):
            print(f"icount_bench: boot {boot + 1} of {a.boots} (-icount shift={a.shift})", flush=True)
            res = vm.run_vm(script, checks=False, extra_dir=tmp, smp=2, timeout=900, echo=False,
                            qemu_args=["-icount", f"shift={a.shift},sleep=off"], append_extra="maxcpus=1",
                            boot_timeout=None)  # boots slowly under -icount
            if res.status != 0:
                sys.exit(f"icount_bench: the VM script failed ({res.status}):\n{res.output[-2000:]}")
            for prog, values in medians(res.console).items():
                results.setdefault(prog, []).extend(values)
    for prog, values in sorted(results.items()):
        print(f"{prog}: median {statistics.median(values):.1f} ns per call over {len(values)} runs "
              f"(min {min(values):.1f}, max {max(values):.1f}) in guest time at shift {a.shift}")


if __name__ == "__main__":
    main()
