"""Calls whose effect lives on Linux (identity, umask, pipes, poll, the file
system, sockets, epoll, eventfd, timerfd, select), delegated from an
enclave, and CPU-time accounting (getrusage, times, the CPU-time clocks),
against the same programs on Linux: the same output, line for line
(tests/programs/linuxapi.c, sockets.c, cputime.c); the clocks a program reads
through the vDSO without a system call (vdso.c)."""
import re


def test_delegated_calls_match_linux(vm, programs):
    res = vm(r'''
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null
mkdir -p /tmp/linux /tmp/enclave
/extra/linuxapi /tmp/linux > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
atoll create --cpus 1 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/linuxapi /tmp/enclave > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
echo "LINUX_$(/extra/linuxapi --memory)"
echo "ENCLAVE_$(atoll run e -- /extra/linuxapi --memory)"
/extra/sockets /tmp/linux > /tmp/linux-sockets.out 2>&1; echo "LINUX_SOCKETS_STATUS $?"
atoll run e -- /extra/sockets /tmp/enclave > /tmp/enclave-sockets.out 2>&1; echo "ENCLAVE_SOCKETS_STATUS $?"
/extra/cputime > /tmp/linux-cputime.out 2>&1
atoll run e -- /extra/cputime > /tmp/enclave-cputime.out 2>&1
atoll destroy e > /dev/null || exit 10
cat /tmp/enclave.out /tmp/enclave-sockets.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
diff /tmp/linux-sockets.out /tmp/enclave-sockets.out && echo SOCKETS_SAME
cat /tmp/enclave-cputime.out
diff /tmp/linux-cputime.out /tmp/enclave-cputime.out && echo CPUTIME_SAME
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out and "SOCKETS_SAME" in out and "CPUTIME_SAME" in out, out
    assert "LINUX_SOCKETS_STATUS 0" in out and "ENCLAVE_SOCKETS_STATUS 0" in out, out
    for line in ["pipe: poll=1 revents=0x1 read=ping", "socketpair: read=pong", "truncate: 10",
                 "readlinkat: file", "utimensat: 1000000000", "rmdir: gone", "sysinfo: plausible",
                 "unix stream: accepted and read hello", "unix datagram: dgram from y.sock",
                 'sendmsg/recvmsg: 14 bytes "scatter gather", a descriptor passed that reads fd!',
                 "epoll: 1 ready, the eventfd first", "eventfd: 5",
                 "timerfd: 1 ready, 1 expiry, armed yes", "select on an empty eventfd: 0",
                 "thread clock: spin counted, sleep not: yes",
                 "getrusage: same: yes, mostly user time: yes, maxrss: yes", "times: same: yes",
                 "second thread: its own clock: yes, process clock grew by it: yes"]:
        assert line in out, out
    assert not re.search(r"is not supported in the enclave", out), out
    # sysinfo in the enclave tells the enclave's memory (256 MiB, less the
    # kernel's own), not Linux's.
    linux = int(re.search(r"^LINUX_memory: (\d+) MiB", out, re.M).group(1))
    enclave = int(re.search(r"^ENCLAVE_memory: (\d+) MiB", out, re.M).group(1))
    assert 128 < enclave <= 256 < linux, out


def test_clocks_through_the_vdso_match_linux(vm, programs):
    """Every program in an enclave gets a vDSO (AT_SYSINFO_EHDR): the C
    library's clock_gettime, gettimeofday and time read the TSC there and
    agree with the system calls around them, static and dynamic programs
    alike, as on Linux; CLOCK_MONOTONIC never goes back, and a forked child
    and an exec'ed image have theirs too."""
    res = vm(r'''
/extra/vdso > /tmp/linux.out; echo "LINUX_STATUS $?"
/extra/dyn-vdso > /tmp/linux-dyn.out; echo "LINUX_DYN_STATUS $?"
atoll create --cpus 1 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/vdso > /tmp/enclave.out; echo "ENCLAVE_STATUS $?"
atoll run e -- /extra/dyn-vdso > /tmp/enclave-dyn.out; echo "ENCLAVE_DYN_STATUS $?"
atoll run e -- /extra/fork exec-vdso > /tmp/enclave-exec.out; echo "ENCLAVE_EXEC_STATUS $?"
atoll destroy e > /dev/null || exit 10
cat /tmp/enclave.out /tmp/enclave-exec.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
diff /tmp/linux-dyn.out /tmp/enclave-dyn.out && echo DYN_SAME
diff /tmp/linux.out /tmp/enclave-exec.out && echo EXEC_SAME
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    for what in ["LINUX", "LINUX_DYN", "ENCLAVE", "ENCLAVE_DYN", "ENCLAVE_EXEC"]:
        assert f"{what}_STATUS 0" in out, out
    assert "SAME" in out and "DYN_SAME" in out and "EXEC_SAME" in out, out
    for line in ["vdso: there is one: yes", "vdso: CLOCK_MONOTONIC between two system calls: yes",
                 "vdso: CLOCK_REALTIME between two system calls: yes",
                 "vdso: gettimeofday between two system calls: yes",
                 "vdso: CLOCK_MONOTONIC went back in 200000 mixed reads: 0 times"]:
        assert line in out, out
