"""Kernel-mode programs (issue 41): `atoll run --hrt` runs an unmodified
program at CPL 0 in an enclave created with `--hrt`. Its code and its
threads' read CS's privilege level 0 (3 without --hrt, in the same
enclave); interrupts never write its red zone; static and dynamic
programs, threads, OpenMP, signals, pipes, fork and exec behave as in
ring 3 (the same lines as on Linux where the program prints them); its
system calls also work by CALL into the LWK, restarts included
(tests/programs/direct_call.c); faults
end it with Linux's signal and leave the enclave usable; `atoll status`
shows the mode. Only root runs such programs, unless root created the
enclave with --hrt-users, which lets its owner too; an enclave created
without --hrt refuses them; a ring-3 program may not signal a kernel-mode
one (tests/programs/cpl.c)."""
import json
import re

from resources import RESOURCES, assert_nothing_lost


def test_kernel_mode_programs_run_as_in_ring_3(vm, programs):
    res = vm(RESOURCES + r'''
resources
atoll create --cpus 2 --mem 256M --name h --hrt > /dev/null || exit 9
atoll status h | grep "kernel-mode programs"
atoll run h -- /extra/cpl; echo "USER_CPL $?"
atoll run h --hrt --threads 1 -- /extra/cpl; echo "KERNEL_CPL $?"
/extra/direct_call | sed 's/^/LINUX /'
atoll run h -- /extra/direct_call | sed 's/^/RING3 /'
atoll run h --hrt -- /extra/direct_call; echo "DIRECT $?"
atoll run h --hrt -- /extra/sleep > /tmp/sleep.out & S=$!
for _ in $(seq 100); do grep -q sleeping /tmp/sleep.out && break; sleep 0.1; done
atoll --json status h | grep '^{' | sed 's/^/STATUS_JSON /'
pid=$(atoll --json status h | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
atoll run h -- /usr/bin/kill -0 "$pid"; echo "KILL FROM RING3 $?"
atoll run h --hrt -- /usr/bin/kill -0 "$pid"; echo "KILL FROM KERNEL MODE $?"
kill -INT $S; wait $S
for p in hello dyn-hello pthreads openmp; do atoll run h --hrt -- /extra/$p > /dev/null; echo "RAN $p $?"; done
for p in signals pipes fork exec; do
    /extra/$p > /tmp/linux.out 2>&1
    atoll run h --hrt -- /extra/$p > /tmp/hrt.out 2>&1; echo "RAN $p $?"
    diff /tmp/linux.out /tmp/hrt.out > /dev/null && echo "SAME $p"
done
atoll run h --hrt -- /extra/segv; echo "FAULT segv $?"
atoll run h --hrt -- /extra/segv stack; echo "FAULT stack $?"
atoll run h --hrt -- /extra/fpe; echo "FAULT fpe $?"
atoll run h --hrt -- /extra/ill; echo "FAULT ill $?"
atoll run h --hrt -- /extra/hello; echo "AFTER $?"
atoll destroy h > /dev/null || exit 10
resources
''', extra_dir=str(programs), timeout=600)
    out = res.output
    assert res.status == 0, out
    assert "kernel-mode programs (--hrt): root" in out, out
    assert "cpl: main 3, thread 3" in out and "USER_CPL 0" in out, out
    assert "cpl: main 0, thread 0" in out and "KERNEL_CPL 0" in out, out
    # Two threads sharing one CPU were switched while they spun.
    assert out.count("cpl: red zone words changed while spinning: 0, 0") == 2, out
    # System calls by CALL, a restarted one too; none in ring 3.
    assert "LINUX direct call: none (Function not implemented)" in out, out
    assert "RING3 direct call: none (Operation not permitted)" in out, out
    for line in ["direct call: getpid same", "direct call: write works", "direct call: write returned 25",
                 "direct call: restarted read returned 1 (x) after 1 handler run(s)", "DIRECT 0"]:
        assert line in out, out
    status = json.loads(re.search(r"^STATUS_JSON (.*)$", out, re.M).group(1))
    assert [(p["command"], p["mode"]) for p in status["programs"]] == [("sleep", "kernel")], status
    # A ring-3 program may not reach into a kernel-mode one.
    assert re.search(r"kill: \(\d+\): Operation not permitted", out) and "KILL FROM RING3 1" in out, out
    assert "KILL FROM KERNEL MODE 0" in out, out
    for p in ["hello", "dyn-hello", "pthreads", "openmp", "signals", "pipes", "fork", "exec"]:
        assert f"RAN {p} 0" in out, f"{p} failed in kernel mode:\n{out}"
    for p in ["signals", "pipes", "fork", "exec"]:
        assert f"SAME {p}" in out, f"{p} printed other lines in kernel mode than on Linux:\n{out}"
    for fault, status in [("segv", 139), ("stack", 139), ("fpe", 136), ("ill", 132)]:
        assert f"FAULT {fault} {status}" in out, out
    assert "AFTER 0" in out, out
    assert_nothing_lost(out)


