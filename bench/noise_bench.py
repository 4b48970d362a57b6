#!/usr/bin/env python3
"""OS noise measured the way HPC sites do (issue 16): `atoll noise` on one
vCPU as an untuned Linux CPU, as a tuned Linux CPU (nohz_full, isolcpus,
rcu_nocbs, irqaffinity), alone in a cgroup-v2 isolated partition (set at
run time on the untuned boot), and as an enclave's CPU on each of the two
Linux boots; with Linux's other CPUs idle, CPU-bound and doing I/O (interrupts);
every case repeated, medians and spread reported. The measured vCPU gets a
host core of its own (the rest of QEMU and this driver share the other), so
the host's scheduling shows as little as it can.
  python3 bench/noise_bench.py [--rounds 3] [--seconds 5]
Writes bench/results/noise-bench.{md,json,png}; --out DIR writes there."""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vm  # noqa: E402
from enclave_bench import sections  # noqa: E402
from pinning import pin_vcpus, split_host_cpus  # noqa: E402
from noise_plot import plot  # noqa: E402
from saving import save_results  # noqa: E402
from targets import records  # noqa: E402
import tables.noise  # noqa: E402


def tuned(cpu):
    """The tuning HPC sites give Linux for a measured CPU: no tick while one
    task runs, no scheduler balancing or managed interrupts there, RCU
    callbacks elsewhere, every other interrupt on the CPUs below it."""
    return (f"nohz_full={cpu} isolcpus=nohz,domain,managed_irq,{cpu} rcu_nocbs={cpu} "
            f"irqaffinity=0-{cpu - 1}")


# 4 vCPUs; the measured one has a host core to itself.
SMP, CPU = 4, 3
MODES = ["untuned", "tuned"]
# (mode, where the probe runs, column name)
CONFIGS = [("untuned", "linux", "untuned Linux"), ("untuned", "partition", "isolated cgroup partition"),
           ("tuned", "linux", "tuned Linux"),
           ("untuned", "enclave", "enclave, Linux untuned"), ("tuned", "enclave", "enclave, Linux tuned")]
LOADS = tables.noise.LOADS
DISK_MIB = 64


def snapshot_files(tmp):
    """The VM's files copied now, so a rebuild during the run changes nothing."""
    files = {}
    for guest, host in vm.default_files().items():
        copy = os.path.join(tmp, os.path.basename(host))
        shutil.copy2(host, copy)
        files[guest] = copy
    return files


def progress(name):
    """The console's "ATOLL-NOISE:" lines as they come, nothing else."""
    pending = [""]

    def echo(text):
        *lines, pending[0] = (pending[0] + text).split("\n")
        for line in lines:
            if line.startswith("ATOLL-NOISE: "):
                print(f"noise_bench: {name}: {line[13:]}", flush=True)
    return echo


def run_boot(mode, args, files, tmp, pins):
    script = os.path.join(tmp, f"{mode}.sh")
    with open(script, "w") as f:
        f.write(f"CPU={CPU}\nLOADS='{' '.join(LOADS)}'\nROUNDS={args.rounds}\nPROBE_SECONDS={args.seconds}\n"
                f"THRESHOLD_NS={args.threshold_ns}\nFWQ_SECONDS={args.fwq_seconds}\n"
                f"PARTITION={int(mode == 'untuned')}\n")
        with open(os.path.join(HERE, "noise_guest.sh")) as g:
            f.write(g.read())
    disk = os.path.join(tmp, "disk.img")
    if not os.path.exists(disk):
        with open(disk, "wb") as f:
            f.write(os.urandom(DISK_MIB << 20))
    stop = threading.Event()
    alone, shared = pins
    name = f"{mode} Linux"
    print(f"noise_bench: booting {name} ({args.rounds} rounds)", flush=True)
    res = vm.run_vm(script, checks=False, smp=SMP, echo=progress(name), files=files,
                    append_extra=tuned(CPU) if mode == "tuned" else "",
                    timeout=600 + 60 * args.rounds * (args.seconds + args.fwq_seconds),
                    qemu_args=["-name", "atoll-bench,debug-threads=on",
                               "-drive", f"file={disk},if=virtio,format=raw,readonly=on"],
                    on_start=lambda proc: threading.Thread(
                        target=pin_vcpus, args=(proc, [CPU], alone, shared, stop), daemon=True).start())
    stop.set()
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"noise_bench: the {name} run failed (status {res.status}):\n{res.output[-3000:]}")
    return res.output


