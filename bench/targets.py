"""Every benchmark target, in one place: what its issue asks (in the issue's
own terms), how the figure is computed from the benchmark's results file,
and the limit. The drivers' JSON and tables, `make report`'s README tables
and the status rows all judge through judge() here."""
from dataclasses import dataclass
from typing import Callable, Optional

from figures import ABSENT, Doc, absent, fmt, listed, ratio, size_text

MET, MISSED, NOT_MEASURED = "met", "missed", "not measured"
SYMBOLS = {"<=": "≤", "<": "<", ">=": "≥", ">": ">"}


@dataclass(frozen=True)
class Target:
    bench: str  # the results file's stem
    issue: int
    short: str  # a few words for the status table
    what: str  # the target as its issue defines it
    op: str  # "<=", "<", ">=", ">" or "within" (limit is then (low, high))
    limit: object
    # The figure (or a list of figures, one per run, each judged) from
    # Doc(results); ABSENT when the results lack it. None: the benchmark
    # does not measure it.
    value: Optional[Callable]
    spec: str = "{:.2f}x"  # how a figure is written
    # What is shown beside the figure (another definition's figure, the
    # other side of a comparison), or None.
    beside: Optional[Callable] = None
    note: str = ""  # why the benchmark cannot measure it (value None)
    each: str = "run"  # what each of a list of figures is

    def limit_text(self):
        unit = self.spec[self.spec.index("}") + 1:]
        if self.op == "within":
            return f"{self.limit[0]:g} .. {self.limit[1]:g}{unit}"
        return f"{SYMBOLS[self.op]} {self.limit:g}{unit}"

    def holds(self, v):
        if self.op == "within":
            return self.limit[0] <= v <= self.limit[1]
        return {"<=": v <= self.limit, "<": v < self.limit, ">=": v >= self.limit, ">": v > self.limit}[self.op]


@dataclass(frozen=True)
class Verdict:
    target: Target
    state: str  # MET, MISSED or NOT_MEASURED
    figure: str  # the figure(s) as written
    shown: str  # the figure(s) with what is beside them


def judge(target, data):
    """The target's verdict from a results file's data (a dict, or None when
    there is no results file)."""
    if target.value is None or data is None:
        why = target.note or "no results file"
        return Verdict(target, NOT_MEASURED, why, why)
    doc = Doc(data)
    value = target.value(doc)
    if absent(value):
        why = "a figure it needs is not in the results"
        return Verdict(target, NOT_MEASURED, why, why)
    runs = value if isinstance(value, list) else [value]
    held = [target.holds(v) for v in runs]
    figure = ", ".join(target.spec.format(v) for v in runs)
    if len(runs) > 1:
        figure += f" (each {target.each}; met by {sum(held)} of {len(runs)})"
    shown = f"{figure}; {target.beside(doc)}" if target.beside else figure
    return Verdict(target, MET if all(held) else MISSED, figure, shown)


def records(bench, data):
    """The bench's verdicts as the drivers keep them in their JSON."""
    return [{"what": t.what, "target": t.limit_text(), "value": v.shown, "met": v.state == MET}
            for t in TARGETS if t.bench == bench for v in [judge(t, data)]]


# --- the figures ------------------------------------------------------------

def _lock_ratio(d):
    return ratio(d["results"]["lock_pmtlock"]["throughput"], d["results"]["lock_ticket"]["throughput"])


def _prog(d, side, load, key):
    return d["results"][side][load][key]


def _prog_ratio(key, load="idle"):
    """Enclave / Linux for one per-call figure of program-bench."""
    return lambda d: ratio(_prog(d, "enclave", load, key), _prog(d, "linux", load, key))


def _served_busy(d):
    """The busy delegated write with the servers at root's nice (atoll create --serve-nice)."""
    served = d["results"]["served"]["busy"]["devnull_ns"]
    if absent(served):
        return "servers at root's nice: not measured"
    return (f"servers at nice {d['config']['SERVE_NICE']}: "
            f"{fmt(ratio(served, _prog(d, 'linux', 'busy', 'devnull_ns')), '{:.2f}x')}")


def _proc_ratio(what):
    return lambda d: ratio(d["results"]["enclave"][what]["median_ns"], d["results"]["linux"][what]["median_ns"])


def _mpi_sizes(d):
    return sorted(d["results"]["linux"]["pingpong"].keys(), key=int)


