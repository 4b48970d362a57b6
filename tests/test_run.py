"""System tests of `atoll run`: unmodified static Linux programs
(tests/programs, built here by scripts/build-programs.sh) in an enclave of
the Debian-kernel test VM, checked the way a user would check them.

Two VM runs, each a module-scoped fixture whose script prints one section
per command (its stdout, its stderr, its exit status); the tests below each
check one subject in those sections, so one boot serves many tests:
  - `programs`: hello (glibc, musl, static-pie), argv/envp/exit status,
    pthreads and OpenMP on every enclave core and with --threads, file I/O
    seen from Linux, pipes inside the enclave, fatal signals;
  - `lifecycle`: mmap churn and the LWK's free memory, unsupported system
    calls, --strict, SIGINT, then destroy.
args and fileio also run on the VM's Linux, and their outputs must match.
Each program checks its own results and exits non-zero on a wrong one, so
all of them can be tried on any x86-64 Linux as they are."""
import hashlib
import json
import os
import re

import pytest

from program_mode import script_for
from resources import RESOURCES

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEEDED = ["build/atoll.ko", "build/atoll-test", "build/atoll-kernel"]
ENCLAVE_CPUS = 3          # the VM has 4; Linux keeps CPU 0
RUN_TIMEOUT = 120         # seconds one `atoll run` may take before it is killed
KERNEL_LINE = re.compile(r"^\[\s*\d+\.\d+\] ")

# glibc calls these at startup and in pthread_create and falls back when they
# fail with ENOSYS; a program that never asked for anything unusual should
# run without a report about them (and survive --strict).
GLIBC_PROBES = "rseq (334) at startup, clone3 (435) in pthread_create"

# Shell functions both scripts use. run NAME CMD...: runs CMD (killed after
# RUN_TIMEOUT s) and prints "=== NAME", its stdout, "--- stderr", its
# stderr and "--- status N".
GUEST_LIB = RESOURCES + r'''
show() { [ -s "$1" ] && { cat "$1"; [ -z "$(tail -c 1 "$1")" ] || echo; }; return 0; }
run() {
    name=$1; shift
    timeout -s KILL RUN_TIMEOUT "$@" > /tmp/out 2> /tmp/err
    st=$?
    echo "=== $name"; show /tmp/out
    echo "--- stderr"; show /tmp/err
    echo "--- status $st"
}
section() { echo "=== $1"; }
'''.replace("RUN_TIMEOUT", str(RUN_TIMEOUT))


