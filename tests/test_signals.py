"""Signals in an enclave, against the same program on Linux: handlers for
alarm, setitimer and POSIX timers (to the process, to one thread),
between threads, SA_RESTART on a delegated blocking
read, a SIGSEGV handler that longjmps out,
sigaltstack, siginfo, masks, sigtimedwait, the FPU kept across handlers
(its frame at every place in a page)
(tests/programs/signals.c); a signal from one program to another in the
enclave; SIGTERM given to `atoll run` reaching the program's handler."""


def test_signals_match_linux(vm, programs):
    res = vm(r'''
wait_line() { for _ in $(seq 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
/extra/signals > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/signals > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME

atoll run e -- /extra/signals wait > /tmp/wait.out 2>&1 & W=$!
wait_line /tmp/wait.out "waiting pid" || echo NEVER_WAITED
pid=$(sed -n 's/^waiting pid //p' /tmp/wait.out)
atoll run e -- /extra/signals send "$pid"; echo "SEND_STATUS $?"
wait $W; echo "WAIT_STATUS $?"
cat /tmp/wait.out

atoll run e -- /extra/signals term > /tmp/term.out 2>&1 & T=$!
wait_line /tmp/term.out "term: ready" || echo NEVER_READY
kill -TERM $T; wait $T; echo "TERM_STATUS $?"
cat /tmp/term.out
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, f"the enclave's output differs from Linux's:\n{out}"
    for line in ["alarm: handler ran 1 time, pause returned -1 (EINTR)",
                 "setitimer: 3 ticks, still armed: yes",
                 "threads: signal 0 to the thread: 0",
                 "threads: SIGUSR1 ran in the target thread: yes",
                 "segv: caught signal 11 at 0x10, SEGV_MAPERR",
                 "segv: read-only page: signal 11 at offset 8, SEGV_ACCERR",
                 "sigaltstack: handler on the alternate stack: yes",
                 "fpu: handlers ran: yes, sums equal: yes",
                 "fpu: rounding mode back after the handler, frames at 64 places in a page: 64",
                 "SA_RESTART: read returned 1 after the handler ran 1 time",
                 "no SA_RESTART: read returned -1 (EINTR) after the handler ran 1 time",
                 "timer_create: 3 expiries, SI_TIMER with its value: yes, still armed: yes",
                 "timer_delete: then timer_gettime fails: EINVAL",
                 "timer to a thread: ran in that thread: yes",
                 "signals: done"]:
        assert line in out, out
    assert "SEND_STATUS 0" in out and "WAIT_STATUS 0" in out, out
    assert "wait: got SIGUSR1 from another program: yes" in out, out
    # The handler ran and the program ended on its own terms (status 3).
    assert "term: handled signal 15" in out and "TERM_STATUS 3" in out, out
    assert "is not supported in the enclave" not in out, out
