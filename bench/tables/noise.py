"""OS noise on one vCPU, five ways and under three loads (issue 16), from
noise-bench.json."""
from figures import ABSENT, Doc, absent, fmt, text
from tables.render import block, table, verdicts

STEM = "noise-bench"
COLUMNS = ["untuned Linux", "isolated cgroup partition", "tuned Linux", "enclave, Linux untuned",
           "enclave, Linux tuned"]
LOADS = {"idle": "Linux's other CPUs idle", "busy": "Linux's other CPUs CPU-bound",
         "io": "Linux's other CPUs doing disk I/O (interrupts)"}
ROWS = [
    ("availability", "available", lambda v: f"{100 * v:.2f}%"),
    ("kernel_availability", "available but for its kernel", lambda v: f"{100 * v:.2f}%"),
    ("per_second", "detours/s", lambda v: f"{v:.0f}"),
    ("max_us", "largest detour", lambda v: f"{v:.0f} µs"),
    ("p99_us", "p99 detour", lambda v: f"{v:.0f} µs"),
    ("kernel_per_second", "by its kernel, /s", lambda v: f"{v:.1f}"),
    ("kernel_max_us", "by its kernel, largest", lambda v: f"{v:.0f} µs"),
    ("interrupts_per_second", "interrupts on the CPU, /s", lambda v: f"{v:.1f}"),
    ("fwq_worst_over_mean", "FWQ worst/mean", lambda v: f"{v:.3f}"),
    ("fwq_p99_over_mean", "FWQ p99/mean", lambda v: f"{v:.3f}"),
]


def cell(s, write, host_dominated=False):
    """Median (min–max) over the rounds; ‡ where the host caused most detours."""
    if absent(s["median"], s["min"], s["max"]):
        return fmt(s["median"])
    text = write(s["median"])
    if s["min"] != s["max"]:
        text += f" ({write(s['min'])}–{write(s['max'])})"
    return text + (" ‡" if host_dominated else "")


def measured_cpu(d):
    """The guest CPU the probes ran on, as they recorded it."""
    for probes in d["probes"]:
        return d["probes"][probes]["selfish"][0]["cpu"]
    return ABSENT


def tables(d):
    """The header line and one table per load, as lines."""
    a = d["args"]
    out = [f"Each cell: median of {text(a['rounds'])} rounds (min–max); selfish detour {text(a['seconds'])} s "
           f"at a {fmt(a['threshold_ns'] / 1e3, '{:.0f}')} µs threshold, FWQ {text(a['fwq_seconds'])} s of "
           f"1 ms quanta, on guest CPU {text(measured_cpu(d))}. Tuned Linux boots with "
           f"`{text(d['tuned_cmdline'])}`. ‡: most detours were not the kernel's (the hypervisor or the host took "
           "the vCPU).", ""]
    for load, title in LOADS.items():
        rows = []
        for key, name, write in ROWS:
            cells = []
            for column in COLUMNS:
                s = d["summary"][column][load]
                dominated = key == "per_second" and not absent(s["others_share"]["median"]) \
                    and s["others_share"]["median"] > 0.5
                cells.append(cell(s[key], write, dominated))
            rows.append([name, *cells])
        out += [f"**{title}**", "", table(["", *COLUMNS], rows), ""]
    return out


def render(results):
    data = results.get(STEM)
    return block(data, "\n".join(tables(Doc(data))).rstrip())


def targets(results):
    data = results.get(STEM)
    return block(data, verdicts(STEM, data))


BLOCKS = {"noise": render, "noise-targets": targets}
