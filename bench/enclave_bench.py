#!/usr/bin/env python3
"""Enclave benchmarks in one test-VM run, each next to Linux doing the same
work in the same run:
  - create/destroy (taking CPUs, memory, loading, booting) vs Linux
    offlining and onlining the same CPU and memory block (Pisces Table 5;
    resizing a running enclave is bench/resize_bench.py's);
  - message round trip (`atoll ping`, kmsg) vs a pipe round trip between two Linux CPUs;
  - OS noise, selfish-detour style, on the same vCPU as a Linux CPU and as an
    enclave CPU, with Linux's cores idle and busy.
For the noise runs the measured vCPU (guest CPU 3) gets a host core to
itself and every other QEMU thread shares the other one, so the host's own
scheduling does not pose as guest noise.
Writes bench/results/enclave-bench.{json,md} and enclave-noise.png."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vm  # noqa: E402
from plotting import pyplot  # noqa: E402

RESULTS = os.path.join(HERE, "results")
HELPERS = ["selfish", "hotplug", "pipe_rtt"]
MEASURED_CPU = 3


def build_helpers(out_dir):
    for name in HELPERS:
        subprocess.run(["gcc", "-O2", "-static", "-Wall", "-o", os.path.join(out_dir, name),
                        os.path.join(HERE, f"{name}.c")], check=True)


def split_host_cpus():
    """(alone, shared): the last host CPU for the measured vCPU, the rest for
    everything else, this driver and QEMU's other threads included."""
    host_cpus = sorted(os.sched_getaffinity(0))
    if len(host_cpus) < 2:
        print("enclave_bench: one host CPU only; noise figures include host scheduling")
        return None
    alone, shared = {host_cpus[-1]}, set(host_cpus[:-1])
    os.sched_setaffinity(0, shared)
    return alone, shared


