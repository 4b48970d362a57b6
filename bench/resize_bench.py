#!/usr/bin/env python3
"""Resizing a running enclave (issue 15), in one test-VM run.
Table 5 (Pisces): a CPU and a 128 MiB block added to a running enclave and
taken back, each step's Linux part (offlining or onlining inside the
resize) and LWK part, beside Linux offlining and onlining the same CPU and
block alone. IRS: a two-thread job in a two-CPU enclave whose second CPU
is removed mid-run, against the ideal (the part done on 2 CPUs until the
removal, the rest at the 1-CPU rate measured in the same run), with the
job on 2 and on 1 CPU as baselines. Without migration the CPU could only
go once the job's thread there ended: that wait is reported beside.
The targets (bench/targets.py) put each step against Linux's own step
alone (offlining the CPU or block for an add, onlining it for a remove)
and judge every IRS run.
Writes resize-bench.{json,md,png} to --out-dir."""
import argparse
import json
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
import tables.resize  # noqa: E402
from enclave_bench import kv, sections  # noqa: E402
from program_bench import boot_guest, plan_cpus  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def med(xs):
    return statistics.median(xs)


def job(text):
    """One irs_loop run: its summary and progress samples (ns since start, units)."""
    lines = text.splitlines()
    r = kv(next(line for line in lines if line.startswith("irs: ")))
    prog = next(line for line in lines if line.startswith("irs_progress:")).split()[1:]
    r["progress"] = [tuple(int(x) for x in p.split(",")) for p in prog]
    return r


def done_at(progress, t):
    """Units done at t ns since start, interpolated between samples."""
    prev = (0, 0)
    for at, units in progress:
        if at >= t:
            span = at - prev[0]
            return prev[1] + (units - prev[1]) * ((t - prev[0]) / span if span else 1)
        prev = (at, units)
    return prev[1]


def parse(output):
    s = sections(output)
    ms = lambda ns: ns / 1e6  # noqa: E731
    res = {"table5_ms": {}}
    t5 = res["table5_ms"]
    for step in ["add_cpu", "remove_cpu", "add_block", "remove_block"]:
        runs = [json.loads(b.strip().splitlines()[-1]) for b in s[step]]
        t5[step] = {"linux": ms(med([r["linux_ns"] for r in runs])), "lwk": ms(med([r["lwk_ns"] for r in runs])),
                    "total": ms(med([r["linux_ns"] + r["lwk_ns"] for r in runs])), "rounds": len(runs)}
    for kind in ["cpu", "block"]:
        alone = [kv(b.strip()) for b in s[f"linux_{kind}"]]
        t5[f"linux_{kind}"] = {"offline": ms(med([a["offline_ns"] for a in alone])),
                               "online": ms(med([a["online_ns"] for a in alone])),
                               "online_after_pause": ms(med([a["online_after_pause_ns"] for a in alone]))}
    two = [job(b) for b in s["irs_two"]]
    one = [job(b) for b in s["irs_one"]]
    removed = []
    for b in s["irs_removed"]:
        r = job(b)
        ev = kv(next(line for line in b.splitlines() if line.startswith("removed_real_ns=")))
        answer = json.loads(next(line for line in b.splitlines() if line.startswith("{")))
        r["removed_at_ns"] = ev["removed_real_ns"] - r["start_real_ns"]
        r["asked_at_ns"] = ev["asked_real_ns"] - r["start_real_ns"]
        r["remove_ms"] = ms(answer["linux_ns"] + answer["lwk_ns"])
        r["remove_lwk_ms"] = ms(answer["lwk_ns"])
        removed.append(r)
    total = 2 * two[0]["units"]
    t_one = med([j["elapsed_ns"] for j in one])
    t_two = med([j["elapsed_ns"] for j in two])
    for r in removed:
        if r["removed_at_ns"] >= r["elapsed_ns"]:
            sys.exit("resize_bench: the job ended before the CPU was removed: raise --units")
        # The ideal: what was done by the removal on 2 CPUs, the rest at the 1-CPU rate.
        left = total - done_at(r["progress"], r["removed_at_ns"])
        r["ideal_ns"] = r["removed_at_ns"] + left / total * t_one
        r["vs_ideal"] = r["elapsed_ns"] / r["ideal_ns"]
        # Without migration the CPU is free only once the job's thread there ends.
        r["wait_without_migration_ms"] = ms(max(t_two - r["removed_at_ns"], 0))
    res["irs"] = {"two_cpus_ms": ms(t_two), "one_cpu_ms": ms(t_one),
                  "removed_ms": ms(med([r["elapsed_ns"] for r in removed])),
                  "ideal_ms": ms(med([r["ideal_ns"] for r in removed])),
                  "vs_ideal": med([r["vs_ideal"] for r in removed]),
                  "vs_ideal_runs": [r["vs_ideal"] for r in removed],
                  "removed_at_ms": ms(med([r["removed_at_ns"] for r in removed])),
                  "remove_ms": med([r["remove_ms"] for r in removed]),
                  "remove_lwk_ms": med([r["remove_lwk_ms"] for r in removed]),
                  "wait_without_migration_ms": med([r["wait_without_migration_ms"] for r in removed]),
                  "runs": len(removed),
                  "each_run": [{k: r[k] for k in ["elapsed_ns", "ideal_ns", "vs_ideal", "removed_at_ns",
                                                  "asked_at_ns", "remove_ms", "remove_lwk_ms", "progress"]}
                               for r in removed]}
    res["progress"] = {"two": two[0]["progress"], "one": one[0]["progress"], "removed": removed[0]["progress"],
                       "removed_at_ns": removed[0]["removed_at_ns"], "asked_at_ns": removed[0]["asked_at_ns"]}
    return res


