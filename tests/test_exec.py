"""execve in an enclave, against the same program on Linux
(tests/programs/exec.c): an exec chain keeping its pid and its
descriptors but for close-on-exec ones, a failed exec that returns,
posix_spawn, and system() running busybox's static shell in the enclave,
whose applets exec /proc/self/exe."""
import json
import re


def test_exec_matches_linux(vm, programs):
    res = vm(r'''
/extra/exec > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
echo "BEFORE $(atoll --json status e)"
atoll run e -- /extra/exec > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
# busybox's shell runs its applets by exec'ing /proc/self/exe: the program, not atoll run.
echo "an applet's output" > /tmp/applet.txt
atoll run e -- /bin/sh -c 'cat /tmp/applet.txt; wc -c < /tmp/applet.txt' | sed 's/^/APPLET /'
sleep 1
echo "AFTER $(atoll --json status e)"
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, f"the enclave's output differs from Linux's:\n{out}"
    assert "APPLET an applet's output" in out and "APPLET 19" in out, out
    for line in ["exec of a missing file: ENOENT", "chain: 1 to go",
                 "chain: done, same pid: yes, kept fd open: yes, cloexec fd closed: yes",
                 "posix_spawn: exit code 4", "system: hello from a shell", "system: exit code 3",
                 "exec: done"]:
        assert line in out, out
    before = json.loads(re.search(r"^BEFORE (.*)$", out, re.M).group(1))
    after = json.loads(re.search(r"^AFTER (.*)$", out, re.M).group(1))
    assert after["programs"] == [] and after["lwk_free_bytes"] == before["lwk_free_bytes"], \
        f"memory lost:\n{before}\n{after}"
