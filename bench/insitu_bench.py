#!/usr/bin/env python3
"""The in-situ workflow (issue 14): a Jacobi simulation publishes its grid
every EVERY steps; an analytics program on Linux (histogram, sum, min, max
of each snapshot) reads it, next to a parallel compile. One test-VM run:
the simulation on guest CPU 3 (alone on a host CPU), on Linux and then in
a one-CPU enclave there, alone and with the analytics and the compile
load, the snapshots through a signalled XEMEM segment or a pipe; RUNS runs
each, the three cases interleaved so that the host's drifts hit all alike.
Then a 1 GiB segment attached against copied, both ways, and signal round
trips against the control channel's (atoll ping), enclave to Linux and
enclave to enclave (atoll ping --from). Prints the table
and the targets; writes insitu-bench.{json,md,png} to --out-dir."""
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
from tables.render import verdicts  # noqa: E402
from enclave_bench import kv, sections  # noqa: E402
from program_bench import boot_guest, plan_cpus, runs_stats  # noqa: E402

RESULTS = os.path.join(HERE, "results")
CASES = [("linux_alone", "Linux, alone"), ("linux_xemem_busy", "Linux, XEMEM + analytics + compile"),
         ("linux_pipe_busy", "Linux, pipe + analytics + compile"), ("enclave_alone", "enclave, alone"),
         ("enclave_xemem_busy", "enclave, XEMEM + analytics + compile"),
         ("enclave_pipe_busy", "enclave, pipe + analytics + compile")]


def parse(output):
    s = {name: "".join(blocks) for name, blocks in sections(output).items()}
    res = {}
    for case, _ in CASES:
        sims = [kv(line) for line in s[case].splitlines() if line.startswith("insitu_sim:")]
        res[case] = runs_stats([x["mean_ns"] / 1e6 for x in sims])  # each run's mean step, in ms
        alone = [kv(line)["mean_ns"] / 1e6 for line in s[case.split("_")[0] + "_alone"].splitlines()
                 if line.startswith("insitu_sim:")]
        # Against the alone run just before it (the same host conditions).
        res[case]["vs_alone"] = statistics.median(b / a for a, b in zip(alone, res[case]["seconds"]))
        res[case]["step_worst_ms"] = [x["worst_ns"] / 1e6 for x in sims]
        res[case]["published"] = sum(x["published"] for x in sims)
        res[case]["skipped"] = sum(x["skipped"] for x in sims)
        res[case]["checksums"] = sorted({x["checksum"] for x in sims})
    for way in ["attach_into_enclave", "attach_into_linux"]:
        res[way] = kv(next(line for line in s[way].splitlines() if line.startswith("xemem_attach:")))
    for signal, control, key in [("signal_enclave_linux", "control_ping", ""),
                                 ("signal_enclave_enclave", "peer_ping", "peer_")]:
        line = next(ln for ln in s[signal].splitlines() if ln.startswith("pingpong"))
        res[f"{key}signal_rtt_ns"] = float(line.split("median ")[1].split(" ns")[0])
        rtts = json.loads(s[control].strip().splitlines()[-1])["rtt_ns"]
        res[f"{key}control_rtt_ns"] = statistics.median(rtts)
    return res


