"""Enclave create and destroy, and the control channel (issue 3), from
enclave-bench.json."""
from figures import Doc, fmt, ratio, text
from tables.render import block, table, verdicts

STEM = "enclave-bench"


def render(results):
    data = results.get(STEM)
    t, r = Doc(data)["table5_ms"], Doc(data)["rtt_us"]
    ms = lambda v: fmt(v, "{:.1f} ms")  # noqa: E731
    steps = [["take the CPU", ms(t["enclave_take_cpu"]), "offline: " + ms(t["linux_offline_cpu"])],
             ["take the memory block", ms(t["enclave_take_memory"]), "offline: " + ms(t["linux_offline_block"])],
             ["load the LWK", ms(t["enclave_load"]), ""],
             ["boot (SIPI to booted on every CPU)", ms(t["enclave_boot"]),
              "online the CPU: " + ms(t["linux_online_cpu"])],
             ["create, total", ms(t["enclave_create_total"]), ""],
             ["give the CPU back", ms(t["enclave_give_back_cpu"]), ""],
             ["give the memory back", ms(t["enclave_give_back_memory"]),
              "online the block: " + ms(t["linux_online_block"])],
             ["destroy, total", ms(t["enclave_destroy_total"]), ""]]
    us = lambda v: fmt(v, "{:.1f} µs")  # noqa: E731
    trips = [["message round trip, `atoll ping` (Linux <-> LWK)", us(r["channel_median"]), us(r["channel_min"])],
             ["pipe between two Linux processes on two CPUs", us(r["pipe_median"]), us(r["pipe_min"])]]
    return block(data, f"Create and destroy (median of {text(t['rounds'])}; 1 CPU, one 128 MiB block):",
                 table(["step", "enclave (Atoll)", "Linux, same CPU / block"], steps),
                 table(["round trip", "median", "min"], trips),
                 f"Message / pipe (median): {fmt(ratio(r['channel_median'], r['pipe_median']), '{:.2f}x')}.",
                 verdicts(STEM, data))


BLOCKS = {"enclave": render}