def _mpi_ratios(d, key):
    """{size: enclave / Linux} for the ping-pong figure `key`."""
    return {size: ratio(d["results"]["enclave"]["pingpong"][size][key], d["results"]["linux"]["pingpong"][size][key])
            for size in _mpi_sizes(d)}


def _mpi_worst(key, worst):
    def value(d):
        r = _mpi_ratios(d, key)
        return ABSENT if not r or absent(list(r.values())) else worst(r.values())
    return value


def _mpi_where(key, worst):
    def beside(d):
        r = _mpi_ratios(d, key)
        size = worst(r, key=r.get)
        return f"worst at {size_text(size)}"
    return beside


def _attach_vs_copy(d):
    ways = listed(ratio(d["results"][w]["attach_ns"], d["results"][w]["copy_ns"])
                  for w in ["attach_into_enclave", "attach_into_linux"])
    return ABSENT if absent(ways) else max(ways)


def _resize(step, linux_alone):
    """The Atoll step against Linux's own hotplug of the same CPU or block alone
    in the same run (offlining it to add, onlining it to remove)."""
    kind = "cpu" if step.endswith("cpu") else "block"
    return lambda d: ratio(d["results"]["table5_ms"][step]["total"],
                           d["results"]["table5_ms"][f"linux_{kind}"][linux_alone])


def _resize_beside(step, linux_alone):
    kind = "cpu" if step.endswith("cpu") else "block"
    return lambda d: (f"{fmt(d['results']['table5_ms'][step]['total'], '{:.1f}')} ms against "
                      f"{fmt(d['results']['table5_ms'][f'linux_{kind}'][linux_alone], '{:.1f}')} ms")


ENCLAVES = ["enclave, Linux untuned", "enclave, Linux tuned"]
LOADS = ["idle", "busy", "io"]


def _noise(d, column, load, key):
    return d["summary"][column][load][key]


def _noise_availability(load):
    """The worse enclave column's median against tuned Linux's, in points."""
    def value(d):
        enclave = listed(_noise(d, c, load, "availability")["median"] for c in ENCLAVES)
        tuned = _noise(d, "tuned Linux", load, "availability")["median"]
        return ABSENT if absent(enclave, tuned) else 100 * (min(enclave) - tuned)
    return value


def _noise_availability_beside(load):
    def beside(d):
        enclave = listed(_noise(d, c, load, "availability")["median"] for c in ENCLAVES)
        tuned = _noise(d, "tuned Linux", load, "availability")["median"]
        kernel = listed(_noise(d, c, load, "kernel_availability")["median"] for c in ENCLAVES)
        tuned_kernel = _noise(d, "tuned Linux", load, "kernel_availability")["median"]
        e = ABSENT if absent(enclave) else 100 * min(enclave)
        k = ABSENT if absent(kernel) else 100 * min(kernel)
        return (f"enclave {fmt(e, '{:.2f}%')} against tuned Linux {fmt(100 * tuned, '{:.2f}%')}; "
                f"but for its kernel {fmt(k, '{:.2f}%')} against {fmt(100 * tuned_kernel, '{:.2f}%')}")
    return beside


def _noise_kernel_detours(d):
    cases = [_noise(d, c, load, "kernel_per_second")["all"] for c in ENCLAVES for load in LOADS]
    rounds = ABSENT if absent(*cases) else listed(v for case in cases for v in case)
    return ABSENT if absent(rounds) else max(rounds)


def _noise_kernel_max_io(d):
    enclave = listed(_noise(d, c, "io", "kernel_max_us")["max"] for c in ENCLAVES)
    return ABSENT if absent(enclave) else ratio(max(enclave), _noise(d, "tuned Linux", "io", "kernel_max_us")["max"])


def _noise_kernel_max_io_beside(d):
    enclave = listed(_noise(d, c, "io", "kernel_max_us")["max"] for c in ENCLAVES)
    return (f"enclave {fmt(ABSENT if absent(enclave) else max(enclave), '{:.0f}')} µs against tuned Linux "
            f"{fmt(_noise(d, 'tuned Linux', 'io', 'kernel_max_us')['max'], '{:.0f}')} µs (worst rounds)")