def table(res, config):
    lines = [f"One VM run; the simulation ({config['N']}x{config['N']} Jacobi, {config['STEPS']} steps, a snapshot "
             f"every {config['EVERY']}) on guest CPU {config['ONE']}, alone on a host CPU; analytics and a gcc loop "
             f"on guest CPUs {config['OTHERS']}; {config['RUNS']} runs each.", "",
             "| case | mean step ms | best run | worst run | worst / best | / the alone run before it (median) "
             "| snapshots taken / skipped |",
             "|---|---|---|---|---|---|---|"]
    for case, label in CASES:
        r = res[case]
        lines.append(f"| {label} | {r['mean']:.3f} | {r['best']:.3f} | {r['worst']:.3f} | "
                     f"{r['worst_over_best']:.3f} | {r['vs_alone']:.3f}x | {r['published']:.0f} / {r['skipped']:.0f} |")
    lines += ["", "| attach a segment of | attach | first touch of every page | copy it | attach / copy |",
              "|---|---|---|---|---|"]
    for way, label in [("attach_into_enclave", "Linux's, in the enclave"),
                       ("attach_into_linux", "the enclave's, on Linux")]:
        a = res[way]
        lines.append(f"| {label} ({a['bytes'] / 2**30:.0f} GiB) | {a['attach_ns'] / 1e6:.2f} ms | "
                     f"{a['touch_ns'] / 1e6:.1f} ms | {a['copy_ns'] / 1e6:.1f} ms | "
                     f"{a['attach_ns'] / a['copy_ns']:.4f} |")
    lines += ["", f"Signal round trip enclave <-> Linux {res['signal_rtt_ns'] / 1000:.1f} µs, control channel "
              f"(atoll ping) {res['control_rtt_ns'] / 1000:.1f} µs; enclave <-> enclave "
              f"{res['peer_signal_rtt_ns'] / 1000:.1f} µs, the LWKs' own (atoll ping --from) "
              f"{res['peer_control_rtt_ns'] / 1000:.1f} µs (medians).", "",
              verdicts("insitu-bench", {"config": config, "results": res})]
    return "\n".join(lines)


def plot(res, path):
    plt = pyplot("insitu_bench")
    if plt is None:
        return
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(16, 4))
    a.boxplot([res[c]["seconds"] for c, _ in CASES])
    short = [c.replace("_busy", "\n+ load").replace("_", "\n", 1) for c, _ in CASES]
    a.set_xticks(range(1, len(CASES) + 1), short, fontsize=8)
    a.set_ylabel("simulation: mean step per run, ms")
    a.set_title("in-situ: the simulation's step time")
    ways = ["attach_into_enclave", "attach_into_linux"]
    x = range(len(ways))
    b.bar([i - 0.2 for i in x], [res[w]["attach_ns"] / 1e6 for w in ways], width=0.4, label="attach")
    b.bar([i + 0.2 for i in x], [res[w]["copy_ns"] / 1e6 for w in ways], width=0.4, label="copy")
    b.set_xticks(list(x), ["Linux's segment\nin the enclave", "the enclave's\non Linux"])
    b.set_yscale("log")
    b.set_ylabel("ms")
    b.set_title("1 GiB: attach vs copy")
    b.legend()
    pairs = [("enclave <->\nLinux", "", "atoll ping"), ("enclave <->\nenclave", "peer_", "atoll ping --from")]
    x = range(len(pairs))
    c.bar([i - 0.2 for i in x], [res[f"{k}signal_rtt_ns"] / 1e3 for _, k, _ in pairs], width=0.4,
          label="XEMEM signal round trip")
    c.bar([i + 0.2 for i in x], [res[f"{k}control_rtt_ns"] / 1e3 for _, k, _ in pairs], width=0.4,
          label="the control channel's")
    c.set_xticks(list(x), [label for label, _, _ in pairs])
    c.set_ylabel("µs (median)")
    c.set_title("signals against the control channel")
    c.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=RESULTS)
    ap.add_argument("--n", type=int, default=512, help="grid side")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--every", type=int, default=10, help="steps between snapshots")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--attach-bytes", type=int, default=1 << 30)
    ap.add_argument("--pings", type=int, default=2000)
    ap.add_argument("--timeout", type=int, default=3600)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()

    cpus = plan_cpus(1)
    one = cpus[0][0]
    config = {"ONE": one, "OTHERS": " ".join(str(c) for c in range(1, one)), "N": args.n, "STEPS": args.steps,
              "EVERY": args.every, "RUNS": args.runs, "ATTACH_BYTES": args.attach_bytes, "PINGS": args.pings}
    # A 1280 MiB enclave beside Linux's 1 GiB segment and its copy: more
    # than the test VM's RAM (no page poisoning here, so booting stays quick).
    output = boot_guest("insitu_bench", "insitu_guest.sh", config, cpus, args.timeout, args.quiet, mem_mb=4096)
    res = parse(output)
    text = table(res, config)
    print("\n" + text)
    doc = {"config": config, "results": res}
    doc["targets"] = records("insitu-bench", doc)  # as bench/targets.py judges this run
    save_results(args.out_dir, "insitu-bench", text, doc,
                 lambda path: plot(res, path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
