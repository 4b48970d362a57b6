#!/usr/bin/env python3
"""Enclave benchmarks in one test-VM run, each next to Linux doing the same
work in the same run:
  - create/destroy (taking CPUs, memory, loading, booting) vs Linux
    offlining and onlining the same CPU and memory block (Pisces Table 5;
    resizing a running enclave is bench/resize_bench.py's);
  - message round trip (`atoll ping`, kmsg) vs a pipe round trip between two Linux CPUs.
OS noise is bench/noise_bench.py's. Writes bench/results/enclave-bench.{json,md}.
Helpers for the other drivers: sections() and kv() read a guest's output."""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import vm  # noqa: E402
from saving import save_results  # noqa: E402

RESULTS = os.path.join(HERE, "results")
HELPERS = ["hotplug", "pipe_rtt"]


def build_helpers(out_dir):
    for name in HELPERS:
        subprocess.run(["gcc", "-O2", "-static", "-Wall", "-o", os.path.join(out_dir, name),
                        os.path.join(HERE, f"{name}.c")], check=True)


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


def parse(output):
    s = sections(output)
    res = {}

    def med(xs):
        return statistics.median(xs) / 1e6  # ns -> ms

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
    return res


def table(res):
    out = []
    t = res.get("table5_ms")
    out += [f"Create and destroy (median of {t['rounds']}; 1 CPU, one 128 MiB block):", "",
            "| step | enclave (Atoll) | Linux, same CPU / block |", "|---|---|---|",
            f"| take the CPU | {t['enclave_take_cpu']:.1f} ms | offline: {t['linux_offline_cpu']:.1f} ms |",
            f"| take the memory block | {t['enclave_take_memory']:.1f} ms "
            f"| offline: {t['linux_offline_block']:.1f} ms |",
            f"| load the LWK | {t['enclave_load']:.1f} ms | |",
            f"| boot (SIPI to booted on every CPU) | {t['enclave_boot']:.1f} ms "
            f"| online the CPU: {t['linux_online_cpu']:.1f} ms |",
            f"| create, total | {t['enclave_create_total']:.1f} ms | |",
            f"| give the CPU back | {t['enclave_give_back_cpu']:.1f} ms | |",
            f"| give the memory back | {t['enclave_give_back_memory']:.1f} ms "
            f"| online the block: {t['linux_online_block']:.1f} ms |",
            f"| destroy, total | {t['enclave_destroy_total']:.1f} ms | |", "",
            f"LWK boot / Linux onlining one CPU: {t['enclave_boot']/t['linux_online_cpu']:.2f}x", ""]
    r = res["rtt_us"]
    out += ["| round trip | median | min |", "|---|---|---|",
            f"| message round trip, `atoll ping` (Linux <-> LWK) "
            f"| {r['channel_median']:.1f} µs | {r['channel_min']:.1f} µs |",
            f"| pipe between two Linux processes on two CPUs "
            f"| {r['pipe_median']:.1f} µs | {r['pipe_min']:.1f} µs |", "",
            f"message / pipe (median): {r['channel_median']/r['pipe_median']:.2f}x", ""]
    return "\n".join(out)


def run(rounds, echo):
    with tempfile.TemporaryDirectory() as extra:
        build_helpers(extra)
        script = os.path.join(extra, "run.sh")
        with open(script, "w") as f:
            f.write(f"ROUNDS={rounds}\n")
            with open(os.path.join(HERE, "enclave_guest.sh")) as g:
                f.write(g.read())
        res = vm.run_vm(script, checks=False, extra_dir=extra, timeout=1800, echo=echo)
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"enclave_bench: the VM run failed (status {res.status}):\n{res.output[-3000:]}")
    return res.output


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    res = parse(run(args.rounds, not args.quiet))
    print("\n" + save_results(RESULTS, "enclave-bench", table(res), res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
