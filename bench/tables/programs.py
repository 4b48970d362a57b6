"""Programs in an enclave against the same programs on Linux (issues 4 and 39),
from program-bench.json."""
from figures import Doc, absent, fmt, ratio, text
from tables.render import block, table, verdicts

STEM = "program-bench"
SIDES = [("linux", "idle"), ("linux", "busy"), ("enclave", "idle"), ("enclave", "busy")]


def us(ns):
    return fmt(ns / 1000, "{:.2f} µs")


def per_call(results):
    data = results.get(STEM)
    r = Doc(data)["results"]
    rows = []
    for key, label in [("getpid_ns", "getpid (local in the enclave)"),
                       ("devnull_ns", "1-byte write to /dev/null (delegated from the enclave)"),
                       ("pwrite_ns", "1-byte pwrite to a file (delegated)"),
                       ("pread_ns", "4 KiB pread from a file in the page cache (delegated)"),
                       ("pipe_threads_ns", "pipe round trip between two threads of one program"),
                       ("threads_ns", "pthread_create + join")]:
        rows.append([label, *[us(r[side][load][key]) for side, load in SIDES],
                     fmt(ratio(r["enclave"]["idle"][key], r["linux"]["idle"][key]), "{:.2f}x")])
    pipe = [us(r["linux"][load]["pipe_rtt_ns"]) for load in ["idle", "busy"]]
    rows.insert(2, ["pipe round trip, two Linux processes on two CPUs", *pipe, "", "", ""])
    if not absent(r["served"]):
        nice = Doc(data)["config"]["SERVE_NICE"]
        served = [us(r["served"][load]["devnull_ns"]) for load in ["idle", "busy"]]
        rows.insert(2, [f"1-byte write to /dev/null, servers at nice {text(nice)} (atoll create --serve-nice)",
                        *[us(r["linux"][load]["devnull_ns"]) for load in ["idle", "busy"]], *served,
                        fmt(ratio(r["served"]["idle"]["devnull_ns"], r["linux"]["idle"]["devnull_ns"]), "{:.2f}x")])
    header = ["per call (median)", "Linux idle", "Linux busy", "enclave idle", "enclave busy",
              "enclave / Linux, idle"]
    return block(data, table(header, rows))


def spread(run):
    return (f"{fmt(run['mean'] * 1000, '{:.1f} ms')}, {fmt(run['spread'] * 100, '{:.1f}%')}, "
            f"{fmt(run['worst_over_best'], '{:.3f}')}")


def runs(results):
    data = results.get(STEM)
    d = Doc(data)
    r, c = d["results"], d["config"]
    unknowns = fmt(c["CG_N"] * c["CG_N"], "{:.0f}")
    rows = []
    for what, label in [("stream", f"STREAM triad ({text(c['STREAM_N'])} elements)"),
                        ("cg", f"CG solve (2D Poisson, {unknowns} unknowns, {text(c['CG_ITERS'])} iterations)")]:
        for load, how in [("idle", "Linux idle"), ("busy", "Linux busy")]:
            rows.append([f"{label}, {how}", spread(r["linux"][load][what]), spread(r["enclave"][load][what])])
    header = [f"{text(c['RUNS'])} runs, {text(c['K'])} core",
              "on Linux: mean, spread, worst/best", "in the enclave: mean, spread, worst/best"]
    return block(data, table(header, rows), verdicts(STEM, data))


BLOCKS = {"programs": per_call, "programs-runs": runs}
