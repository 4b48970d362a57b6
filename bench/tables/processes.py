"""Processes in an enclave against Linux (issue 12), from process-bench.json."""
from figures import Doc, fmt, ratio, text
from tables.render import block, joined, table, verdicts

STEM = "process-bench"
PER_CALL = [("threads", "pthread_create + join"), ("fork", "fork + exit + wait"),
            ("spawn", "posix_spawn + wait from a 64 MiB program"), ("signal", "signal round trip")]
CLOCKS = [("share", "real time"), ("share_icount", "-icount")]


def render(results):
    data = results.get(STEM)
    d = Doc(data)
    L, E = d["results"]["linux"], d["results"]["enclave"]
    us = lambda ns: fmt(ns / 1000, "{:.1f} µs")  # noqa: E731
    calls = [[label, us(L[k]["median_ns"]), us(E[k]["median_ns"]),
              fmt(ratio(E[k]["median_ns"], L[k]["median_ns"]), "{:.2f}x")] for k, label in PER_CALL]
    shares = []
    for key, clock in CLOCKS:
        shares += [[f"each copy's share, {clock}", *[joined(s[key]["shares"], "{:.3f}") for s in (L, E)]],
                   [f"lowest and highest over the rounds, {clock}",
                    *[joined(s[key]["spread"], "{:.3f}", " .. ") for s in (L, E)]],
                   [f"the smaller copy's part of the two's work, {clock}",
                    *[fmt(s[key]["split"], "{:.3f}") for s in (L, E)]]]
    rounds = fmt(d["config"]["SHARE_ROUNDS"], "{}")
    return block(data, f"Medians of {text(d['config']['REPS'])} repetitions.",
                 table(["per operation", "Linux", "enclave", "enclave / Linux"], calls),
                 table([f"CPU share (two copies on one core, against one alone; medians of {rounds} rounds)",
                        "Linux", "enclave"], shares),
                 verdicts(STEM, data))


BLOCKS = {"processes": render}
