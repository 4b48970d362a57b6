"""The in-situ workflow over XEMEM (issue 14), from insitu-bench.json."""
from figures import Doc, fmt, ratio, size_text
from tables.render import block, table, verdicts

STEM = "insitu-bench"
CASES = [("linux_alone", "Linux, alone"), ("linux_xemem_busy", "Linux, XEMEM + analytics + compile"),
         ("linux_pipe_busy", "Linux, pipe + analytics + compile"), ("enclave_alone", "enclave, alone"),
         ("enclave_xemem_busy", "**enclave, XEMEM + analytics + compile**"),
         ("enclave_pipe_busy", "enclave, pipe + analytics + compile")]
WAYS = [("attach_into_enclave", "Linux's, attached in the enclave (mapped at once)"),
        ("attach_into_linux", "the enclave's, attached on Linux (mapped at first touch)")]


def ms(ns):
    return fmt(ns / 1e6, "{:.2f} ms")


def render(results):
    data = results.get(STEM)
    r = Doc(data)["results"]
    steps = [[label, *[fmt(r[case][k], "{:.3f}") for k in ["mean", "best", "worst", "worst_over_best"]],
              fmt(r[case]["vs_alone"], "{:.3f}x"),
              f"{fmt(r[case]['published'], '{:.0f}')} / {fmt(r[case]['skipped'], '{:.0f}')}"]
             for case, label in CASES]
    size = r[WAYS[0][0]]["bytes"]
    attach = [[label, ms(r[w]["attach_ns"]), ms(r[w]["touch_ns"]), ms(r[w]["copy_ns"]),
               fmt(ratio(r[w]["attach_ns"], r[w]["copy_ns"]), "{:.4f}")] for w, label in WAYS]
    us = lambda ns: fmt(ns / 1000, "{:.1f} µs")  # noqa: E731
    signals = [["an enclave and Linux", us(r["signal_rtt_ns"]), us(r["control_rtt_ns"]) + " (`atoll ping`)",
                fmt(ratio(r["signal_rtt_ns"], r["control_rtt_ns"]), "{:.2f}x")],
               ["two enclaves", us(r["peer_signal_rtt_ns"]), us(r["peer_control_rtt_ns"]) + " (`atoll ping --from`)",
                fmt(ratio(r["peer_signal_rtt_ns"], r["peer_control_rtt_ns"]), "{:.2f}x")]]
    return block(data,
                 table(["case", "mean step ms", "best run", "worst run", "worst / best",
                        "/ the alone run before it (median)", "snapshots taken / skipped"], steps),
                 table([f"{size_text(size)} segment",
                        "attach", "first touch of every page", "copy it", "attach / copy"], attach),
                 table(["between", "signal round trip (median)", "the control channel's, same two kernels",
                        "signal / control"], signals),
                 verdicts(STEM, data))


BLOCKS = {"insitu": render}
