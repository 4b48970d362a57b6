"""fork, vfork, wait4 and friends in an enclave, against the same program
on Linux (tests/programs/fork.c), and a fork bomb bounded by the enclave
(a clear EAGAIN or ENOMEM; the enclave stays up, its memory comes back);
the main stack's memory given on first touch (tests/programs/stack_use.c);
posix_spawn and vfork from a large program (tests/programs/spawn_big.c)."""
import json
import re

from resources import RESOURCES, assert_nothing_lost


def test_fork_matches_linux_and_a_fork_bomb_is_contained(vm, programs):
    res = vm(RESOURCES + r'''
resources
/extra/fork > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
echo "BEFORE $(atoll --json status e)"
atoll run e -- /extra/fork > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
atoll run e -- /extra/fork bomb 200; echo "BOMB_STATUS $?"
atoll run e -- /extra/hello > /dev/null; echo "AFTER_BOMB_STATUS $?"
sleep 1
echo "AFTER $(atoll --json status e)"
atoll destroy e > /dev/null || exit 10
resources
''', extra_dir=str(programs), timeout=600)
    out = res.output
    assert res.status == 0, out
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, f"the enclave's output differs from Linux's:\n{out}"
    for line in ["wait: pid matches: yes, exited: 1, code 7", "wait: killed: 1, by signal 15",
                 "wait: no more children: -1 (ECHILD)", 'pipe: the child answered "HELLO CHILD"',
                 "getppid: the child saw its parent: yes", "memory: the parent's copy unchanged: 1",
                 "heap: a child kept its parent's heap and grew its own: yes",
                 "read-only: the child saw them as at the fork: yes",
                 "read-only: the child wrote and dropped its own copy: yes",
                 "read-only: the parent's copy unchanged: yes",
                 "read-only: a fork costs less than half of them: yes",
                 "read-only: FUTEX_WAKE_OP on one: EFAULT",
                 "read-only: FUTEX_WAKE_OP once writable: woke 0, set 7",
                 "SIGCHLD: handler ran: yes", "vfork: code 5",
                 "vfork: the child's writes seen by the parent: global 2, stack 3, heap 4, "
                 "large block 5 6, its mapping 7",
                 "vfork: child a process of its own: yes", "vfork: child killed: 1, by signal 15",
                 "rusage: children's time counted: yes", "times: children's ticks counted: yes",
                 "groups: the child leads its own group: yes, same session: yes",
                 "groups: kill of the group ended it with signal 15",
                 "groups: a child starts in its parent's group: yes", "fork: done"]:
        assert line in out, out
    assert re.search(r"^fork bomb: (EAGAIN|ENOMEM) after some children, all reaped: yes$", out, re.M), out
    assert "BOMB_STATUS 0" in out and "AFTER_BOMB_STATUS 0" in out, out
    before = json.loads(re.search(r"^BEFORE (.*)$", out, re.M).group(1))
    after = json.loads(re.search(r"^AFTER (.*)$", out, re.M).group(1))
    assert after["programs"] == [], after
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], f"memory lost:\n{before}\n{after}"
    assert_nothing_lost(out)


