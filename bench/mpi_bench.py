#!/usr/bin/env python3
"""MPI jobs in an enclave vs on Linux, in one test-VM run, with Debian's
Open MPI over shared memory (btl self,vader): ping-pong latency and
bandwidth (8 B .. 4 MiB) between two ranks on the same two vCPUs, a CG
solve (two allreduces per iteration) on them with Linux's other CPUs busy
(worst/best and mean of RUNS solves), and the start-up time of a 4-rank
job, and the kernel's copy under the single-copy path alone
(process_vm_readv). Prints ratios against the same run's Linux figures; writes
mpi-bench.{json,md,png} to --out-dir (default bench/results)."""
import argparse
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
from plotting import pyplot  # noqa: E402
from saving import save_results  # noqa: E402
from targets import records  # noqa: E402
from tables.render import verdicts  # noqa: E402
from enclave_bench import kv, sections  # noqa: E402
from program_bench import boot_guest, plan_cpus, runs_stats  # noqa: E402

RESULTS = os.path.join(HERE, "results")
SIDES = ["linux", "enclave"]
# The first of the two measured guest CPUs (the last two of four).
FIRST = 2


def parse(output):
    s = {name: blocks[0] for name, blocks in sections(output).items()}
    res = {}
    for side in SIDES:
        pp = [kv(line) for line in s[f"{side}_pingpong"].splitlines() if line.startswith("mpi_pingpong:")]
        cg = [kv(line)["seconds"] for line in s[f"{side}_cg_busy"].splitlines() if line.startswith("mpi_cg:")]
        st = [kv(line)["seconds"] for line in s[f"{side}_start"].splitlines() if line.startswith("start:")]
        cma = [kv(line) for line in s[f"{side}_cma"].splitlines() if line.startswith("cma_copy:")]
        res[side] = {
            "pingpong": {int(p["bytes"]): {"half_rtt_ns": p["half_rtt_ns"], "mb_per_s": p["mb_per_s"]} for p in pp},
            "cg_busy": runs_stats(cg),
            "start": {"seconds": st, "median": statistics.median(st)},
            "cma_cycles": {int(c["bytes"]): c["cycles"] for c in cma},
        }
    return res


def table(res, config):
    L, E = res["linux"], res["enclave"]
    lines = [f"One VM run; two ranks on guest CPUs {FIRST}-{FIRST + 1}, on Linux and then in a two-CPU enclave "
             "there (Open MPI 4.1, btl self,vader); medians.", "",
             "| message | Linux latency | enclave | ratio | Linux MB/s | enclave MB/s | ratio |",
             "|---|---|---|---|---|---|---|"]
    for b in sorted(L["pingpong"]):
        lp, ep = L["pingpong"][b], E["pingpong"][b]
        lines.append(f"| {b} B | {lp['half_rtt_ns'] / 1000:.1f} µs | {ep['half_rtt_ns'] / 1000:.1f} µs | "
                     f"{ep['half_rtt_ns'] / lp['half_rtt_ns']:.2f}x | {lp['mb_per_s']:.0f} | {ep['mb_per_s']:.0f} | "
                     f"{ep['mb_per_s'] / lp['mb_per_s']:.2f}x |")
    lines += ["", "| process_vm_readv alone (the kernel's copy, best of 9) "
              "| Linux cycles | enclave | enclave / Linux |",
              "|---|---|---|---|"]
    for b in sorted(L["cma_cycles"]):
        l, e = L["cma_cycles"][b], E["cma_cycles"][b]
        lines.append(f"| {b} B | {l:.0f} | {e:.0f} | {e / l:.2f}x |")
    lines += ["", f"| CG, {config['RUNS']} solves, Linux's other CPUs busy | Linux | enclave | enclave / Linux |",
              "|---|---|---|---|"]
    for key, label in [("mean", "mean s"), ("best", "best s"), ("worst", "worst s"),
                       ("worst_over_best", "worst / best")]:
        l, e = L["cg_busy"][key], E["cg_busy"][key]
        lines.append(f"| {label} | {l:.3f} | {e:.3f} | {e / l:.2f}x |")
    l, e = L["start"]["median"], E["start"]["median"]
    lines += ["", "| 4-rank job start-up (MPI_Init + barrier + Finalize, median) | Linux | enclave | ratio |",
              "|---|---|---|---|", f"| seconds | {l:.2f} | {e:.2f} | {e / l:.2f}x |"]
    lines += ["", verdicts("mpi-bench", {"config": config, "results": res})]
    return "\n".join(lines)


def plot(res, path):
    plt = pyplot("mpi_bench")
    if plt is None:
        return
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(13, 3.8))
    for side in SIDES:
        sizes = sorted(res[side]["pingpong"])
        a.plot(sizes, [res[side]["pingpong"][s]["half_rtt_ns"] / 1000 for s in sizes], marker="o", label=side)
        b.plot(sizes, [res[side]["pingpong"][s]["mb_per_s"] for s in sizes], marker="o", label=side)
    for ax, label in [(a, "one-way latency, µs"), (b, "bandwidth, MB/s")]:
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message bytes")
        ax.set_ylabel(label)
        ax.legend()
    c.boxplot([res[side]["cg_busy"]["seconds"] for side in SIDES])
    c.set_xticks([1, 2], ["Linux", "enclave"])
    c.set_ylabel("CG solve, s (other CPUs busy)")
    fig.suptitle("MPI (Open MPI, 2 ranks, shared memory): enclave vs Linux on the same vCPUs")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=RESULTS)
    ap.add_argument("--cells", type=int, default=20000, help="CG cells per rank")
    ap.add_argument("--iterations", type=int, default=100, help="CG iterations per solve")
    ap.add_argument("--runs", type=int, default=10, help="CG solves")
    ap.add_argument("--starts", type=int, default=5, help="timed 4-rank start-ups per side")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    config = {"FIRST": FIRST, "CELLS": args.cells, "ITERATIONS": args.iterations, "RUNS": args.runs,
              "STARTS": args.starts}
    output = boot_guest("mpi_bench", "mpi_guest.sh", config, plan_cpus(2), args.timeout, args.quiet)
    res = parse(output)
    text = table(res, config)
    print("\n" + text)
    doc = {"config": config, "results": res}
    doc["targets"] = records("mpi-bench", doc)  # as bench/targets.py judges this run
    save_results(args.out_dir, "mpi-bench", text, doc,
                 lambda path: plot(res, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