def _noise_fwq(d):
    worst = listed(_noise(d, c, load, "fwq_worst_over_mean")["median"] for c in ENCLAVES for load in LOADS)
    return ABSENT if absent(worst) else max(worst)


def _kmsg(pair, mode, floor):
    return lambda d: ratio(d["summary"][pair]["modes"][mode]["median_us"],
                           d["summary"][pair]["modes"][floor]["median_us"])


def _kmsg_slot(pair):
    return lambda d: f"one-slot (48-byte) message {fmt(_kmsg(pair, 'slot_poll', 'line')(d), '{:.2f}x')}"


# --- the targets ----------------------------------------------------------

TASK_KERNELS = ("quicksort", "reduction")


def _start(clock):
    """The LWK's start of a program to its main / Linux's fork + exec to it."""
    return lambda d: ratio(d[clock]["kernel"]["start"]["main"]["p50"], d[clock]["linux"]["start"]["main"]["p50"])


def _hrt(clock, row, ours, theirs):
    """Speedup: Linux's (or ring 3's) median over the API's, both in one
    VM run (bench/hrt_bench.py); ours and theirs are (where, mechanism)."""
    def fig(d, side, how):
        return d[clock][side][row][how]["p50"]
    return lambda d: ratio(fig(d, *theirs), fig(d, *ours))


def _hrt_beside(clock, row, ours, theirs):
    other = _hrt(clock, row, ours, theirs)
    return lambda d: f"{fmt(other(d), '{:.2f}x')} in {'real time' if clock == 'realtime' else '-icount'}"