def pin_vcpus(proc, measured, alone, shared, stop):
    """Measured vCPU threads one per host CPU, every other QEMU thread shared."""
    if alone is None:
        return
    owner = {f"CPU {cpu}/TCG": {host} for cpu, host in zip(measured, alone)}
    seen = set()
    while not stop.is_set() and proc.poll() is None:
        try:
            tids = os.listdir(f"/proc/{proc.pid}/task")
        except FileNotFoundError:
            return
        for tid in tids:
            if tid in seen:
                continue
            try:
                with open(f"/proc/{proc.pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                os.sched_setaffinity(int(tid), owner.get(name, set(shared)))
                seen.add(tid)
            except (FileNotFoundError, ProcessLookupError):
                pass
        time.sleep(0.2)


def sections(output):
    """{name: [block text, ...]} from the guest's '=== name' sections."""
    out, name = {}, None
    for line in output.splitlines():
        if line.startswith("=== "):
            name = line[4:].strip()
            out.setdefault(name, []).append("")
        elif name and not line.startswith("["):
            out[name][-1] += line + "\n"
    return out


def kv(line):
    return {k: float(v) if re.fullmatch(r"[\d.]+", v) else v for k, v in re.findall(r"(\w+)=(\S+)", line)}


def dominant_spacing(detours):
    """(spacing in ms, share of detours): the most common gap between detour
    starts, in 0.1 ms bins. A timer tick shows as a large share at its period."""
    starts = [at for at, _ in detours]
    bins = {}
    for a, b in zip(starts, starts[1:]):
        k = round((b - a) / 1e5)
        if k > 0:
            bins[k] = bins.get(k, 0) + 1
    if not bins:
        return None, 0.0
    k, n = max(bins.items(), key=lambda kv_: kv_[1])
    return k / 10, n / max(len(starts) - 1, 1)


def parse_noise(text):
    head = next(l for l in text.splitlines() if l.startswith("noise: os="))
    r = kv(head)
    r["detour_list"] = [tuple(map(int, l.split()[1:3])) for l in text.splitlines() if l.startswith("detour ")]
    r["per_second"] = r["detours"] / (r["duration_ns"] / 1e9)
    r["spacing_ms"], r["spacing_share"] = dominant_spacing(r["detour_list"])
    return r


def parse(output):
    s = sections(output)
    res = {}
    if "create" in s:
        med = lambda xs: statistics.median(xs) / 1e6  # ns -> ms
        creates = [json.loads(b) for b in s["create"]]
        destroys = [json.loads(b) for b in s["destroy"]]
        cpu = [kv(b) for b in s["linux_cpu"]]
        mem = [kv(b) for b in s["linux_mem"]]
        res["table5_ms"] = {
            "enclave_take_cpu": med([c["phase_ns"]["cpus"] for c in creates]),
            "enclave_take_memory": med([c["phase_ns"]["memory"] for c in creates]),
            "enclave_load": med([c["phase_ns"]["load"] for c in creates]),
            "enclave_boot": med([c["phase_ns"]["boot"] for c in creates]),
            "enclave_create_total": med([sum(c["phase_ns"].values()) for c in creates]),
            "enclave_destroy_total": med([sum(d["phase_ns"].values()) for d in destroys]),
            "enclave_give_back_cpu": med([d["phase_ns"]["cpus"] for d in destroys]),
            "enclave_give_back_memory": med([d["phase_ns"]["memory"] for d in destroys]),
            "linux_offline_cpu": med([c["offline_ns"] for c in cpu]),
            "linux_online_cpu": med([c["online_ns"] for c in cpu]),
            "linux_offline_block": med([m["offline_ns"] for m in mem]),
            "linux_online_block": med([m["online_ns"] for m in mem]),
            "rounds": len(creates),
        }
        rtts = json.loads(s["ping"][0])["rtt_ns"]
        pipe = kv(s["pipe"][0])
        res["rtt_us"] = {
            "channel_median": statistics.median(rtts) / 1e3,
            "channel_min": min(rtts) / 1e3,
            "pipe_median": pipe["median_ns"] / 1e3,
            "pipe_min": pipe["min_ns"] / 1e3,
        }
    res["noise"] = {case: parse_noise(s[f"noise_{case}"][0])
                    for case in ["linux_idle", "linux_busy", "lwk_idle", "lwk_busy"]}
    return res


def noise_table(noise):
    rows = ["| CPU 3 runs | Linux's cores | detours/s | total detour | largest detour | most common spacing |",
            "|---|---|---|---|---|---|"]
    for case, r in noise.items():
        os_name, load = case.split("_")
        spacing = (f"{r['spacing_ms']:.1f} ms ({100*r['spacing_share']:.0f}% of gaps)"
                   if r["spacing_ms"] is not None else "-")
        rows.append(f"| {'the LWK (enclave)' if os_name == 'lwk' else 'Linux'} | {load} | "
                    f"{r['per_second']:.1f} | {r['total_ns']/1e6:.2f} ms | {r['max_ns']/1e3:.1f} µs | {spacing} |")
    lb, eb = noise["linux_busy"], noise["lwk_busy"]
    rows.append("")
    rows.append(f"Linux busy, enclave / Linux: detours per second {eb['per_second']/max(lb['per_second'],1e-9):.4f}x, "
                f"largest detour {eb['max_ns']/max(lb['max_ns'],1):.4f}x "
                f"(threshold {lb['threshold_ns']:.0f} ns, {lb['duration_ns']/1e9:.0f} s each)")
    return "\n".join(rows)


def table(res):
    out = []
    t = res.get("table5_ms")
    if t:
        out += [f"Create and destroy (median of {t['rounds']}; 1 CPU, one 128 MiB block):", "",
                "| step | enclave (Atoll) | Linux, same CPU / block |", "|---|---|---|",
                f"| take the CPU | {t['enclave_take_cpu']:.1f} ms | offline: {t['linux_offline_cpu']:.1f} ms |",
                f"| take the memory block | {t['enclave_take_memory']:.1f} ms | offline: {t['linux_offline_block']:.1f} ms |",
                f"| load the LWK | {t['enclave_load']:.1f} ms | |",
                f"| boot (SIPI to booted on every CPU) | {t['enclave_boot']:.1f} ms | online the CPU: {t['linux_online_cpu']:.1f} ms |",
                f"| create, total | {t['enclave_create_total']:.1f} ms | |",
                f"| give the CPU back | {t['enclave_give_back_cpu']:.1f} ms | |",
                f"| give the memory back | {t['enclave_give_back_memory']:.1f} ms | online the block: {t['linux_online_block']:.1f} ms |",
                f"| destroy, total | {t['enclave_destroy_total']:.1f} ms | |", "",
                f"LWK boot / Linux onlining one CPU: {t['enclave_boot']/t['linux_online_cpu']:.2f}x", ""]
        r = res["rtt_us"]
        out += ["| round trip | median | min |", "|---|---|---|",
                f"| message round trip, `atoll ping` (Linux <-> LWK) | {r['channel_median']:.1f} µs | {r['channel_min']:.1f} µs |",
                f"| pipe between two Linux processes on two CPUs | {r['pipe_median']:.1f} µs | {r['pipe_min']:.1f} µs |", "",
                f"message / pipe (median): {r['channel_median']/r['pipe_median']:.2f}x", ""]
    out += ["OS noise (selfish detour on guest CPU 3):", "", noise_table(res["noise"])]
    return "\n".join(out)


def plot(noise, path):
    plt = pyplot("enclave_bench")
    if plt is None:
        return
    fig, axes = plt.subplots(2, 2, figsize=(11, 7), sharex=True, sharey=True)
    for ax, (case, r) in zip(axes.flat, noise.items()):
        xs = [at / 1e9 for at, _ in r["detour_list"]]
        ys = [gap / 1e3 for _, gap in r["detour_list"]]
        ax.scatter(xs, ys, s=4)
        os_name, load = case.split("_")
        ax.set_title(f"{'LWK enclave' if os_name == 'lwk' else 'Linux'} core, Linux {load}: "
                     f"{int(r['detours'])} detours")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    for ax in axes[1]:
        ax.set_xlabel("time (s)")
    for ax in axes[:, 0]:
        ax.set_ylabel("detour length (µs)")
    fig.suptitle("Selfish detour on one vCPU: as a Linux core and as an enclave core")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def run(noise_seconds, threshold_ns, rounds, parts, echo):
    with tempfile.TemporaryDirectory() as extra:
        build_helpers(extra)
        script = os.path.join(extra, "run.sh")
        with open(script, "w") as f:
            f.write(f"NOISE_SECONDS={noise_seconds}\nNOISE_THRESHOLD_NS={threshold_ns}\n"
                    f"ROUNDS={rounds}\nPARTS={parts}\n")
            with open(os.path.join(HERE, "enclave_guest.sh")) as g:
                f.write(g.read())
        stop = threading.Event()
        cpus = split_host_cpus()
        alone, shared = (sorted(cpus[0]), cpus[1]) if cpus else (None, None)
        res = vm.run_vm(script, extra_dir=extra, timeout=1800, echo=echo,
                        qemu_args=["-name", "atoll-bench,debug-threads=on"],
                        on_start=lambda proc: threading.Thread(
                            target=pin_vcpus, args=(proc, [MEASURED_CPU], alone, shared, stop),
                            daemon=True).start())
        stop.set()
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"enclave_bench: the VM run failed (status {res.status}):\n{res.output[-3000:]}")
    return res.output


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--noise-seconds", type=int, default=10)
    ap.add_argument("--noise-threshold-ns", type=int, default=50_000,
                    help="shortest gap that counts as a detour (default: above QEMU's own floor)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--noise-only", action="store_true", help="only the noise comparison (make demo)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    output = run(args.noise_seconds, args.noise_threshold_ns, args.rounds, "noise" if args.noise_only else "all", not args.quiet)
    res = parse(output)
    os.makedirs(RESULTS, exist_ok=True)
    text = table(res)
    print("\n" + text)
    # The demo's plot goes to build/, so a demo never replaces the README's figures.
    plot_dir = os.path.join(ROOT, "build") if args.noise_only else RESULTS
    os.makedirs(plot_dir, exist_ok=True)
    plot(res["noise"], os.path.join(plot_dir, "enclave-noise.png"))
    if not args.noise_only:
        with open(os.path.join(RESULTS, "enclave-bench.md"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(RESULTS, "enclave-bench.json"), "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
