"""The guest kernel's complaints: lines of the test VM's console that mean
Linux found something wrong (a WARN(), a BUG or oops, sleeping in atomic
context, a lockup, a hung task, refcount or list corruption, a slab or page
poison report). scripts/vm.py fails a run whose console has one that ALLOWED
does not excuse, after the script has run to its end."""
import re

# What Linux prints when it finds a fault, each with what it means. Matched
# against the text after a kernel line's timestamp.
COMPLAINTS = [
    (r"BUG: soft lockup", "a soft lockup"),
    (r"WARNING: CPU: \d+ PID: \d+ at ", "a WARN()"),
    (r"(?<![\w-])BUG: ", "a BUG report (incl. sleeping in atomic context, "
                         "scheduling while atomic, bad page state)"),
    (r"kernel BUG at ", "a BUG()"),
    (r"Oops: ", "an oops"),
    (r"general protection fault", "a general protection fault"),
    (r"scheduling while atomic", "scheduling while atomic"),
    (r"sleeping function called from invalid context", "sleeping in atomic context"),
    (r"Watchdog detected hard LOCKUP", "a hard lockup"),
    (r"INFO: task .* blocked for more than \d+ seconds", "a hung task"),
    (r"rcu: INFO: .*detected stall", "an RCU stall"),
    (r"refcount_t: ", "a refcount_t report"),
    (r"list_(add|del) corruption|list corruption", "list corruption"),
    (r"^BUG [\w.:-]+ \(.*\): ", "a slab report (red zone, poison, free pointer)"),
    (r"pagealloc: (memory corruption|single bit error)", "a page poison report"),
    (r"Bad page (state|map)", "a bad page"),
    (r"UBSAN: ", "undefined behaviour (UBSAN)"),
    (r"KFENCE: ", "a KFENCE report"),
    (r"kmemleak: \d+ new suspected memory leaks", "a memory leak (kmemleak)"),
    (r"Kernel panic", "a kernel panic"),
]

# Lines that match a complaint but that Linux prints on its own, each with
# the reason it is no fault of the run. Empty: nothing has needed excusing.
# (Offlining a block prints "page dumped because: unmovable page" dumps at
# warning level; they match no complaint, so they need no entry here.)
ALLOWED = []

# The last line a run's complaints are looked for in. After it Linux has
# stopped its other CPUs (marked offline, still active) and halts: a timer
# may still wake a task onto a stopped CPU, and set_task_cpu() WARNs that
# the CPU is offline (seen in a test that left its enclave up, 2026-11-28).
# None of the run's code runs there.
POWER_DOWN = re.compile(r"reboot: Power down")

# The kinds that are a CPU or task stuck: scripts/vm.py may run a VM once
# more after one of these outside Atoll (the repeat is then counted).
STALLS = {"a soft lockup", "a hard lockup", "a hung task", "an RCU stall"}

TIMESTAMP = re.compile(r"\[\s*\d+\.\d+\] ")
# Kernel lines shown with a complaint's: before it (a WARN's message comes
# first) and after it (its report).
CONTEXT_BEFORE, CONTEXT_LINES = 2, 12

_COMPLAINTS = [(re.compile(p), what) for p, what in COMPLAINTS]
_ALLOWED = [(re.compile(p), why) for p, why in ALLOWED]


def kernel_text(line):
    """The kernel message in `line` (after its timestamp), or None if the
    line has none. A message may follow script output on the same line."""
    m = TIMESTAMP.search(line)
    return line[m.end():] if m else None


def scan(console, but_stalls=False):
    """The complaints in `console`: a list of (what, lines), lines being the
    complaint's line and the kernel lines around it (CONTEXT_*).
    but_stalls: leave STALLS out (a run repeated for one)."""
    lines = console.splitlines()
    found, shown_to = [], -1
    for i, line in enumerate(lines):
        text = kernel_text(line)
        if text is None:
            continue
        if POWER_DOWN.search(text):
            break
        what = next((w for p, w in _COMPLAINTS if p.search(text)), None)
        if what is None or any(p.search(text) for p, _ in _ALLOWED):
            continue
        if but_stalls and what in STALLS:
            continue
        if i <= shown_to:  # part of a report already shown: count it with it
            continue
        before = [near for near in lines[max(shown_to + 1, i - 4 * CONTEXT_BEFORE):i]
                  if kernel_text(near) is not None][-CONTEXT_BEFORE:]
        after = [near for near in lines[i + 1:i + 1 + 4 * CONTEXT_LINES]
                 if kernel_text(near) is not None][:CONTEXT_LINES]
        shown_to = i + CONTEXT_LINES
        found.append((what, before + [line] + after))
    return found


def describe(found):
    """A block of text for a run's output: each complaint and its lines."""
    out = [f"vm: the guest kernel complained {len(found)} time(s); "
           "the run fails (scripts/kernel_complaints.py lists what counts):"]
    for what, lines in found:
        out.append(f"--- {what}:")
        out += lines
    return "\n".join(out) + "\n"