def parse(output):
    """{(where, load): {"selfish": [cpu entry per round], "fwq": [...]}}"""
    runs = {}
    for name, blocks in sections(output).items():
        parts = name.split()
        if len(parts) != 4:
            continue
        where, load, _, probe = parts
        for block in blocks:
            doc = json.loads(next(line for line in block.splitlines() if line.startswith("{")))
            runs.setdefault((where, load), {"selfish": [], "fwq": []})[probe].append(doc["cpus"][0])
    return runs


def figures(selfish, fwq):
    """The table's figures of one round."""
    seconds = selfish["duration_ns"] / 1e9
    return {
        "availability": selfish["availability"],
        "kernel_availability": 1 - selfish["kernel_ns"] / selfish["duration_ns"],
        "per_second": selfish["per_second"],
        "max_us": selfish["max_ns"] / 1e3,
        "p99_us": selfish["p99_ns"] / 1e3,
        "kernel_per_second": selfish["kernel_detours"] / seconds,
        "kernel_max_us": selfish["kernel_max_ns"] / 1e3,
        "others_share": selfish["other_detours"] / max(selfish["detours"], 1),
        "interrupts_per_second": selfish["interrupts"] / seconds,
        "fwq_worst_over_mean": fwq["worst_over_mean"],
        "fwq_p99_over_mean": p99([length for _, length, _ in fwq["listed"]]) / fwq["mean"],
    }


def p99(values):
    """Nearest-rank 99th percentile."""
    ordered = sorted(values)
    return ordered[max(0, -(-99 * len(ordered) // 100) - 1)]


def summarise(rounds):
    """{figure: {"median", "min", "max", "all"}} over the rounds."""
    out = {}
    for key in rounds[0]:
        values = [r[key] for r in rounds]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values),
                    "all": values}
    return out


def markdown(data):
    """The README's tables and verdicts for this run (bench/tables/noise.py)."""
    results = {tables.noise.STEM: data}
    return tables.noise.render(results) + "\n\n" + tables.noise.targets(results)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5, help="selfish detour per case and round")
    ap.add_argument("--fwq-seconds", type=int, default=2)
    ap.add_argument("--threshold-ns", type=int, default=5000, help="shortest detour counted (rtla osnoise's default)")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    args = ap.parse_args()
    cpus = split_host_cpus()  # once: it moves this driver to the shared CPUs
    pins = (sorted(cpus[0]), cpus[1]) if cpus else (None, None)
    runs = {}
    with tempfile.TemporaryDirectory(prefix="atoll-noise-") as tmp:
        files = snapshot_files(tmp)
        for mode in MODES:
            for (where, load), probes in parse(run_boot(mode, args, files, tmp, pins)).items():
                runs[(mode, where, load)] = probes
    summary = {column: {load: summarise([figures(s, f) for s, f in zip(runs[(mode, where, load)]["selfish"],
                                                                       runs[(mode, where, load)]["fwq"])])
                        for load in LOADS}
               for mode, where, column in CONFIGS}
    listed = {column: {load: [r["listed"] for r in runs[(mode, where, load)]["selfish"]] for load in LOADS}
              for mode, where, column in CONFIGS}
    # Every probe's figures without its detour list, to compute new ones later.
    probes = {f"{mode} {where} {load}": {probe: [{k: v for k, v in r.items() if k != "listed"} for r in rs]
                                         for probe, rs in got.items()}
              for (mode, where, load), got in runs.items()}
    data = {"args": vars(args), "tuned_cmdline": tuned(CPU), "summary": summary, "probes": probes}
    data["targets"] = records(tables.noise.STEM, data)  # as bench/targets.py judges this run
    text = save_results(args.out, tables.noise.STEM, markdown, data, lambda path: plot(listed, args.threshold_ns, path))
    print("\n" + text)
    print(f"noise_bench: results in {args.out}/noise-bench.{{md,json,png}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