def test_only_root_or_allowed_owners_run_kernel_mode(vm, programs):
    res = vm(r'''
cp /etc/passwd /tmp/passwd; cp /etc/group /tmp/group
echo 'alice:x:1001:1001:Alice:/tmp:/bin/sh' >> /tmp/passwd
echo 'alice:x:1001:' >> /tmp/group
mount --bind /tmp/passwd /etc/passwd && mount --bind /tmp/group /etc/group || exit 9
as() { u=$1; shift; /usr/bin/setpriv --reuid=$u --regid=$u --init-groups "$@"; }
atoll create --cpus 1 --mem 128M --name plain --owner alice > /dev/null || exit 10
atoll run plain --hrt -- /extra/cpl 1; echo "PLAIN ROOT $?"
as alice atoll run plain --hrt -- /extra/cpl 1; echo "PLAIN ALICE $?"
atoll destroy plain > /dev/null
atoll create --cpus 1 --mem 128M --name rootonly --owner alice --hrt > /dev/null || exit 11
as alice atoll run rootonly --hrt -- /extra/cpl 1; echo "ROOTONLY ALICE $?"
as alice atoll run rootonly -- /extra/cpl 1; echo "ROOTONLY ALICE RING3 $?"
atoll run rootonly --hrt -- /extra/cpl 1; echo "ROOTONLY ROOT $?"
atoll destroy rootonly > /dev/null
atoll create --cpus 1 --mem 128M --name users --owner alice --hrt --hrt-users > /dev/null || exit 12
atoll status users | grep "kernel-mode programs"
as alice atoll run users --hrt -- /extra/cpl 1; echo "USERS ALICE $?"
atoll destroy users > /dev/null
atoll create --cpus 1 --mem 128M --name x --hrt-users; echo "USERS WITHOUT HRT $?"
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    no_hrt = "atoll: run failed: enclave plain runs no kernel-mode programs: it was created without --hrt"
    assert out.count(no_hrt) == 2 and "PLAIN ROOT 125" in out and "PLAIN ALICE 125" in out, out
    assert ("atoll: run failed: only root may run kernel-mode programs in enclave rootonly "
            "(it was created without --hrt-users)") in out and "ROOTONLY ALICE 125" in out, out
    assert "cpl: main 3, thread 3" in out and "ROOTONLY ALICE RING3 0" in out, out
    assert "ROOTONLY ROOT 0" in out and "USERS ALICE 0" in out, out
    assert out.count("cpl: main 0, thread 0") == 2, out
    assert "kernel-mode programs (--hrt): root and the owner" in out, out
    assert "--hrt" in out and "USERS WITHOUT HRT 2" in out, out


API_PARTS = ["threads on every cpu: ok", "5000 threads one after another: ok", "fork/join: ok",
             "condvar token ring: ok", "active messages: ok", "broadcast exactly once per cpu: ok",
             "bad messages refused: ok", "nested interrupt-off regions: ok", "hrt api: 0 failures"]


def test_runtime_api_works_in_both_modes(vm, programs):
    """The hybrid-runtime API (atoll/hrt.h, libatoll-hrt) with every count
    checked (tests/programs/hrt_api.c), by direct calls at CPL 0 and by
    system calls in ring 3, in one enclave, from C and from Rust (the crate
    hrt/rust), and the task runtime on it
    (hrt/tasks, bench/programs/tasks_bench.c); on Linux it says it is not in
    an enclave. A program ended while its threads wait and its handler
    threads sleep gives everything back; one that only makes the API's
    calls at CPL 0 takes its signals on the way back from them."""
    res = vm(RESOURCES + r'''
resources
/extra/hrt_api; echo "LINUX $?"
atoll create --cpus 1-3 --mem 256M --name h --hrt > /dev/null || exit 9
atoll run h -- /extra/hrt_api | sed 's/^/RING3 /'
atoll run h --hrt -- /extra/hrt_api | sed 's/^/KERNEL /'
atoll run h -- /extra/tasks_hrt 2 200000 1000000 | sed 's/^/TASKS3 /'
atoll run h -- /extra/hrt_rust | sed 's/^/RUST3 /'
atoll run h --hrt -- /extra/hrt_rust | sed 's/^/RUST0 /'
atoll run h --hrt -- /extra/tasks_hrt 2 200000 1000000 | sed 's/^/TASKS0 /'
atoll run h --hrt -- /extra/hrt_api wait > /tmp/killed.out & R=$!
for _ in $(seq 300); do grep -q "hrt api: waiting" /tmp/killed.out && break; sleep 0.1; done
atoll status h | grep -c hrt_api | sed 's/^/RUNNING /'
kill -INT $R; wait $R; echo "INTERRUPTED $?"
atoll run h --hrt -- /extra/hrt_api signal > /tmp/signalled.out & R=$!
for _ in $(seq 300); do grep -q "hrt api: waiting for signals" /tmp/signalled.out && break; sleep 0.1; done
kill -HUP $R
for _ in $(seq 300); do grep -q "handler ran" /tmp/signalled.out && break; sleep 0.1; done
grep "handler ran" /tmp/signalled.out | sed 's/^/SIGNALLED /'
kill -TERM $R
for _ in $(seq 300); do kill -0 $R 2> /dev/null || break; sleep 0.1; done
kill -0 $R 2> /dev/null && { echo "SIGTERM IGNORED"; kill -KILL $R; }
wait $R; echo "TERMINATED $?"
atoll run h --hrt -- /extra/hello; echo "AFTER $?"
atoll destroy h > /dev/null || exit 10
resources
''', extra_dir=str(programs), timeout=600)
    out = res.output
    assert res.status == 0, out
    assert "hrt: not in an Atoll enclave" in out and "LINUX 2" in out, out
    assert "RING3 hrt api: user mode, 3 cpus, a null call returns 0" in out, out
    assert "KERNEL hrt api: kernel mode, 3 cpus, a null call returns 0" in out, out
    for mode in ["RING3", "KERNEL"]:
        for part in API_PARTS:
            assert f"{mode} {part}" in out, f"{mode}: {part!r} missing:\n{out}"
    # The same from Rust, through the crate (hrt/rust/examples/hrt_rust.rs).
    for mode in ["RUST3", "RUST0"]:
        assert f"{mode} rust hrt: 0 failures" in out, out
        for part in ["threads on every cpu:", "fork/join:", "condvar token ring:", "barrier:", "active messages:",
                     "broadcast exactly once per cpu:", "messages after interrupt-off regions:"]:
            assert f"{mode} rust {part} ok" in out, f"{mode}: {part!r} missing:\n{out}"
    # The task runtime on the API: quicksort and a reduction, results checked.
    for mode in ["TASKS3", "TASKS0"]:
        for kernel in ["quicksort", "reduction"]:
            assert re.search(rf"^{mode} tasks_bench kernel={kernel} workers=3 .* right$", out, re.M), out
    assert "RUNNING 1" in out and "INTERRUPTED 130" in out and "AFTER 0" in out, out
    # Signals reach a program at CPL 0 that only makes the API's calls.
    assert "SIGNALLED hrt api: the SIGHUP handler ran" in out and "TERMINATED 143" in out, out
    assert_nothing_lost(out)