TARGETS = [
    # Issue 2: the LWK standalone, `make bench SMP=4`.
    Target("lwk-bench", 2, "pmtlock throughput",
           "fairbench, one thread per vCPU on 4 vCPUs: pmtlock's throughput / the ticket lock's",
           ">=", 5, _lock_ratio, spec="{:.0f}x"),
    Target("lwk-bench", 2, "pmtlock fairness", "fairbench: pmtlock's Jain's index", ">=", 0.9,
           lambda d: d["results"]["lock_pmtlock"]["jain"], spec="{:.3f}"),
    # Issue 3: enclaves on a running Linux.
    Target("enclave-bench", 3, "LWK boot",
           "the LWK's boot (SIPI to booted on every enclave CPU) / Linux onlining one CPU", "<", 1,
           lambda d: ratio(d["table5_ms"]["enclave_boot"], d["table5_ms"]["linux_online_cpu"])),
    # Issue 4: programs in an enclave.
    Target("program-bench", 4, "getpid 3x", "getpid at least 3x faster in the enclave than on Linux: Linux / enclave",
           ">=", 3, lambda d: ratio(_prog(d, "linux", "idle", "getpid_ns"), _prog(d, "enclave", "idle", "getpid_ns"))),
    Target("program-bench", 4, "getpid with Linux busy",
           "getpid in the enclave within 5% when Linux's cores are busy: busy / idle", "<=", 1.05,
           lambda d: ratio(_prog(d, "enclave", "busy", "getpid_ns"), _prog(d, "enclave", "idle", "getpid_ns"))),
    Target("program-bench", 4, "delegated call", "a delegated round trip (1-byte write to /dev/null) / a pipe round "
           "trip between two Linux processes on two cores", "<=", 1,
           lambda d: ratio(_prog(d, "enclave", "idle", "devnull_ns"), _prog(d, "linux", "idle", "pipe_rtt_ns"))),
    Target("program-bench", 4, "STREAM spread", "STREAM triad in the enclave, Linux busy: worst / best of 10",
           "<=", 1.02, lambda d: _prog(d, "enclave", "busy", "stream")["worst_over_best"], spec="{:.3f}",
           beside=lambda d: f"Linux's own {fmt(_prog(d, 'linux', 'busy', 'stream')['worst_over_best'], '{:.3f}')}"),
    Target("program-bench", 4, "CG spread", "CG solve in the enclave, Linux busy: worst / best of 10",
           "<=", 1.02, lambda d: _prog(d, "enclave", "busy", "cg")["worst_over_best"], spec="{:.3f}",
           beside=lambda d: f"Linux's own {fmt(_prog(d, 'linux', 'busy', 'cg')['worst_over_best'], '{:.3f}')}"),
    # Issue 11: messaging between kernels; the target is on the 64-byte
    # message, the one-slot figure is shown beside it.
    Target("kmsg-bench", 11, "polling Linux <-> LWK", "polling round trip of a 64-byte message, Linux <-> LWK / a "
           "cache line bounced between the same CPUs", "<=", 2, _kmsg("linux_lwk", "kmsg_poll", "line"),
           beside=_kmsg_slot("linux_lwk")),
    Target("kmsg-bench", 11, "polling LWK <-> LWK", "polling round trip of a 64-byte message, LWK <-> LWK / a "
           "cache line bounced between the same CPUs", "<=", 2, _kmsg("lwk_lwk", "kmsg_poll", "line"),
           beside=_kmsg_slot("lwk_lwk")),
    Target("kmsg-bench", 11, "interrupts Linux <-> LWK", "round trip of a 64-byte message with IPIs, Linux <-> LWK "
           "/ a bare IPI round trip", "<=", 1.2, _kmsg("linux_lwk", "kmsg_ipi", "ipi")),
    Target("kmsg-bench", 11, "interrupts LWK <-> LWK", "round trip of a 64-byte message with IPIs, LWK <-> LWK "
           "/ a bare IPI round trip", "<=", 1.2, _kmsg("lwk_lwk", "kmsg_ipi", "ipi")),
    # Issue 12: processes.
    Target("process-bench", 12, "thread start", "pthread_create + join: enclave / Linux", "<=", 2,
           _proc_ratio("threads")),
    Target("process-bench", 12, "fork", "fork + exit + wait: enclave / Linux", "<=", 1, _proc_ratio("fork")),
    Target("process-bench", 12, "signal round trip", "signal round trip (kill self, handler, return): enclave / "
           "Linux", "<=", 1, _proc_ratio("signal")),
    Target("process-bench", 12, "CPU share", "two CPU-bound programs on one enclave core each get half, within 5% "
           "(each one's share, under -icount)", "within", (0.475, 0.525),
           lambda d: listed(d["results"]["enclave"]["share_icount"]["shares"]), spec="{:.3f}", each="program",
           beside=lambda d: "in real time " + ", ".join(
               fmt(v, "{:.3f}") for v in d["results"]["enclave"]["share"]["shares"])),
    # Issue 13: MPI, over every size the issue names.
    Target("mpi-bench", 13, "latency", "MPI ping-pong latency, 8 B .. 4 MiB, no worse than Linux: enclave / Linux "
           "at the worst size", "<=", 1, _mpi_worst("half_rtt_ns", max), beside=_mpi_where("half_rtt_ns", max)),
    Target("mpi-bench", 13, "bandwidth", "MPI ping-pong bandwidth, 8 B .. 4 MiB, within 10% of Linux: enclave / "
           "Linux at the worst size", ">=", 0.9, _mpi_worst("mb_per_s", min), beside=_mpi_where("mb_per_s", min)),
    # Issue 14: XEMEM and the in-situ workflow.
    Target("insitu-bench", 14, "mean step", "in situ, the enclave's simulation beside XEMEM analytics and a "
           "compile: mean step within 5% of running alone (against the alone run before it, median)", "<=", 1.05,
           lambda d: d["results"]["enclave_xemem_busy"]["vs_alone"], spec="{:.3f}x"),
    Target("insitu-bench", 14, "spread", "in situ, the same runs' worst / best within 2% of running alone "
           "(against the alone runs' worst / best)", "<=", 1.02,
           lambda d: ratio(d["results"]["enclave_xemem_busy"]["worst_over_best"],
                           d["results"]["enclave_alone"]["worst_over_best"]), spec="{:.3f}x"),
    Target("insitu-bench", 14, "1 GiB attach", "attaching a 1 GiB segment well under copying it (taken as under "
           "0.1x; the slower direction)", "<", 0.1, _attach_vs_copy, spec="{:.3f}x"),
    Target("insitu-bench", 14, "signals enclave <-> Linux", "signal round trip enclave <-> Linux within 2x of the "
           "control channel's", "<=", 2,
           lambda d: ratio(d["results"]["signal_rtt_ns"], d["results"]["control_rtt_ns"])),
    Target("insitu-bench", 14, "signals enclave <-> enclave", "signal round trip enclave <-> enclave within 2x of "
           "the control channel's between those LWKs", "<=", 2,
           lambda d: ratio(d["results"]["peer_signal_rtt_ns"], d["results"]["peer_control_rtt_ns"])),
    # Issue 15: resizing, each step against Linux's own hotplug of the same
    # CPU or block alone in the same run (not Linux's part of the step).
    Target("resize-bench", 15, "add a CPU", "add a CPU within 1.2x of Linux's own hotplug step (offlining the "
           "same CPU)", "<=", 1.2, _resize("add_cpu", "offline"), beside=_resize_beside("add_cpu", "offline")),
    Target("resize-bench", 15, "remove a CPU", "remove a CPU within 1.2x of Linux's own hotplug step (onlining the "
           "same CPU)", "<=", 1.2, _resize("remove_cpu", "online"), beside=_resize_beside("remove_cpu", "online")),
    Target("resize-bench", 15, "add a block", "add a 128 MiB block within 1.2x of Linux's own hotplug step "
           "(offlining the same block)", "<=", 1.2, _resize("add_block", "offline"),
           beside=_resize_beside("add_block", "offline")),
    Target("resize-bench", 15, "remove a block", "remove a 128 MiB block within 1.2x of Linux's own hotplug step "
           "(onlining the same block)", "<=", 1.2, _resize("remove_block", "online"),
           beside=_resize_beside("remove_block", "online")),
    Target("resize-bench", 15, "IRS", "IRS: a 2-thread job losing one of its 2 CPUs mid-run within 5% of the "
           "ideal", "<=", 1.05, lambda d: listed(d["results"]["irs"]["vs_ideal_runs"]), spec="{:.3f}x"),
    # Issue 16: OS noise.
    Target("noise-bench", 16, "kernel noise", "kernel-attributed detours per second on an enclave CPU: zero "
           "(every round, load and Linux boot)", "<=", 0, _noise_kernel_detours, spec="{:g}/s",
           beside=lambda d: "tuned Linux (medians): " + ", ".join(
               f"{load} {fmt(_noise(d, 'tuned Linux', load, 'kernel_per_second')['median'], '{:.1f}/s')}"
               for load in LOADS)),
    *[Target("noise-bench", 16, f"availability, Linux {what}", "availability on the enclave CPU at least tuned "
             f"Linux's, Linux's other CPUs {what} (the worse enclave column's median less tuned Linux's)", ">=", 0,
             _noise_availability(load), spec="{:+.2f} points", beside=_noise_availability_beside(load))
      for load, what in [("idle", "idle"), ("busy", "CPU-bound"), ("io", "doing I/O")]],
    Target("noise-bench", 16, "largest kernel detour under I/O", "kernel-attributed largest detour under the I/O "
           "load at most 1/10 of tuned Linux's: enclave / tuned Linux", "<=", 0.1, _noise_kernel_max_io,
           beside=_noise_kernel_max_io_beside),
    Target("noise-bench", 16, "FWQ on 1 CPU", "FWQ on 1 enclave CPU: worst / mean within 1.05 (the worst load and "
           "column, median of rounds)", "<=", 1.05, _noise_fwq, spec="{:.3f}"),
    Target("noise-bench", 16, "FWQ on all CPUs", "FWQ on all of an enclave's CPUs at once: worst / mean within 1.05",
           "<=", 1.05, None, spec="{:.3f}", note="the benchmark runs FWQ on one enclave CPU only"),
    # Issue 39: the fast paths. Delegated calls and pipes against the same
    # call on Linux on the same vCPU in the same run; the message path in
    # guest instructions, exact under -icount (bench/smoke_bench.py).
    Target("program-bench", 39, "delegated write", "delegated 1-byte write to /dev/null, Linux idle: enclave / "
           "the same call on Linux", "<=", 10,
           _prog_ratio("devnull_ns")),
    Target("program-bench", 39, "delegated write, Linux busy", "delegated 1-byte write to /dev/null, Linux busy: "
           "enclave / the same call on Linux", "<=", 15,
           _prog_ratio("devnull_ns", "busy"), beside=_served_busy),
    Target("program-bench", 39, "pwrite", "delegated 1-byte pwrite to a file: enclave / Linux", "<=", 10,
           _prog_ratio("pwrite_ns")),
    Target("program-bench", 39, "pread", "delegated 4 KiB pread from a file in Linux's page cache: enclave / Linux",
           "<=", 10, _prog_ratio("pread_ns")),
    Target("program-bench", 39, "pipe between threads", "pipe round trip between two threads of one program: "
           "enclave / Linux", "<=", 3,
           _prog_ratio("pipe_threads_ns")),
    Target("program-bench", 39, "local calls", "getpid: enclave / Linux", "<=", 1,
           _prog_ratio("getpid_ns")),
    Target("process-bench", 39, "spawn from 64 MiB", "posix_spawn + wait from a 64 MiB program: enclave / Linux",
           "<=", 2, _proc_ratio("spawn")),
    Target("resize-bench", 39, "block back to Linux", "giving a 128 MiB block back to Linux (atoll remove --mem) / "
           "Linux onlining it", "<=", 1.2, _resize("remove_block", "online"),
           beside=_resize_beside("remove_block", "online")),
    Target("resize-bench", 39, "taking a block", "taking a 128 MiB block (atoll add --mem) / Linux offlining it",
           "<=", 1.1, _resize("add_block", "offline"), beside=_resize_beside("add_block", "offline")),
    *[Target("smoke-bench", 39, f"message path {way}", f"one-slot message, polling, {way}: guest instructions from "
             "the sender's call into its send function to the entry of the receiver's handler", "<=", 150,
             (lambda key: lambda d: d["path"][key])(key), spec="{:g} instructions")
      for way, key in [("Linux -> LWK", "linux_to_lwk"), ("LWK -> Linux", "lwk_to_linux")]],
    # Issue 41: the hybrid-runtime API against Linux in one VM run
    # (bench/hrt_bench.py): speedups, Linux's median over the API's at CPL 0,
    # judged under -icount (determinism; a wake-up costs its path's
    # instructions, where in real time both sides pay the host's vCPU
    # thread wake-ups); the real-time figure is beside.
    Target("hrt-bench", 41, "thread create+join", "thread create + join: Linux's pthread / the API's thread on "
           "the caller's CPU at CPL 0 (-icount)", ">=", 20,
           _hrt("icount", "thread", ("kernel", "hrt_same_cpu"), ("linux", "pthread")),
           beside=_hrt_beside("realtime", "thread", ("kernel", "hrt_same_cpu"), ("linux", "pthread"))),
    *[Target("hrt-bench", 41, short, what, ">=", limit, _hrt("icount", row, ours, theirs),
             beside=_hrt_beside("realtime", row, ours, theirs))
      for short, what, limit, row, ours, theirs in [
          ("condvar wake-up", "one waiter's wake-up on another CPU, median: Linux's pthread_cond / the API's "
           "condvar at CPL 0 (-icount)", 2, "wakeup", ("kernel", "hrt_cond"), ("linux", "pthread_cond")),
          ("Active Message wake-up", "one waiter's wake-up on another CPU, median: Linux's futex / an Active "
           "Message at CPL 0 (-icount)", 2, "wakeup", ("kernel", "hrt_am"), ("linux", "futex")),
          ("broadcast", "broadcast to a waiter on each other enclave CPU, time until the last runs, median: "
           "Linux's pthread_cond_broadcast / the API's condvar at CPL 0 (-icount)", 5, "broadcast",
           ("kernel", "hrt_cond"), ("linux", "pthread_cond"))]],
    Target("hrt-bench", 41, "direct call", "a null call: getpid by SYSCALL from ring 3 in the enclave / the "
           "API's direct call at CPL 0 (-icount)", ">=", 2,
           _hrt("icount", "call", ("kernel", "hrt_direct"), ("ring3", "getpid")),
           beside=_hrt_beside("realtime", "call", ("kernel", "hrt_direct"), ("ring3", "getpid"))),
    Target("hrt-bench", 41, "start", "from the LWK receiving the run request to the program's main at CPL 0 / "
           "Linux's fork + exec of the same static program to its main, medians of 10 (-icount)", "<=", 0.5,
           _start("icount"), beside=lambda d: f"{fmt(_start('realtime')(d), '{:.2f}x')} in real time"),
    Target("hrt-bench", 41, "task runtime", "the task runtime's quicksort and reduction, median of 10 (real "
           "time): the same source on Linux's pthreads / on the API at CPL 0", ">", 1,
           lambda d: listed(_hrt("realtime", "tasks", ("kernel", k), ("linux", k))(d) for k in TASK_KERNELS),
           each="kernel (quicksort, reduction)"),
]
