#!/usr/bin/env python3
"""Run the LWK's in-kernel benchmarks (`bench` on the kernel command line)
under QEMU and turn their `result ...` lines into bench/results/lwk-bench.json,
a markdown table (printed, and saved as lwk-bench.md) and a plot of the lock
comparison (lwk-locks.png)."""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
import run_lwk  # noqa: E402
from plotting import pyplot  # noqa: E402
from saving import save_results  # noqa: E402

RESULT = re.compile(r"^result (\S+) (.*)$")


def parse(console):
    results = {}
    for line in console.splitlines():
        m = RESULT.match(line.strip())
        if not m:
            continue
        fields = {}
        for key, value in re.findall(r"(\w+)=(\[[^\]]*\]|\S+)", m.group(2)):
            if value.startswith("["):
                fields[key] = [int(v) for v in value[1:-1].split(",") if v.strip()]
            else:
                try:
                    fields[key] = float(value) if "." in value else int(value)
                except ValueError:
                    fields[key] = value
        results[m.group(1)] = fields
    return results


def table(results):
    rows = ["| measurement | median | mean | min | max |", "|---|---|---|---|---|"]
    for name, r in results.items():
        if r.get("unit") == "ns":
            rows.append(f"| {name} | {r['median']/1000:.1f} µs | {r['mean']/1000:.1f} µs "
                        f"| {r['min']/1000:.1f} µs | {r['max']/1000:.1f} µs |")
    locks = {n: r for n, r in results.items() if n.startswith("lock_")}
    if locks:
        rows += ["", "| lock (fairbench, one thread per vCPU) | acquisitions/s | Jain's index | per-thread counts |",
                 "|---|---|---|---|"]
        for name, r in locks.items():
            rows.append(f"| {name[5:]} | {r['throughput']:.0f} | {r['jain']:.3f} | {r['per_thread']} |")
        base = locks.get("lock_ticket")
        if base:
            for name, r in locks.items():
                if name != "lock_ticket":
                    rows.append(f"\n{name[5:]} / ticket throughput: {r['throughput']/base['throughput']:.2f}x")
    return "\n".join(rows)


def plot(results, path):
    plt = pyplot("lwk_bench")
    if plt is None:
        return
    locks = [(n[5:], r) for n, r in results.items() if n.startswith("lock_")]
    if not locks:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.5))
    names = [n.replace("pmtlock_tau", "pmt τ=").replace("pmtlock", "pmt (default)")
             for n, _ in locks]
    a.bar(names, [r["throughput"] for _, r in locks], color="tab:blue")
    a.set_yscale("log")
    a.set_ylabel("acquisitions / s (log)")
    a.set_title("fairbench throughput")
    b.bar(names, [r["jain"] for _, r in locks], color="tab:green")
    b.set_ylim(0, 1.05)
    b.axhline(0.9, ls="--", color="gray")
    b.set_title("Jain's fairness index")
    for ax in (a, b):
        ax.tick_params(axis="x", labelrotation=35, labelsize=8)
    fig.suptitle("LWK locks, 4 vCPUs on 2 host cores (QEMU TCG)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def replot(out):
    """Redraws the plot from a saved JSON (no QEMU run)."""
    with open(os.path.join(out, "lwk-bench.json")) as f:
        plot(json.load(f)["results"], os.path.join(out, "lwk-locks.png"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default="build/atoll-kernel-test")
    ap.add_argument("--smp", type=int, default=4)
    ap.add_argument("--cmdline", default="bench", help="kernel command line (add pmt_tau=N to tune)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--replot", action="store_true", help="redraw the plot from the saved JSON")
    args = ap.parse_args()
    if args.replot:
        replot(args.out)
        return 0
    status, console = run_lwk.run(args.kernel, smp=args.smp, cmdline=args.cmdline,
                                  timeout=args.timeout)
    results = parse(console)
    if status != "pass" or not results:
        print(f"lwk_bench: the benchmark run did not finish cleanly ({status})", file=sys.stderr)
        return 1
    md = save_results(args.out, "lwk-bench", table(results),
                      {"smp": args.smp, "cmdline": args.cmdline, "results": results},
                      lambda path: plot(results, path), plot_name="lwk-locks.png")
    print("\n" + md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
