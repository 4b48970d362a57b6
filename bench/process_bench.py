#!/usr/bin/env python3
"""Processes in an enclave vs on Linux, in one test-VM run, on the same vCPU
(alone on a host CPU when the host has two): pthread_create + join,
fork + exit + wait, posix_spawn + wait from a program holding 64 MiB
(a vfork child: it runs on the parent's memory until it execs), a signal round trip (kill self, handler, sigreturn),
and two CPU-bound programs sharing the one core (each should get half;
pairs between runs alone, medians of the rounds; again in a second VM
under -icount, whose figures the host's load cannot move).
Prints ratios against the same run's Linux figures; writes
process-bench.{json,md,png} to --out-dir (default bench/results)."""
import argparse
import os
import statistics
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
from plotting import pyplot  # noqa: E402
from saving import save_results  # noqa: E402
from targets import records  # noqa: E402
from tables.render import verdicts  # noqa: E402
from enclave_bench import kv, sections  # noqa: E402
from program_bench import boot_guest, host_sized_guest, plan_cpus  # noqa: E402

RESULTS = os.path.join(HERE, "results")
SIDES = ["linux", "enclave"]
PER_CALL = [("threads", "thread_create", "ns_per_thread", "pthread_create + join"),
            ("fork", "fork_wait", "ns_per_fork", "fork + exit + wait"),
            ("spawn", "spawn_wait", "ns_per_spawn", "posix_spawn + wait from a 64 MiB program"),
            ("signal", "signal_rtt", "ns_per_signal", "signal round trip")]
# -icount shift: 2^N ns of guest time per instruction.
ICOUNT_SHIFT = 4


def run_vm(args, cpus):
    guest_vars = {"ONE": cpus[0][-1], "REPS": args.reps, "THREADS": args.threads, "FORKS": args.forks,
                  "SPAWNS": args.spawns,
                  "SIGNALS": args.signals, "SECONDS": args.seconds, "SHARE_ROUNDS": args.share_rounds}
    return guest_vars, boot_guest("process_bench", ["process_share.sh", "process_guest.sh"], guest_vars, cpus,
                                  args.timeout, args.quiet)


def run_icount_vm(args):
    """The CPU-share pairs under -icount (process_share_icount.sh); its
    output, which must end with "=== done"."""
    import subprocess
    import tempfile
    import vm
    with tempfile.TemporaryDirectory() as extra:
        subprocess.run([os.path.join(ROOT, "scripts", "build-programs.sh"), extra, "bench"], check=True)
        script = os.path.join(extra, "run.sh")
        with open(script, "w") as f:
            f.write(f'SECONDS="{args.seconds}"\nSHARE_ROUNDS="{args.share_rounds}"\n')
            for name in ["process_share.sh", "process_share_icount.sh"]:
                with open(os.path.join(HERE, name)) as g:
                    f.write(g.read())
        print(f"process_bench: the CPU share under -icount shift={ICOUNT_SHIFT}", flush=True)
        res = vm.run_vm(script, checks=False, extra_dir=extra, smp=2, timeout=args.timeout, echo=False,
                        qemu_args=["-icount", f"shift={ICOUNT_SHIFT},sleep=off"], append_extra="maxcpus=1")
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"process_bench: the -icount run failed (status {res.status}):\n{res.output[-3000:]}")
    return res.output


def share(alone_blocks, two_blocks):
    """Each pair's rates against the mean of the runs alone just before and
    after it (the host's load drifts); the medians over the rounds."""
    def rate(text):
        return [kv(line)["rounds_per_s"] for line in text.splitlines() if line.startswith("spin_rate:")]

    alone = [rate(b)[0] for b in alone_blocks]
    rounds = []
    for i, block in enumerate(two_blocks):
        two = sorted(rate(block))
        base = (alone[i] + alone[i + 1]) / 2
        rounds.append({"alone": base, "two": two, "shares": [t / base for t in two],
                       "split": two[0] / sum(two)})

    def med(f):
        return statistics.median(f(r) for r in rounds)

    return {"rounds": rounds, "shares": [med(lambda r: r["shares"][0]), med(lambda r: r["shares"][1])],
            "spread": [min(r["shares"][0] for r in rounds), max(r["shares"][1] for r in rounds)],
            "split": med(lambda r: r["split"])}