def table(doc):
    """The driver's own summary: the run's knobs, then the README's tables."""
    c = doc["config"]
    return (f"One VM run: {c['ROUNDS']} rounds of each step; IRS with {c['UNITS']} work quanta per thread, "
            f"2 threads, in a 2-CPU enclave, the second CPU removed {c['REMOVE_AFTER_MS']} ms after both began, "
            f"{c['RUNS']} runs of each case, interleaved.\n\n" + tables.resize.render({tables.resize.STEM: doc}))


def plot(res, path):
    plt = pyplot("resize_bench")
    if plt is None:
        return
    fig, ax = plt.subplots(figsize=(8, 4.5))
    p = res["progress"]
    for key, label in [("two", "2 CPUs"), ("one", "1 CPU"), ("removed", "2 CPUs, one removed")]:
        ax.plot([at / 1e9 for at, _ in p[key]], [u for _, u in p[key]], label=label)
    ax.axvline(p["asked_at_ns"] / 1e9, color="grey", linestyle=":", label="atoll remove asked")
    ax.axvline(p["removed_at_ns"] / 1e9, color="grey", linestyle="--",
               label="atoll remove done (CPU back in Linux)")
    ax.set_xlabel("time since the job started (s)")
    ax.set_ylabel("work quanta done (both threads)")
    ax.set_title("IRS: a job keeps going when its enclave loses a CPU")
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=RESULTS)
    ap.add_argument("--rounds", type=int, default=5, help="Table 5 rounds")
    ap.add_argument("--runs", type=int, default=3, help="IRS runs of each case")
    ap.add_argument("--units", type=int, default=8000, help="work quanta per thread")
    ap.add_argument("--remove-after-ms", type=int, default=1500)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    config = {"ROUNDS": args.rounds, "RUNS": args.runs, "UNITS": args.units,
              "REMOVE_AFTER_MS": args.remove_after_ms}
    # The enclave's CPUs (guest 2 and 3) each alone on a host CPU where there are enough.
    output = boot_guest("resize_bench", "resize_guest.sh", config, plan_cpus(2), args.timeout, args.quiet)
    res = parse(output)
    doc = {"config": config, "results": res}
    # The targets, as bench/targets.py defines them, judged on this run.
    doc["targets"] = records(tables.resize.STEM, doc)
    print("\n" + save_results(args.out_dir, tables.resize.STEM, table, doc, lambda path: plot(res, path)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
