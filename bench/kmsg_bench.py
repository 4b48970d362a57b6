#!/usr/bin/env python3
"""Message round trips (issue 11; Popcorn's Tables 6.x analogues) in one
test-VM run: `atoll kmsg-bench` from Linux to an LWK and from one LWK to
another, each mode next to its floor between the same two CPUs: messages
with both sides polling against a cache line bounced (a one-slot message,
which is Popcorn's 64-byte message: its head and 48 payload bytes fill one
cache line; and a 64-byte payload, two slots), a 64-byte message with
interrupts against a bare IPI and one back. Targets (bench/targets.py): the
64-byte message polling within 2x of the cache line, with interrupts
within 1.2x of the bare IPI. Linux's side runs
on CPU 0, where the LWKs' messages and bare IPIs arrive. Each measured pair
of vCPUs has a host CPU each (0 and 2 on one, 3 on the other); the rest of
QEMU floats.
Writes kmsg-bench.{json,md,png} to --out-dir (default bench/results)."""
import argparse
import json
import os
import statistics
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
import vm  # noqa: E402
from plotting import pyplot  # noqa: E402
from pinning import pin_vcpus  # noqa: E402
from saving import save_results  # noqa: E402
from targets import records  # noqa: E402
import tables.kmsg  # noqa: E402

# The modes and the pairs of CPUs, as the README's tables name them.
MODES, PAIRS = tables.kmsg.MODES, tables.kmsg.PAIRS

GUEST = r'''
atoll create --cpus 3-3 --mem 128M --name a --kernel /lib/atoll/atoll-kernel-test > /dev/null || exit 2
atoll create --cpus 2-2 --mem 128M --name b --kernel /lib/atoll/atoll-kernel-test > /dev/null || exit 3
for r in $(seq $REPEATS); do
    echo "progress: repeat $r of $REPEATS" >&2
    taskset -c 0 atoll --json kmsg-bench a --rounds $ROUNDS | sed 's/^/linux_lwk /' || exit 4
    atoll --json kmsg-bench b --from a --rounds $ROUNDS | sed 's/^/lwk_lwk /' || exit 5
done
for size in $STREAM_SIZES; do
    echo "progress: stream of $size-byte messages" >&2
    taskset -c 0 atoll --json kmsg-bench a --rounds $STREAM_ROUNDS --stream-size $size | sed 's/^/stream /' || exit 7
done
atoll destroy a > /dev/null && atoll destroy b > /dev/null || exit 6
echo "=== done"
'''


def run_pinned(script, name, timeout=600, files=None):
    """Runs `script` in the test VM with the measured vCPUs 0, 2 and 3 pinned:
    2 and 3 on a host CPU each, 0 beside 2 (they are never measured at once)."""
    host = sorted(os.sched_getaffinity(0))
    alone = [host[0], host[0], host[-1]] if len(host) >= 2 else None
    stop = threading.Event()
    res = vm.run_vm(script, checks=False, timeout=timeout, echo=False, files=files,
                    qemu_args=["-name", f"{name},debug-threads=on"],
                    on_start=lambda proc: threading.Thread(
                        target=pin_vcpus, args=(proc, [0, 2, 3], alone, host, stop), daemon=True).start())
    stop.set()
    return res


def run(args):
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "run.sh")
        with open(script, "w") as f:
            f.write(f"REPEATS={args.repeats}\nROUNDS={args.rounds}\nSTREAM_ROUNDS={args.stream_rounds}\n"
                    f"STREAM_SIZES='4096 16384 65536'\n{GUEST}")
        print(f"kmsg_bench: booting the test VM, {args.repeats} repeats of {args.rounds} round trips per mode",
              flush=True)
        res = run_pinned(script, "atoll-kmsg-bench", args.timeout)
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"kmsg_bench: the VM run failed (status {res.status}):\n{res.output[-3000:]}")
    runs = {pair: [] for pair, _ in PAIRS}
    runs["stream"] = []
    for line in res.output.splitlines():
        pair, _, rest = line.partition(" ")
        if pair in runs and rest.startswith("{"):
            runs[pair].append(json.loads(rest))
    return runs


def summarize(runs):
    """{pair: {mode: {median_us, spread: [min, max] of the repeats' medians}, ratios},
    "stream": [{size, mb_per_s, memcpy_mb_per_s}]}"""
    out = {"stream": [r["stream"] for r in runs["stream"]]}
    for pair, _ in PAIRS:
        reps = runs[pair]
        modes = {}
        for mode, _ in MODES:
            medians = [r["modes"][mode]["median_ns"] / 1000 for r in reps if r["modes"][mode]["error"] == 0]
            modes[mode] = {"median_us": statistics.median(medians), "spread_us": [min(medians), max(medians)]}
        poll = modes["kmsg_poll"]["median_us"] / modes["line"]["median_us"]
        slot = modes["slot_poll"]["median_us"] / modes["line"]["median_us"]
        ipi = modes["kmsg_ipi"]["median_us"] / modes["ipi"]["median_us"]
        out[pair] = {"modes": modes, "poll_vs_line": poll, "slot_poll_vs_line": slot, "ipi_msg_vs_ipi": ipi}
    return out


def markdown(doc):
    """The README's tables and verdicts for this run (bench/tables/kmsg.py)."""
    results = {tables.kmsg.STEM: doc}
    return (tables.kmsg.round_trips(results) + "\n\nLinux -> LWK streams of large messages:\n\n"
            + tables.kmsg.streams(results))


def plot(summary, path):
    plt = pyplot("kmsg_bench")
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.38
    for i, (pair, label) in enumerate(PAIRS):
        values = [summary[pair]["modes"][m]["median_us"] for m, _ in MODES]
        ax.bar([x + i * width for x in range(len(MODES))], values, width, label=label)
    ax.set_xticks([x + width / 2 for x in range(len(MODES))], [label.replace(", ", ",\n") for _, label in MODES],
                  fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("round trip, µs (median, log scale)")
    ax.set_title("kmsg round trips next to their floors (QEMU TCG)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--stream-rounds", type=int, default=1000, help="messages in each stream")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--out-dir", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    runs = run(args)
    summary = summarize(runs)
    doc = {"args": vars(args), "summary": summary, "runs": runs}
    doc["targets"] = records(tables.kmsg.STEM, doc)  # as bench/targets.py judges this run
    print(save_results(args.out_dir, tables.kmsg.STEM, markdown, doc, lambda path: plot(summary, path)))


if __name__ == "__main__":
    main()
