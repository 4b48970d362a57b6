"""The LWK's in-kernel benchmarks (issue 2), from lwk-bench.json."""
from figures import Doc, fmt, ratio
from tables.render import block, table, verdicts

STEM = "lwk-bench"
LATENCIES = [("thread_create_join_same_core", "thread create + join, same core"),
             ("thread_create_join_other_core", "thread create + join, other core"),
             ("wakeup_condvar_ipi_kick", "condvar wake-up on another core, **with IPI kick**"),
             ("wakeup_condvar_no_kick", "condvar wake-up on another core, without kick (waits for the core's "
                                        "next yield, ≤100 µs)"),
             ("ipi_round_trip", "IPI round trip (core A → B → A)")]


def grouped(v):
    """1 149 rather than 1149, as the README writes counts."""
    return fmt(v, "{:,.0f}").replace(",", " ")


def latencies(results):
    data = results.get(STEM)
    r = Doc(data)["results"]
    rows = [[label, fmt(r[key]["median"] / 1000, "{:.1f} µs"), fmt(r[key]["mean"] / 1000, "{:.1f} µs")]
            for key, label in LATENCIES]
    kick = ratio(r["wakeup_condvar_no_kick"]["median"], r["wakeup_condvar_ipi_kick"]["median"])
    return block(data, table(["measurement", "median", "mean"], rows),
                 f"The IPI kick makes a cross-core wake-up {fmt(kick, '{:.1f}x')} faster at the median.")


def lock_name(key):
    """lock_ticket -> ticket, lock_pmtlock -> the default, lock_pmtlock_tau64 -> tau 64."""
    name = key[len("lock_"):]
    if name == "pmtlock":
        return "**pmtlock, the default tau**"
    return name.replace("pmtlock_tau", "pmtlock, tau ")


def locks(results):
    data = results.get(STEM)
    r = Doc(data)["results"]
    names = [k for k in r.keys() if k.startswith("lock_")]
    ticket = r["lock_ticket"]["throughput"]
    rows = [[lock_name(k), grouped(r[k]["throughput"]), fmt(r[k]["jain"], "{:.3f}"),
             fmt(ratio(r[k]["throughput"], ticket), "{:.0f}x")] for k in names]
    return block(data, table(["lock", "acquisitions/s", "Jain", "vs ticket"], rows), verdicts(STEM, data))


BLOCKS = {"lwk": latencies, "lwk-locks": locks}