@pytest.fixture(scope="module", autouse=True)
def built():
    missing = [p for p in NEEDED if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        pytest.fail(f"missing {missing}: run `make module cli kernel` first")


class Section:
    def __init__(self, name, stdout, stderr, status):
        self.name, self.stdout, self.stderr, self.status = name, stdout, stderr, status

    def __str__(self):
        return (f"=== {self.name} (status {self.status})\n--- stdout\n{self.stdout}"
                f"--- stderr\n{self.stderr}")

    def lines(self):
        return self.stdout.splitlines()


class Run:
    """One VM run: its result and its sections by name."""

    def __init__(self, res):
        self.res, self.sections = res, {}
        name, part, buf = None, None, {}
        for line in res.output.splitlines(keepends=True):
            if line.startswith("=== "):
                self._close(name, buf)
                name, part, buf = line[4:].strip(), "stdout", {"stdout": "", "stderr": "", "status": None}
            elif name is None or KERNEL_LINE.match(line):
                continue
            elif line.startswith("--- stderr"):
                part = "stderr"
            elif line.startswith("--- status "):
                buf["status"] = int(line.split()[2])
                self._close(name, buf)
                name = None
            else:
                buf[part] += line
        self._close(name, buf)

    def _close(self, name, buf):
        if name is not None and name not in self.sections:
            self.sections[name] = Section(name, buf["stdout"], buf["stderr"], buf["status"])

    def tail(self, n=6000):
        return f"VM status {self.res.status}; output (end):\n{self.res.output[-n:]}"

    def __getitem__(self, name):
        if name not in self.sections:
            pytest.fail(f"no section '{name}' in the VM's output\n{self.tail()}")
        return self.sections[name]


def boot(tmp_path_factory, programs, body, timeout):
    import vm as vm_tool  # scripts/vm.py (conftest puts scripts/ on the path)

    script = tmp_path_factory.mktemp("script") / "run.sh"
    script.write_text(GUEST_LIB + body)
    return Run(vm_tool.run_vm(str(script), extra_dir=str(programs), timeout=timeout, echo=False))


def reports(sec):
    """The lines `atoll run` printed about unsupported system calls."""
    return re.findall(r"^atoll run: system call .*$", sec.stderr, re.M)


def assert_ran(sec, status=0):
    assert sec.status == status, f"expected exit status {status}:\n{sec}"


def assert_nothing_lost(run):
    lines = re.findall(r"^RESOURCES (.*)$", run.res.output, re.M)
    assert len(lines) == 2, f"expected a RESOURCES line before create and after destroy\n{run.tail()}"
    assert lines[0] == lines[1], "Linux's CPUs or memory changed:\n" + "\n".join(lines)
    assert "cpus=0-3" in lines[0], lines[0]


def status_json(sec):
    lines = [line for line in sec.lines() if line.startswith("{")]
    assert lines, f"no `atoll --json status` line:\n{sec}"
    st = json.loads(lines[-1])
    for key in ["lwk_free_bytes", "lwk_total_bytes", "programs"]:
        assert key in st, f"`atoll --json status` has no {key}:\n{sec}"
    return st


def value(sec, key):
    m = re.search(rf"\b{key}=(\S+)", sec.stdout)
    assert m, f"no {key}= in the output:\n{sec}"
    return m.group(1)


# ---- run 1: programs ------------------------------------------------------

PROGRAMS_SCRIPT = r'''
ENCLAVE_CPUS=%d
resources
musl() { [ -x /extra/$1-musl ]; }

# File I/O fixtures: Linux makes the directory the program lists and reads.
mkdir -p /tmp/fio/work /tmp/fio/list /tmp/fio-linux/work
cd /tmp/fio/list
printf 'line one\nline two\n' > input.txt
i=0
suffix=with-a-name-long-enough-that-three-hundred-of-them-need-more-than-one-getdents64-call-with-a-32-KiB-buffer
while [ $i -lt 300 ]; do i=$((i + 1)); echo "file-$i-$suffix"; done | xargs touch
mkdir subdir
cd /

# The same binaries on Linux, to compare with.
run native_args env ATOLL_TEST_VAR='a=b c' ATOLL_TEST_EMPTY= /extra/args 42 "two words" "" 'ü'
(cd /tmp/fio-linux && run native_fileio /extra/fileio work ../../fio/list)

atoll create --cpus $ENCLAVE_CPUS --mem 512M --name e1 || { echo "CREATE FAILED"; resources; exit 10; }
section status
atoll --json status e1

run hello atoll run e1 -- /extra/hello
musl hello && run hello_musl atoll run e1 -- /extra/hello-musl
run hello_pie atoll run e1 -- /extra/hello-pie
run hello_stats atoll run e1 --stats -- /extra/hello
run args env ATOLL_TEST_VAR='a=b c' ATOLL_TEST_EMPTY= atoll run e1 -- /extra/args 42 "two words" "" 'ü'
musl args && run args_musl env ATOLL_TEST_VAR='a=b c' atoll run e1 -- /extra/args-musl 7 x
run args_none atoll run e1 -- /extra/args

run pthreads atoll run e1 -- /extra/pthreads
run pthreads_threads2 atoll run e1 --threads 2 -- /extra/pthreads
run pthreads_more_than_cores atoll run e1 --threads 2 -- /extra/pthreads 8
musl pthreads && run pthreads_musl atoll run e1 -- /extra/pthreads-musl
run openmp atoll run e1 -- /extra/openmp
run openmp_threads1 atoll run e1 --threads 1 -- /extra/openmp

(cd /tmp/fio && run fileio atoll run e1 -- /extra/fileio work ../list)
section fileio_linux
cd /tmp/fio
echo "md5 $(md5sum work/data.bin | cut -d' ' -f1)"
echo "size $(stat -c %%s work/data.bin)"
echo "mode $(stat -c %%a work/data.bin)"
echo "work $(ls work | tr '\n' ' ')"
echo "made-here $(ls work/made-here | tr '\n' ' ')"
echo "kept $(cat work/made-here/kept)"
sed 's/^/notes /' work/notes.txt
ls -1 list | sed 's/^/ls /'
cd /

run native_pipes /extra/pipes
run pipes atoll run e1 -- /extra/pipes
run pipes_rounds atoll run e1 --stats -- /extra/pipes rounds 3000

run segv atoll run e1 -- /extra/segv
run after_segv atoll run e1 -- /extra/hello
run fpe atoll run e1 -- /extra/fpe
run ill atoll run e1 -- /extra/ill
run after_signals atoll run e1 -- /extra/hello

atoll destroy e1 || { echo "DESTROY FAILED"; exit 11; }
resources
''' % ENCLAVE_CPUS


@pytest.fixture(scope="module")
def programs_run(tmp_path_factory, programs, program_mode):
    return boot(tmp_path_factory, programs, script_for(program_mode, PROGRAMS_SCRIPT), timeout=900)


def test_programs_vm_run_completed(programs_run):
    """The enclave was created and destroyed, and Linux got everything back."""
    assert programs_run.res.status == 0, programs_run.tail()
    assert_nothing_lost(programs_run)
    status = status_json(programs_run["status"])
    assert len(status["cpus"]) == ENCLAVE_CPUS, str(status)


def test_plain_programs_get_no_reports(programs_run):
    """Programs that ask for nothing unusual run without a word from `atoll
    run` about unsupported system calls: the calls glibc probes and falls
    back from must fail quietly."""
    noisy = [sec for name, sec in programs_run.sections.items()
             if not name.startswith("native_") and reports(sec)]
    assert not noisy, (f"reports about unsupported system calls (glibc's {GLIBC_PROBES} must fail "
                       "quietly with ENOSYS):\n" + "\n".join(map(str, noisy)))


def test_hello_glibc_and_static_pie(programs_run):
    sec = programs_run["hello"]
    assert_ran(sec)
    assert sec.stdout == "hello from /extra/hello (glibc, static)\n", str(sec)
    sec = programs_run["hello_pie"]
    assert_ran(sec)
    assert sec.stdout == "hello from /extra/hello-pie (glibc, static-pie)\n", str(sec)


def test_stats_sum_up_the_delegated_calls(programs_run):
    """`atoll run --stats`: after the program's own output, how many calls
    Linux performed for it, the costliest kinds first."""
    sec = programs_run["hello_stats"]
    assert_ran(sec)
    assert sec.stdout == "hello from /extra/hello (glibc, static)\n", str(sec)
    total = re.search(r"^atoll run: (\d+) delegated system calls, \d+\.\d{3} s performing them on Linux$",
                      sec.stderr, re.M)
    assert total and int(total.group(1)) >= 1, str(sec)
    assert re.search(r"^  write +[1-9]\d* calls? +\d+\.\d{3} s +\d+\.\d µs each$", sec.stderr, re.M), str(sec)


def test_hello_musl(programs_run, programs):
    if not (programs / "hello-musl").exists():
        pytest.skip("musl-gcc is not installed (apt install musl-tools)")
    sec = programs_run["hello_musl"]
    assert_ran(sec)
    assert sec.stdout == "hello from /extra/hello-musl (musl, static)\n", str(sec)


def test_argv_envp_auxv_and_exit_status(programs_run, programs):
    sec = programs_run["args"]
    assert_ran(sec, status=42)
    for line in ["argc=5", "argv[0]=/extra/args", "argv[1]=42", "argv[2]=two words", "argv[3]=",
                 "argv[4]=ü", "env ATOLL_TEST_VAR=a=b c", "env ATOLL_TEST_EMPTY=",
                 "getenv ATOLL_TEST_VAR=a=b c", "auxv AT_PAGESZ=4096", "auxv AT_RANDOM=present",
                 "auxv AT_PHDR=present", "auxv AT_ENTRY=present", "stack argv%16=8", "exit 42"]:
        assert line in sec.lines(), f"missing line {line!r}:\n{sec}"
    assert "FAIL" not in sec.stdout, str(sec)
    # The same binary, same arguments and environment, on Linux.
    native = programs_run["native_args"]
    assert native.status == 42, str(native)
    assert sec.stdout == native.stdout, f"differs from the same program on Linux:\n{sec}\n{native}"

    sec = programs_run["args_none"]
    assert_ran(sec, status=0)
    assert "argc=1" in sec.lines() and "getenv ATOLL_TEST_VAR=(unset)" in sec.lines(), str(sec)

    if (programs / "args-musl").exists():
        sec = programs_run["args_musl"]
        assert_ran(sec, status=7)
        for line in ["argc=3", "argv[2]=x", "env ATOLL_TEST_VAR=a=b c", "auxv AT_PAGESZ=4096", "exit 7"]:
            assert line in sec.lines(), f"musl: missing line {line!r}:\n{sec}"


def test_pthreads_on_every_enclave_core(programs_run, programs):
    cases = [("pthreads", ENCLAVE_CPUS, ENCLAVE_CPUS), ("pthreads_threads2", 2, 2),
             ("pthreads_more_than_cores", 2, 8)]
    if (programs / "pthreads-musl").exists():
        cases.append(("pthreads_musl", ENCLAVE_CPUS, ENCLAVE_CPUS))
    for name, cpus, threads in cases:
        sec = programs_run[name]
        assert_ran(sec)
        assert f"cpus={cpus} threads={threads}" in sec.lines(), \
            f"{name}: expected {cpus} CPUs in the affinity mask and {threads} threads:\n{sec}"
        for line in [f"counter={threads * 20000} expected={threads * 20000}",
                     f"handoffs={threads * 50} expected={threads * 50}",
                     f"distinct tids={threads}", "pthreads: ok"]:
            assert line in sec.lines(), f"{name}: missing line {line!r}:\n{sec}"


def test_openmp_on_every_enclave_core(programs_run):
    for name, threads in [("openmp", ENCLAVE_CPUS), ("openmp_threads1", 1)]:
        sec = programs_run[name]
        assert_ran(sec)
        for line in [f"max_threads={threads} procs={threads}", f"team={threads} threads_seen={threads}",
                     "sum=499999500000 expected=499999500000", "openmp: ok"]:
            assert line in sec.lines(), f"{name}: missing line {line!r}:\n{sec}"


def fileio_pattern():
    """The bytes tests/programs/fileio.c writes (xorshift64, little-endian)."""
    size, s, mask, out = 1048576 + 12345, 0x9E3779B97F4A7C15, (1 << 64) - 1, bytearray()
    while len(out) < size:
        s ^= (s << 13) & mask
        s ^= s >> 7
        s ^= (s << 17) & mask
        out += s.to_bytes(8, "little")
    return bytes(out[:size])


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & ((1 << 64) - 1)
    return h


def test_file_io_as_seen_from_linux(programs_run):
    sec, linux = programs_run["fileio"], programs_run["fileio_linux"]
    assert_ran(sec)
    assert "fileio: ok" in sec.lines() and "FAIL" not in sec.stdout, str(sec)
    data = fileio_pattern()
    assert f"data bytes={len(data)} fnv1a64={fnv1a64(data):016x}" in sec.lines(), str(sec)
    # Relative paths resolve against `atoll run`'s working directory.
    assert "cwd=/tmp/fio/work" in sec.lines(), str(sec)
    # What the program wrote, read by Linux.
    expect = [f"md5 {hashlib.md5(data).hexdigest()}", f"size {len(data)}", "mode 644",
              "work data.bin made-here notes.txt ", "made-here kept ", "kept kept",
              "notes note 1 of 3", "notes note 2 of 3", "notes note 3 of 3", "notes written by writev"]
    for line in expect:
        assert line in linux.lines(), f"Linux sees something else than {line!r}:\n{linux}\n{sec}"
    # What Linux wrote, read by the program; the listing is `ls`'s.
    assert "input line one" in sec.lines() and "input line two" in sec.lines(), str(sec)
    listed = [line[6:] for line in sec.lines() if line.startswith("entry ")]
    ls = [line[3:] for line in linux.lines() if line.startswith("ls ")]
    assert len(ls) == 302, str(linux)
    assert listed == ls, f"readdir in the enclave and ls on Linux differ:\n{sec}\n{linux}"
    # Errors, with the C library's texts.
    assert "error missing=ENOENT noexec=EACCES dirwrite=EISDIR notdir=ENOTDIR" in sec.lines(), str(sec)
    assert "strerror missing: No such file or directory" in sec.lines(), str(sec)
    assert "strerror noexec: Permission denied" in sec.lines(), str(sec)
    # Same output as the binary on Linux, but for where it ran.
    native = programs_run["native_fileio"]
    assert native.status == 0, str(native)
    assert [line for line in sec.lines() if not line.startswith("cwd=")] == \
        [line for line in native.lines() if not line.startswith("cwd=")], f"differs from Linux:\n{sec}\n{native}"


def test_pipes_in_an_enclave_behave_as_on_linux(programs_run):
    """tests/programs/pipes.c: threads, a long transfer, readv/writev, end
    of file after a forked writer's end, EPIPE and SIGPIPE, O_NONBLOCK, a
    signal during a read, poll and /proc/self/fd (which move a pipe to
    Linux with its bytes), dup2 and exec: the same lines as on Linux."""
    native, sec = programs_run["native_pipes"], programs_run["pipes"]
    assert_ran(native)
    assert_ran(sec)
    assert "FAIL" not in sec.stdout and sec.stdout == native.stdout, f"{sec}\non Linux:\n{native}"


def test_a_pipe_between_threads_stays_in_the_enclave(programs_run):
    """3000 one-byte round trips between two threads of a program are 12000
    reads and writes: none of them is delegated to Linux (`--stats` counts
    what was)."""
    sec = programs_run["pipes_rounds"]
    assert_ran(sec)
    assert sec.stdout == "round trips: no wrong bytes\n", str(sec)
    counts = {m.group(1): int(m.group(2)) for m in re.finditer(r"^  (\w+) +(\d+) calls? ", sec.stderr, re.M)}
    assert counts.get("read", 0) < 10 and counts.get("write", 0) < 10, f"calls that reached Linux: {counts}\n{sec}"


@pytest.mark.parametrize("prog,sig,status,text", [
    ("segv", "SIGSEGV", 139, "Segmentation fault"),
    ("fpe", "SIGFPE", 136, "Floating point exception"),
    ("ill", "SIGILL", 132, "Illegal instruction"),
])
def test_fatal_signal_ends_only_the_program(programs_run, prog, sig, status, text):
    sec = programs_run[prog]
    assert sec.status == status, f"{prog} should be killed by {sig}: status {status}:\n{sec}"
    assert text in sec.stderr, f"`atoll run` should say {text!r} on stderr:\n{sec}"
    assert "FAIL" not in sec.stdout and sec.stdout.strip(), str(sec)
    # The enclave runs the next program as if nothing happened.
    after = programs_run["after_segv" if prog == "segv" else "after_signals"]
    assert_ran(after)
    assert after.stdout.startswith("hello from /extra/hello"), str(after)


# ---- run 2: memory, unsupported calls, --strict, SIGINT, destroy -----------

LIFECYCLE_SCRIPT = r'''
ENCLAVE_CPUS=%d
resources
atoll create --cpus $ENCLAVE_CPUS --mem 512M --name e1 || { echo "CREATE FAILED"; resources; exit 10; }
lwk_free() { atoll --json status e1 | sed -n 's/.*"lwk_free_bytes": *\([0-9]*\).*/\1/p'; }
# The LWK frees a program's memory once `atoll run` has exited: wait up to 2 s.
settle() {
    i=0
    while [ "$(lwk_free)" != "$1" ] && [ $i -lt 20 ]; do sleep 0.1; i=$((i + 1)); done
    echo "settled after $i polls"
    atoll --json status e1
}
section status_before
atoll --json status e1
before=$(lwk_free)

run churn atoll run e1 -- /extra/mmap_churn 1000
section status_after_churn
settle "$before"

run inflight atoll run e1 -- /extra/unmap_inflight 4
section status_after_inflight
settle "$before"

# Calls at a changing rate (the server polls, sleeps, wakes), the status
# sampled meanwhile for its call rate and polling window.
( for i in 1 2 3 4 5 6; do sleep 0.5; atoll --json status e1; done ) > /tmp/rate.json &
run callrate atoll run e1 -- /extra/callrate /tmp/callrate.out $ENCLAVE_CPUS 3
wait
section callrate_file
echo "lines=$(wc -l < /tmp/callrate.out) distinct=$(sort -u /tmp/callrate.out | wc -l)"
atoll console e1 | grep "(callrate): "
section callrate_status
cat /tmp/rate.json

run unsupported atoll run e1 -- /extra/unsupported 100
run strict atoll run e1 --strict -- /extra/unsupported 100
run after_strict atoll run e1 -- /extra/hello

# Ctrl-C: SIGINT to `atoll run` once the program is sleeping in the enclave.
# (A background `atoll run` would start with SIGINT ignored, so it runs in
# the foreground and the sender in the background.)
rm -f /tmp/sigint.done
(
    i=0
    until grep -q "sleep: sleeping" /tmp/out 2>/dev/null; do
        [ -e /tmp/sigint.done ] || [ $i -gt 600 ] && exit 0
        sleep 0.1; i=$((i + 1))
    done
    sleep 1
    atoll --json status e1 > /tmp/during.json
    # An idle server costs Linux no CPU: atoll run's ticks over 2 s.
    ticks() { awk '{ print $14 + $15 }' /proc/$(pidof atoll)/stat; }
    t0=$(ticks); sleep 2; echo "idle ticks $(( $(ticks) - t0 ))" > /tmp/idle_ticks
    kill -INT $(pidof atoll)
) &
run sigint atoll run e1 -- /extra/sleep
touch /tmp/sigint.done
wait
section status_during_sleep
cat /tmp/during.json
section idle_server
cat /tmp/idle_ticks
section status_after_sigint
settle "$before"
run after_sigint atoll run e1 -- /extra/hello

atoll destroy e1 || { echo "DESTROY FAILED"; exit 11; }
resources
''' % ENCLAVE_CPUS


@pytest.fixture(scope="module")
def lifecycle_run(tmp_path_factory, programs, program_mode):
    return boot(tmp_path_factory, programs, script_for(program_mode, LIFECYCLE_SCRIPT), timeout=900)


def test_lifecycle_vm_run_completed(lifecycle_run):
    """Destroy after all of it gives every CPU and all memory back."""
    assert lifecycle_run.res.status == 0, lifecycle_run.tail()
    assert_nothing_lost(lifecycle_run)


def test_mmap_churn_and_memory_returned(lifecycle_run):
    sec = lifecycle_run["churn"]
    assert_ran(sec)
    n = ENCLAVE_CPUS * 1000
    for line in [f"mmap_churn: threads={ENCLAVE_CPUS} iterations=1000", f"maps={n} expected={n}",
                 "mmap_churn: ok"]:
        assert line in sec.lines(), f"missing line {line!r}:\n{sec}"
    assert value(sec, "errors") == "0", str(sec)
    before = status_json(lifecycle_run["status_before"])
    after = status_json(lifecycle_run["status_after_churn"])
    assert 0 < before["lwk_free_bytes"] <= before["lwk_total_bytes"], str(before)
    # No program in the enclave.
    assert before["programs"] == [] and after["programs"] == [], f"{before}\n{after}"
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], \
        (f"the LWK has {before['lwk_free_bytes'] - after['lwk_free_bytes']} bytes less free memory "
         f"2 s after the program ended:\nbefore {before}\nafter  {after}")