def test_main_stack_gets_memory_when_first_touched(vm, programs):
    """Deep recursion, a 6 MiB stack array, delegated and local calls and a
    signal frame on untouched stack, another thread's delegated read far
    below the main thread's stack pointer, a fork copying it, threads racing to
    touch it first: as on Linux; and a program that uses little stack holds
    little memory."""
    res = vm(r'''
/extra/stack_use /extra/hello > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/stack_use /extra/hello > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
for i in $(seq 10); do atoll run e -- /extra/stack_use race || echo "RACE_FAILED $?"; done
atoll run e -- /extra/sleep > /tmp/sleep.out & S=$!
for _ in $(seq 100); do grep -q sleeping /tmp/sleep.out && break; sleep 0.1; done
echo "DURING $(atoll --json status e)"
kill -TERM $S; wait $S
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, f"the enclave's output differs from Linux's:\n{out}"
    for line in ["read into untouched stack below the stack pointer: 256, same bytes",
                 "another thread's read 4 MiB below the main stack pointer: 65536, same bytes",
                 "delegated read into an untouched stack buffer: same bytes",
                 "clock_gettime into it: 0, nonzero: yes", "handler ran below the array: yes",
                 "forked child saw the array: yes", "stack: done"]:
        assert line in out, out
    assert out.count("threads first-touching the main stack at once: 512 of 512 pages") == 10, out
    assert "RACE_FAILED" not in out, out
    during = json.loads(re.search(r"^DURING (.*)$", out, re.M).group(1))
    sleeper = [p for p in during["programs"] if p["command"].endswith("sleep")]
    assert sleeper, during
    # Its 8 MiB stack reserved, the little it uses given memory.
    assert sleeper[0]["mem_bytes"] < 4 << 20, sleeper


def test_a_large_program_spawns_without_a_second_copy_of_its_memory(vm, programs):
    """posix_spawn and vfork + execve from a program holding 160 MiB of a
    256 MiB enclave: the children run on the parent's memory, as on Linux,
    so they start although the enclave could not hold a second copy (a
    full copy failed with ENOMEM); posix_spawn reports a missing file, and
    a vfork child's write to its caller's variable reaches the parent, as
    on Linux; memory a vfork child maps over the parent's reads as zeros,
    and its fork copies the parent's bytes; the parent's memory is as it
    wrote it and the enclave's memory comes back."""
    res = vm(r'''
{ /extra/spawn_big 160 /extra/hello && /extra/spawn_big 16 /extra/hello fork; } > /tmp/linux.out 2>&1
echo "LINUX_STATUS $?"
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
echo "BEFORE $(atoll --json status e)"
{ atoll run e -- /extra/spawn_big 160 /extra/hello && atoll run e -- /extra/spawn_big 16 /extra/hello fork; } \
    > /tmp/enclave.out 2>&1
echo "ENCLAVE_STATUS $?"
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
echo "AFTER $(atoll --json status e)"
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, f"the enclave's output differs from Linux's:\n{out}"
    for i in range(3):
        assert f"posix_spawn {i}: started, child exit 0" in out, out
    assert "vfork 0: child exit 0" in out and "vfork 2: child exit 3" in out, out
    assert "posix_spawn of a missing file: No such file or directory" in out, out
    assert "variable set by a vfork child: 42" in out, out
    assert "vfork child's own mapping reads zeros: child exit 0" in out, out
    assert "vfork child's fork: grandchild exit 3" in out, out
    assert "parent's 160 MiB as it wrote them: yes" in out, out
    assert "parent's 16 MiB as it wrote them: yes" in out, out
    before = json.loads(re.search(r"^BEFORE (.*)$", out, re.M).group(1))
    after = json.loads(re.search(r"^AFTER (.*)$", out, re.M).group(1))
    assert after["programs"] == [], after
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], f"memory lost:\n{before}\n{after}"


def test_a_child_gets_its_linux_server_only_when_it_needs_one(vm, programs):
    """A forked child starts without a server on Linux; one is made (a fork
    of its parent's `atoll run`) before the parent's next delegated call or
    its end, or at the child's first: the child still sees its parent's
    files as they were at the fork. Children that never need Linux cost it
    no process."""
    res = vm(RESOURCES + r'''
resources
/extra/fork later > /tmp/linux.out 2>&1; echo "LINUX_STATUS $?"
sleep 1
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
echo "BEFORE $(atoll --json status e)"
atoll run e -- /extra/fork later > /tmp/enclave.out 2>&1; echo "ENCLAVE_STATUS $?"
sleep 1
cat /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
strace -f -qq -e trace=fork,vfork,clone,clone3 -o /tmp/clones atoll run e -- /extra/fork quiet 50
echo "QUIET_STATUS $?"
echo "LINUX_PROCESSES $(grep -v CLONE_THREAD /tmp/clones | grep -c -E 'clone|fork')"
sleep 1
echo "AFTER $(atoll --json status e)"
atoll destroy e > /dev/null || exit 10
resources
''', extra_dir=str(programs), timeout=600)
    out = res.output
    assert res.status == 0, out
    assert "LINUX_STATUS 0" in out and "ENCLAVE_STATUS 0" in out, out
    assert "SAME" in out, f"the enclave's output differs from Linux's:\n{out}"
    for line in ["later: the child read its parent's file as at the fork: yes (code 0)",
                 "later: a child wrote after its parent ended, as parent 1"]:
        assert line in out, out
    assert "quiet: 50 of 50 children exited with 3" in out and "QUIET_STATUS 0" in out, out
    # 50 forks in the enclave, none of them on Linux.
    assert "LINUX_PROCESSES 0" in out, out
    before = json.loads(re.search(r"^BEFORE (.*)$", out, re.M).group(1))
    after = json.loads(re.search(r"^AFTER (.*)$", out, re.M).group(1))
    assert after["programs"] == [], after
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], f"memory lost:\n{before}\n{after}"
    assert_nothing_lost(out)