def parse(output, icount_output):
    blocks = sections(output)
    counted = sections(icount_output)
    s = {name: b[0] for name, b in blocks.items()}
    res = {}
    for side in SIDES:
        r = {}
        for what, prog, key, _ in PER_CALL:
            reps = [kv(line)[key] for line in s[f"{side}_{what}"].splitlines() if line.startswith(f"{prog}: rep=")]
            r[what] = {"ns": reps, "median_ns": statistics.median(reps)}
        r["share"] = share(blocks[f"{side}_share_alone"], blocks[f"{side}_share_two"])
        r["share_icount"] = share(counted[f"{side}_share_alone"], counted[f"{side}_share_two"])
        res[side] = r
    return res


def table(res, config):
    L, E = res["linux"], res["enclave"]
    lines = [f"One VM run; Linux CPU {config['ONE']} and then a one-CPU enclave on it; medians of "
             f"{config['REPS']} repetitions.", "",
             "| per operation | Linux | enclave | enclave / Linux |", "|---|---|---|---|"]
    for what, _, _, label in PER_CALL:
        l, e = L[what]["median_ns"], E[what]["median_ns"]
        lines.append(f"| {label} | {l / 1000:.1f} µs | {e / 1000:.1f} µs | {e / l:.2f}x |")
    lines += ["", f"| CPU share (two copies on one core, against one alone; medians of "
              f"{config['SHARE_ROUNDS']} rounds) | Linux | enclave |", "|---|---|---|"]
    for key, how in [("share", "real time"), ("share_icount", f"-icount shift={ICOUNT_SHIFT}")]:
        l, e = L[key], E[key]
        lines.append(f"| each copy's share, {how} | " + ", ".join(f"{x:.3f}" for x in l["shares"]) + " | "
                     + ", ".join(f"{x:.3f}" for x in e["shares"]) + " |")
        lines.append(f"| lowest and highest over the rounds, {how} | "
                     + " .. ".join(f"{x:.3f}" for x in l["spread"]) + " | "
                     + " .. ".join(f"{x:.3f}" for x in e["spread"]) + " |")
        lines.append(f"| the smaller copy's part of the two's work, {how} | {l['split']:.3f} | "
                     f"{e['split']:.3f} |")
    lines += ["", verdicts("process-bench", {"config": config, "results": res})]
    return "\n".join(lines)


def plot(res, path):
    plt = pyplot("process_bench")
    if plt is None:
        return
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 3.8))
    labels = [textwrap.fill(label, 16) for _, _, _, label in PER_CALL]
    x = range(len(labels))
    for i, side in enumerate(SIDES):
        a.bar([p + (i - 0.5) * 0.38 for p in x], [res[side][w]["median_ns"] / 1000 for w, _, _, _ in PER_CALL],
              0.38, label=side)
    a.set_xticks(list(x), labels, fontsize=8)
    a.set_yscale("log")
    a.set_ylabel("µs per operation (log)")
    a.legend()
    groups = [(side, key) for key in ("share", "share_icount") for side in SIDES]
    for i, (side, key) in enumerate(groups):
        shares = res[side][key]["shares"]
        b.bar([i * 3 + j for j in range(len(shares))], shares, 0.8, color=f"C{SIDES.index(side)}")
    b.axhline(0.5, color="k", lw=0.8, ls="--")
    b.set_xticks([0.5, 3.5, 6.5, 9.5], ["Linux", "enclave", "Linux\n-icount", "enclave\n-icount"])
    b.set_ylabel("share of one core (alone = 1)")
    b.set_ylim(0, 0.7)
    fig.suptitle("Processes: enclave vs Linux on the same vCPU")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=RESULTS)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--threads", type=int, default=500, help="threads created per repetition")
    ap.add_argument("--forks", type=int, default=100, help="forks per repetition")
    ap.add_argument("--spawns", type=int, default=20, help="posix_spawns per repetition")
    ap.add_argument("--signals", type=int, default=20000, help="signals per repetition")
    ap.add_argument("--seconds", type=float, default=3, help="seconds of each CPU-share run")
    ap.add_argument("--share-rounds", type=int, default=3, help="CPU-share pairs, each between runs alone")
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    config, output = run_vm(args, plan_cpus(1, host_sized_guest()))
    res = parse(output, run_icount_vm(args))
    text = table(res, config)
    print("\n" + text)
    doc = {"config": config, "results": res}
    doc["targets"] = records("process-bench", doc)  # as bench/targets.py judges this run
    save_results(args.out_dir, "process-bench", text, doc,
                 lambda path: plot(res, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
