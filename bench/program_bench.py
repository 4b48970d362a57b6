#!/usr/bin/env python3
"""Unmodified Linux programs in an enclave vs on Linux, in one test-VM run:
the same static binaries (bench/programs, scripts/build-programs.sh) on the
same vCPUs, first as Linux CPUs (before the enclave exists), then as enclave
CPUs under `atoll run`, each with Linux idle and with Linux busy:
  - getpid latency (a local system call in the enclave);
  - 1-byte writes to /dev/null (a delegated call's round trip) next to a
    pipe round trip between two Linux CPUs (bench/pipe_rtt.c);
  - 1-byte pwrite()s to a file and 4 KiB pread()s from a file in Linux's
    page cache (file_rw), and a pipe round trip between two threads of one
    program (pipe_threads);
  - pthread_create + pthread_join;
  - STREAM triad and a conjugate-gradient solve (OpenMP) on K CPUs, RUNS
    runs each: mean, spread, worst vs best.
The guest has as many vCPUs as the host has CPUs (2 to 4); the measured
vCPUs each get a host CPU of their own; QEMU's other threads and this driver
share the rest, so the host's scheduling does not pose as guest noise (K
defaults to the host's CPU count minus one, at most 3).
Writes program-bench.{json,md,png} to --out-dir (default bench/results)."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, HERE)
import vm  # noqa: E402
from plotting import pyplot  # noqa: E402
from saving import save_results  # noqa: E402
from targets import records  # noqa: E402
from tables.render import verdicts  # noqa: E402
from enclave_bench import kv, sections  # noqa: E402
from pinning import pin_vcpus  # noqa: E402

RESULTS = os.path.join(HERE, "results")
GUEST_CPUS = 4
LOADS = ["idle", "busy"]
SIDES = ["linux", "enclave"]


def build_programs(out_dir):
    subprocess.run([os.path.join(ROOT, "scripts", "build-programs.sh"), out_dir, "bench"], check=True)


def host_sized_guest():
    """No more vCPUs than host CPUs (2 to GUEST_CPUS): with 4 on a 2-CPU host,
    Linux's 3 shared one host CPU, and every step of a delegated call that
    crossed between them waited for a host time slice (931 µs a call
    against 41-73 µs unpinned, 2026-11-28)."""
    return max(2, min(GUEST_CPUS, len(os.sched_getaffinity(0))))


def plan_cpus(cores, guest_cpus=GUEST_CPUS):
    """(measured guest CPUs, host CPUs for them, host CPUs for the rest);
    the guest has guest_cpus vCPUs, the measured ones last."""
    host = sorted(os.sched_getaffinity(0))
    if cores is None:
        cores = max(1, min(guest_cpus - 1, len(host) - 1))
    if not 1 <= cores <= guest_cpus - 1:
        sys.exit(f"program_bench: --cores must be 1..{guest_cpus - 1}")
    measured = list(range(guest_cpus - cores, guest_cpus))
    if len(host) < cores + 1:
        print(f"program_bench: {len(host)} host CPUs for {cores} measured vCPUs and the rest: "
              "no pinning, figures include the host's scheduling")
        return measured, None, None
    alone, shared = host[-cores:], host[:-cores]
    os.sched_setaffinity(0, shared)
    print(f"program_bench: guest CPUs {measured} each alone on host CPUs {alone}; "
          f"the other vCPUs, QEMU and this driver on host CPUs {shared}")
    return measured, alone, shared


def run_vm(args, measured, alone, shared):
    guest_vars = {
        "K": len(measured), "MEASURED": f"{measured[0]}-{measured[-1]}", "ONE": measured[-1],
        "LINUX_ONLY": " ".join(str(c) for c in range(measured[0])),
        "RUNS": args.runs, "REPS": args.reps, "GETPID_CALLS": args.getpid_calls,
        "DEVNULL_CALLS": args.devnull_calls, "THREADS": args.threads, "STREAM_N": args.stream_n,
        "STREAM_SWEEPS": args.stream_sweeps, "CG_N": args.cg_n, "CG_ITERS": args.cg_iters,
        "PIPE_ROUNDS": args.pipe_rounds, "FILE_CALLS": args.file_calls, "SERVE_NICE": args.serve_nice,
    }
    output = boot_guest("program_bench", "program_guest.sh", guest_vars, (measured, alone, shared),
                        args.timeout, args.quiet)
    return guest_vars, output


def boot_guest(driver, guest_script, guest_vars, cpus, timeout, quiet, mem_mb=None):
    """Runs bench/<guest_script> (a name, or names run as one script) in the
    test VM with bench/programs at /extra, the variables set first and the
    measured vCPUs pinned (cpus: plan_cpus's answer); its output, which must
    end with "=== done". mem_mb: the guest's RAM, if not the test VM's."""
    measured, alone, shared = cpus
    with tempfile.TemporaryDirectory() as extra:
        print(f"{driver}: building bench/programs", flush=True)
        build_programs(extra)
        script = os.path.join(extra, "run.sh")
        with open(script, "w") as f:
            f.writelines(f'{k}="{v}"\n' for k, v in guest_vars.items())
            for name in [guest_script] if isinstance(guest_script, str) else guest_script:
                with open(os.path.join(HERE, name)) as g:
                    f.write(g.read())
        print(f"{driver}: booting the test VM", flush=True)
        stop = threading.Event()
        res = vm.run_vm(script, checks=False, extra_dir=extra, timeout=timeout, echo=not quiet,
                        smp=measured[-1] + 1, mem_mb=mem_mb or vm.MEM_MB,
                        qemu_args=["-name", f"atoll-{driver},debug-threads=on"],
                        on_start=lambda proc: threading.Thread(
                            target=pin_vcpus, args=(proc, measured, alone, shared, stop),
                            daemon=True).start())
        stop.set()
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"{driver}: the VM run failed (status {res.status}):\n{res.output[-3000:]}")
    return res.output


def lines_of(text, prefix):
    return [kv(line) for line in text.splitlines() if line.startswith(prefix)]


def runs_stats(seconds):
    mean = statistics.mean(seconds)
    return {"seconds": seconds, "mean": mean, "best": min(seconds), "worst": max(seconds),
            "spread": (max(seconds) - min(seconds)) / mean, "worst_over_best": max(seconds) / min(seconds)}


CALL_TIMES = re.compile(r"\((\S+)\): (\d+) delegated calls, mean ([\d.]+) µs to Linux, "
                        r"([\d.]+) µs on Linux, ([\d.]+) µs back")


def call_times(text):
    """[{program, calls, to_linux_us, on_linux_us, back_us}] from the LWK's
    console lines, in the order the programs ended (idle, then busy)."""
    return [{"program": m.group(1), "calls": int(m.group(2)), "to_linux_us": float(m.group(3)),
             "on_linux_us": float(m.group(4)), "back_us": float(m.group(5))}
            for m in CALL_TIMES.finditer(text)]


def parse(output):
    """{side: {load: {...}}} plus the problems found in the programs' own checks."""
    s = {name: blocks[0] for name, blocks in sections(output).items()}
    res, problems = {}, []
    for side in SIDES:
        for load in LOADS:
            case, r = f"{side}_{load}", {}
            for what, prog in [("getpid", "getpid"), ("devnull", "devnull"), ("threads", "thread_create")]:
                summary = lines_of(s[f"{side}_{what}_{load}"], f"{prog}: best_ns=")[0]
                r[f"{what}_ns"] = summary["median_ns"]
                if summary["wrong"] != 0:
                    problems.append(f"{case} {prog}: {summary['wrong']} wrong results")
            file_rw = lines_of(s[f"{side}_file_{load}"], "file_rw: pwrite_median_ns=")[0]
            r["pwrite_ns"], r["pread_ns"] = file_rw["pwrite_median_ns"], file_rw["pread_median_ns"]
            pipes = lines_of(s[f"{side}_pipethreads_{load}"], "pipe_threads: median_ns=")[0]
            r["pipe_threads_ns"] = pipes["median_ns"]
            for prog, summary in (("file_rw", file_rw), ("pipe_threads", pipes)):
                if summary["wrong"] != 0:
                    problems.append(f"{case} {prog}: {summary['wrong']} wrong results")
            if side == "linux":
                r["pipe_rtt_ns"] = lines_of(s[f"linux_pipe_{load}"], "pipe_rtt:")[0]["median_ns"]
            st = s[f"{side}_stream_{load}"]
            r["stream"] = runs_stats([run["seconds"] for run in lines_of(st, "stream: run=")])
            r["stream"]["mbps"] = statistics.mean(run["mbps"] for run in lines_of(st, "stream: run="))
            r["stream"]["threads"] = int(lines_of(st, "stream: threads=")[0]["threads"])
            if "ok" not in st.split():
                problems.append(f"{case} stream: wrong results")
            cg = s[f"{side}_cg_{load}"]
            r["cg"] = runs_stats([run["seconds"] for run in lines_of(cg, "cg: run=")])
            r["cg"]["relres"] = float(lines_of(cg, "cg: best=")[0]["relres"])
            r["cg"]["threads"] = int(lines_of(cg, "cg: threads=")[0]["threads"])
            if "ok" not in cg.split():
                problems.append(f"{case} cg: wrong results")
            res.setdefault(side, {})[load] = r
    res["call_times"] = call_times(s.get("call_times", ""))
    # The delegated write again, the servers at nice SERVE_NICE.
    res["served"] = {}
    for load in LOADS:
        summary = lines_of(s[f"served_devnull_{load}"], "devnull: best_ns=")[0]
        res["served"][load] = {"devnull_ns": summary["median_ns"]}
        if summary["wrong"] != 0:
            problems.append(f"served_{load} devnull: {summary['wrong']} wrong results")
    # Same thread count, same order of summation: the same residual, bit for bit.
    relres = {f"{side}_{load}": res[side][load]["cg"]["relres"] for side in SIDES for load in LOADS}
    if len(set(relres.values())) != 1:
        problems.append(f"cg: the residuals differ between runs: {relres}")
    return res, problems


def table(res, config):
    L, E = res["linux"], res["enclave"]

    def us(ns):
        return f"{ns / 1e3:.2f} µs"

    out = [f"{config['K']} measured vCPU(s) ({config['MEASURED']}); Linux's own CPUs: {config['LINUX_ONLY']}. "
           "busy = a busy loop on each of Linux's own CPUs + a dd | md5sum pipeline Linux places itself.", "",
           "| per call (median of reps) | Linux idle | Linux busy | enclave idle | enclave busy "
           "| enclave / Linux (idle) |",
           "|---|---|---|---|---|---|"]
    for key, label in [("getpid_ns", "getpid (local in the enclave)"),
                       ("devnull_ns", "1-byte write to /dev/null (delegated)"),
                       ("pwrite_ns", "1-byte pwrite to a file (delegated)"),
                       ("pread_ns", "4 KiB pread from a file in the page cache (delegated)"),
                       ("pipe_threads_ns", "pipe round trip between two threads of one program"),
                       ("threads_ns", "pthread_create + join")]:
        out.append(f"| {label} | {us(L['idle'][key])} | {us(L['busy'][key])} | {us(E['idle'][key])} | "
                   f"{us(E['busy'][key])} | {E['idle'][key] / L['idle'][key]:.3f}x |")
    out.append(f"| pipe round trip, two Linux CPUs | {us(L['idle']['pipe_rtt_ns'])} | "
               f"{us(L['busy']['pipe_rtt_ns'])} | | | |")
    S = res["served"]
    out.append(f"| 1-byte write to /dev/null, servers at nice {config['SERVE_NICE']} | {us(L['idle']['devnull_ns'])} | "
               f"{us(L['busy']['devnull_ns'])} | {us(S['idle']['devnull_ns'])} | {us(S['busy']['devnull_ns'])} | "
               f"{S['idle']['devnull_ns'] / L['idle']['devnull_ns']:.3f}x |")
    for what, label in [("stream", "STREAM triad"), ("cg", "CG solve")]:
        first = L["idle"][what]
        out += ["", f"{label}: {len(first['seconds'])} runs, {first['threads']} thread(s)"
                + (f", relres {first['relres']:.6g}" if what == "cg" else ""), "",
                "| runs on | Linux | mean | spread (max-min)/mean | worst / best |" +
                (" MB/s |" if what == "stream" else ""),
                "|---|---|---|---|---|" + ("---|" if what == "stream" else "")]
        for side in SIDES:
            for load in LOADS:
                r = res[side][load][what]
                out.append(f"| {'enclave' if side == 'enclave' else 'Linux'} | {load} | {r['mean'] * 1e3:.1f} ms | "
                           f"{100 * r['spread']:.2f}% | {r['worst_over_best']:.4f} |" +
                           (f" {r['mbps']:.0f} |" if what == "stream" else ""))
        out.append(f"\nenclave / Linux, mean time: idle {E['idle'][what]['mean'] / L['idle'][what]['mean']:.3f}x, "
                   f"busy {E['busy'][what]['mean'] / L['busy'][what]['mean']:.3f}x")
    if res.get("call_times"):
        out += ["", "Where the enclave's delegated calls spent their time (means; TSC stamps in each call's slot; "
                "the programs in the order they ended, Linux idle then busy):", "",
                "| program | calls | to Linux (post to a worker taking it) | on Linux (the worker) | "
                "back (answer to the caller running) |", "|---|---|---|---|---|"]
        out += [f"| {c['program']} | {c['calls']} | {c['to_linux_us']:.1f} µs | {c['on_linux_us']:.1f} µs | "
                f"{c['back_us']:.1f} µs |" for c in res["call_times"]]
    out += ["", verdicts("program-bench", {"config": config, "results": res})]
    return "\n".join(out)


def plot(res, path):
    plt = pyplot("program_bench")
    if plt is None:
        return
    from matplotlib.ticker import MaxNLocator
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    styles = {("linux", "idle"): ("tab:blue", "o--"), ("linux", "busy"): ("tab:red", "o--"),
              ("enclave", "idle"): ("tab:green", "s-"), ("enclave", "busy"): ("tab:purple", "s-")}
    for ax, (what, title) in zip(axes, [("stream", "STREAM triad"), ("cg", "CG solve")]):
        for (side, load), (color, style) in styles.items():
            secs = res[side][load][what]["seconds"]
            ax.plot(range(1, len(secs) + 1), [t * 1e3 for t in secs], style, color=color,
                    label=f"{'in the enclave' if side == 'enclave' else 'on Linux'}, Linux {load}")
        ax.set_title(f"{title}: time per run")
        ax.set_xlabel("run")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_ylabel("ms")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("The same binary on the same vCPUs: as Linux CPUs and as enclave CPUs (atoll run)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", default=RESULTS, help="where program-bench.{json,md,png} go (default bench/results)")
    ap.add_argument("--cores", type=int, help="vCPUs measured (default: host CPUs - 1, at most 3)")
    ap.add_argument("--guest-cpus", type=int, help=f"the guest's vCPUs (default: the host's CPUs, 2 to {GUEST_CPUS})")
    ap.add_argument("--runs", type=int, default=10, help="STREAM and CG runs per case")
    ap.add_argument("--reps", type=int, default=3, help="repetitions of each per-call measurement")
    ap.add_argument("--getpid-calls", type=int, default=1_000_000)
    ap.add_argument("--devnull-calls", type=int, default=20_000)
    ap.add_argument("--threads", type=int, default=1000, help="threads created per repetition")
    ap.add_argument("--pipe-rounds", type=int, default=2000)
    ap.add_argument("--file-calls", type=int, default=5000, help="pwrite and pread calls per repetition")
    ap.add_argument("--stream-n", type=int, default=4 << 20, help="doubles per STREAM array")
    ap.add_argument("--stream-sweeps", type=int, default=5, help="triads per timed run")
    ap.add_argument("--cg-n", type=int, default=256, help="CG grid side (n*n unknowns)")
    ap.add_argument("--cg-iters", type=int, default=100)
    ap.add_argument("--serve-nice", type=int, default=-10,
                    help="the servers' nice for the second enclave's delegated write (atoll create --serve-nice)")
    ap.add_argument("--timeout", type=int, default=3600, help="seconds for the whole VM run")
    ap.add_argument("--quiet", action="store_true", help="do not stream the VM's console")
    args = ap.parse_args()

    measured, alone, shared = plan_cpus(args.cores, args.guest_cpus or host_sized_guest())
    config, output = run_vm(args, measured, alone, shared)
    res, problems = parse(output)
    text = table(res, config)
    print("\n" + text)
    doc = {"config": config, "results": res, "problems": problems}
    doc["targets"] = records("program-bench", doc)  # as bench/targets.py judges this run
    save_results(args.out_dir, "program-bench", text, doc, lambda path: plot(res, path))
    for p in problems:
        print(f"program_bench: WRONG RESULT: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
