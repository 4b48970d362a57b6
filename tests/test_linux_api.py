"""Calls whose effect lives on Linux (identity, umask, pipes, poll, socket
pairs, the file system), delegated from an enclave, against the same
program on Linux: the same output, line for line (tests/programs/linuxapi.c)."""
import re


def test_delegated_calls_match_linux(vm, programs):
    res = vm(r'''
mkdir -p /tmp/linux /tmp/enclave
/extra/linuxapi /tmp/linux > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
atoll create --cpus 1 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/linuxapi /tmp/enclave > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
echo "LINUX_$(/extra/linuxapi --memory)"
echo "ENCLAVE_$(atoll run e -- /extra/linuxapi --memory)"
atoll destroy e > /dev/null || exit 10
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, out
    for line in ["pipe: poll=1 revents=0x1 read=ping", "socketpair: read=pong", "truncate: 10",
                 "readlinkat: file", "utimensat: 1000000000", "rmdir: gone", "sysinfo: plausible"]:
        assert line in out, out
    assert not re.search(r"is not supported in the enclave", out), out
    # sysinfo in the enclave tells the enclave's memory (256 MiB, less the
    # kernel's own), not Linux's.
    linux = int(re.search(r"^LINUX_memory: (\d+) MiB", out, re.M).group(1))
    enclave = int(re.search(r"^ENCLAVE_memory: (\d+) MiB", out, re.M).group(1))
    assert 128 < enclave <= 256 < linux, out
