"""Resizing a running enclave (issue 15), from resize-bench.json: each step
against Linux's own hotplug of the same CPU or block alone in the same run,
and every IRS run."""
from figures import Doc, fmt, ratio, text
from tables.render import block, joined, table, verdicts

STEM = "resize-bench"
# (step, label, the resource, Linux's own step for it: offlining to add, onlining to remove)
STEPS = [("add_cpu", "add a CPU", "cpu", "offline"), ("remove_cpu", "remove a CPU", "cpu", "online"),
         ("add_block", "add a 128 MiB block", "block", "offline"),
         ("remove_block", "remove the block", "block", "online")]


def ms(v):
    return fmt(v, "{:.1f} ms")


def render(results):
    data = results.get(STEM)
    r = Doc(data)["results"]
    t, irs = r["table5_ms"], r["irs"]
    steps = [[label, ms(t[step]["linux"]), ms(t[step]["lwk"]), ms(t[step]["total"]),
              f"{how}: {ms(t[f'linux_{kind}'][how])}", fmt(ratio(t[step]["total"], t[f"linux_{kind}"][how]), "{:.2f}x")]
             for step, label, kind, how in STEPS]
    jobs = [["on 2 CPUs", fmt(irs["two_cpus_ms"], "{:.0f} ms")], ["on 1 CPU", fmt(irs["one_cpu_ms"], "{:.0f} ms")],
            [f"2 CPUs, one removed at {fmt(irs['removed_at_ms'], '{:.0f} ms')} (median)",
             fmt(irs["removed_ms"], "{:.0f} ms")],
            ["ideal for that (the 2-CPU part, the rest at the 1-CPU rate; median)", fmt(irs["ideal_ms"], "{:.0f} ms")]]
    return block(data,
                 f"Medians of {text(t['add_cpu']['rounds'])} rounds.",
                 table(["step", "Linux's part", "LWK's part", "Atoll total",
                        "Linux's own step alone, same CPU or block", "Atoll total / Linux's own step"], steps),
                 "Linux's own online right after its offline (the baseline above) skips the RCU grace period "
                 "the offline waited for; after a pause of half a second, as a step alone, it took "
                 f"{ms(t['linux_cpu']['online_after_pause'])} for the CPU and "
                 f"{ms(t['linux_block']['online_after_pause'])} for the block (remove a CPU / that: "
                 f"{fmt(ratio(t['remove_cpu']['total'], t['linux_cpu']['online_after_pause']), '{:.2f}x')}, "
                 f"remove the block / that: "
                 f"{fmt(ratio(t['remove_block']['total'], t['linux_block']['online_after_pause']), '{:.2f}x')}).",
                 table(["IRS job", "time"], jobs),
                 f"Job / ideal, each of the {text(irs['runs'])} runs: {joined(irs['vs_ideal_runs'], '{:.3f}')}. "
                 f"The removal took {ms(irs['remove_ms'])}, {ms(irs['remove_lwk_ms'])} of it the LWK's; without "
                 f"migration the CPU could only have gone {fmt(irs['wait_without_migration_ms'], '{:.0f} ms')} later, "
                 "when the job's thread there ended.",
                 verdicts(STEM, data))


BLOCKS = {"resize": render}
