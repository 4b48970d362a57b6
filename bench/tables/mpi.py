"""MPI jobs in an enclave against Linux (issue 13), from mpi-bench.json:
every recorded run (the file holds one)."""
from figures import Doc, fmt, ratio, size_text, text
from tables.render import block, table, verdicts

STEM = "mpi-bench"


def x(v):
    return fmt(v, "{:.2f}x")


def render(results):
    data = results.get(STEM)
    d = Doc(data)
    L, E, c = d["results"]["linux"], d["results"]["enclave"], d["config"]
    pingpong = []
    for size in sorted(L["pingpong"].keys(), key=int):
        lp, ep = L["pingpong"][size], E["pingpong"][size]
        pingpong.append([size_text(size), fmt(lp["half_rtt_ns"] / 1000, "{:.1f} µs"),
                         fmt(ep["half_rtt_ns"] / 1000, "{:.1f} µs"), x(ratio(ep["half_rtt_ns"], lp["half_rtt_ns"])),
                         fmt(lp["mb_per_s"], "{:.0f}"), fmt(ep["mb_per_s"], "{:.0f}"),
                         x(ratio(ep["mb_per_s"], lp["mb_per_s"]))])
    cma = [[size_text(size), fmt(L["cma_cycles"][size], "{:.0f}"), fmt(E["cma_cycles"][size], "{:.0f}"),
            x(ratio(E["cma_cycles"][size], L["cma_cycles"][size]))]
           for size in sorted(L["cma_cycles"].keys(), key=int)]
    cg = [[f"{label} s", fmt(L["cg_busy"][k], "{:.3f}"), fmt(E["cg_busy"][k], "{:.3f}"),
           x(ratio(E["cg_busy"][k], L["cg_busy"][k]))]
          for k, label in [("mean", "mean"), ("best", "best"), ("worst", "worst")]]
    cg.append(["worst / best", fmt(L["cg_busy"]["worst_over_best"], "{:.3f}"),
               fmt(E["cg_busy"]["worst_over_best"], "{:.3f}"),
               x(ratio(E["cg_busy"]["worst_over_best"], L["cg_busy"]["worst_over_best"]))])
    start = [["seconds", fmt(L["start"]["median"], "{:.2f}"), fmt(E["start"]["median"], "{:.2f}"),
              x(ratio(E["start"]["median"], L["start"]["median"]))]]
    return block(data,
                 table(["ping-pong message", "Linux latency (one way)", "enclave", "enclave / Linux", "Linux MB/s",
                        "enclave MB/s", "enclave / Linux"], pingpong),
                 table(["`process_vm_readv` alone (cycles, best of 9)", "Linux", "enclave", "enclave / Linux"], cma),
                 table([f"CG, {text(c['RUNS'])} solves with Linux's other CPUs busy", "Linux", "enclave",
                        "enclave / Linux"], cg),
                 table(["4-rank job start-up (MPI_Init + barrier + Finalize, median)", "Linux", "enclave",
                        "enclave / Linux"], start),
                 verdicts(STEM, data))


BLOCKS = {"mpi": render}
