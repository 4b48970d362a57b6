"""Message round trips next to their floors, and large messages (issue 11),
from kmsg-bench.json."""
from figures import NOT_MEASURED, Doc, fmt, ratio, size_text, text
from tables.render import block, table, verdicts

STEM = "kmsg-bench"
MODES = [("line", "cache line bounced"), ("ipi", "bare IPI and one back"),
         ("kmsg_ipi", "64-byte message, interrupts"), ("kmsg_poll", "64-byte message (two slots), both polling"),
         ("slot_poll", "one-slot (48-byte) message, both polling")]
PAIRS = [("linux_lwk", "Linux CPU 0 <-> LWK CPU 3"), ("lwk_lwk", "LWK CPU 3 <-> LWK CPU 2")]
RATIOS = [("kmsg_ipi", "ipi", "**interrupts: 64-byte message / bare IPI** (target ≤ 1.2)"),
          ("kmsg_poll", "line", "**polling: 64-byte message / cache line** (target ≤ 2)"),
          ("slot_poll", "line", "polling: one-slot message / cache line (beside it)")]


def round_trips(results):
    data = results.get(STEM)
    d = Doc(data)
    s, a = d["summary"], d["args"]
    rows = []
    for mode, label in MODES:
        cells = []
        for pair, _ in PAIRS:
            m = s[pair]["modes"][mode]
            cells.append(f"{fmt(m['median_us'], '{:.2f} µs')} ({fmt(m['spread_us'][0], '{:.2f}')}-"
                         f"{fmt(m['spread_us'][1], '{:.2f}')})")
        rows.append([label, *cells])
    for mode, floor, label in RATIOS:
        rows.append([label, *[fmt(ratio(s[p]["modes"][mode]["median_us"], s[p]["modes"][floor]["median_us"]),
                                  "{:.2f}x") for p, _ in PAIRS]])
    head = (f"Medians of {text(a['repeats'])} repeats' medians of {text(a['rounds'])} round trips per "
            "mode, the repeats' range in brackets.")
    return block(data, head, table(["round trip", *[label for _, label in PAIRS]], rows), verdicts(STEM, data))


def streams(results):
    data = results.get(STEM)
    rows = [[size_text(st["size"]), fmt(st["mb_per_s"], "{:.0f} MB/s"), fmt(st["memcpy_mb_per_s"], "{:.0f} MB/s"),
             fmt(ratio(st["mb_per_s"], st["memcpy_mb_per_s"]), "{:.2f}x")]
            for st in Doc(data)["summary"]["stream"]]
    return block(data, table(["message size", "kmsg", "memcpy()", "kmsg / memcpy"], rows or [[NOT_MEASURED] * 4]))


BLOCKS = {"kmsg": round_trips, "kmsg-stream": streams}