def test_unmapped_buffer_of_a_call_in_flight(lifecycle_run):
    """Memory unmapped while a delegated call may still write it through
    the mirror is not reused until that call ends (tests/programs/
    unmap_inflight.c): the program's new memory holds only its own bytes,
    and every frame comes back once the program ends."""
    sec = lifecycle_run["inflight"]
    assert_ran(sec)
    assert "intact" in sec.lines(), str(sec)
    before = status_json(lifecycle_run["status_before"])
    after = status_json(lifecycle_run["status_after_inflight"])
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], f"{before}\n{after}"


def test_calls_at_a_changing_rate_neither_lost_nor_repeated(lifecycle_run):
    """Bursts and pauses make atoll run's workers poll, sleep and wake; every
    line the program wrote through them is in the file exactly once, and the
    status showed the call rate and the polling window meanwhile."""
    sec = lifecycle_run["callrate"]
    assert_ran(sec)
    m = re.search(r"^callrate: threads=(\d+) lines=(\d+)$", sec.stdout, re.M)
    assert m and int(m.group(1)) == ENCLAVE_CPUS, str(sec)
    lines = int(m.group(2))
    assert lines > 0, str(sec)
    assert f"lines={lines} distinct={lines}" in lifecycle_run["callrate_file"].lines(), (
        lines, str(lifecycle_run["callrate_file"]))
    samples = [p for line in lifecycle_run["callrate_status"].lines() if line.startswith("{")
               for p in json.loads(line)["programs"]]
    assert samples, str(lifecycle_run["callrate_status"])
    assert max(p["calls_per_s"] for p in samples) > 0, samples
    assert all(20 <= p["poll_window_us"] <= 1000 for p in samples), samples


def test_where_delegated_calls_spend_their_time(lifecycle_run):
    """A program that made many delegated calls says at its end, on the
    enclave's console, how long they took to reach a worker, on Linux, and
    back (TSC stamps in the slot); every call it wrote a line with is counted."""
    lines = int(re.search(r"^lines=(\d+) ", lifecycle_run["callrate_file"].stdout, re.M).group(1))
    m = re.search(r"^program \d+ \(callrate\): (\d+) delegated calls, mean ([\d.]+) µs to Linux, "
                  r"([\d.]+) µs on Linux, ([\d.]+) µs back$", lifecycle_run["callrate_file"].stdout, re.M)
    assert m, str(lifecycle_run["callrate_file"])
    assert int(m.group(1)) >= lines >= 1000, (m.group(0), lines)
    to_linux, on_linux, back = map(float, m.group(2, 3, 4))
    # Each phase is real time that passed; a worker's write takes some.
    assert on_linux > 0 and to_linux >= 0 and back >= 0, m.group(0)


def test_an_idle_server_costs_linux_no_cpu(lifecycle_run):
    """While the program sleeps in the enclave, atoll run's workers sleep too."""
    m = re.search(r"^idle ticks (\d+)$", lifecycle_run["idle_server"].stdout, re.M)
    assert m, str(lifecycle_run["idle_server"])
    assert int(m.group(1)) <= 10, "atoll run used CPU while its program made no calls: " + m.group(0)


def test_unsupported_call_reported_once_per_number(lifecycle_run):
    sec = lifecycle_run["unsupported"]
    assert sec.status == 0, str(sec)
    assert "syscall 140 (getpriority) x100: ENOSYS" in sec.lines(), str(sec)
    assert "syscall 252 (ioprio_get) x100: ENOSYS" in sec.lines(), str(sec)
    assert "unsupported: done" in sec.lines(), str(sec)
    lines = reports(sec)
    for nr, name in [(140, "getpriority"), (252, "ioprio_get")]:
        mine = [line for line in lines if re.match(rf"atoll run: system call {nr}\b", line)]
        assert len(mine) == 1, f"expected exactly one report for system call {nr}, not {len(mine)}:\n{sec}"
        assert mine[0] == (f"atoll run: system call {nr} ({name}) is not supported in the enclave: "
                           "it returned ENOSYS"), f"unexpected wording:\n{sec}"


def test_strict_kills_with_sigsys(lifecycle_run):
    sec = lifecycle_run["strict"]
    assert sec.status == 159, f"--strict: the first unsupported call should kill with SIGSYS (159):\n{sec}"
    assert "Bad system call" in sec.stderr, str(sec)
    # It died at getpriority, not earlier and not later.
    assert sec.lines() == ["unsupported: calling"], \
        f"not killed at getpriority (glibc's {GLIBC_PROBES} must not count under --strict):\n{sec}"
    after = lifecycle_run["after_strict"]
    assert_ran(after)
    assert after.stdout.startswith("hello from"), str(after)


def test_sigint_ends_the_program_and_frees_it(lifecycle_run):
    sec = lifecycle_run["sigint"]
    assert sec.status == 130, f"SIGINT to `atoll run` should end it with status 130:\n{sec}"
    assert "sleep: sleeping" in sec.lines(), str(sec)
    before = status_json(lifecycle_run["status_before"])
    during = status_json(lifecycle_run["status_during_sleep"])
    after = status_json(lifecycle_run["status_after_sigint"])
    assert [p["command"] for p in during["programs"]] == ["sleep"], \
        f"the sleeping program is not listed:\n{during}"
    assert during["lwk_free_bytes"] < before["lwk_free_bytes"], \
        f"the running program uses no LWK memory?\nbefore {before}\nduring {during}"
    assert after["programs"] == [], f"a program listed after it ended:\n{after}"
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], \
        f"memory not given back after SIGINT:\nbefore {before}\nafter  {after}"
    after_run = lifecycle_run["after_sigint"]
    assert_ran(after_run)
    assert after_run.stdout.startswith("hello from"), str(after_run)
