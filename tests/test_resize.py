"""Resizing a running enclave (issue 15): memory added with `atoll add`,
used by a program, refused back while the program holds it, then taken
back with `atoll remove`; the LWK's free memory and Linux's MemTotal come
back to the byte, and `atoll status` shows the history
(tests/programs/memhog.c). A block given back zaps only the mirrors that
mapped it (tests/programs/mirror_hold.c). CPUs added and removed while a 3-thread OpenMP
program computes (tests/programs/omp_resize.c): its sums stay right, its
threads spread onto new CPUs and leave removed ones, and
sched_getaffinity follows each change."""
import os
import random
import re

import pytest


def test_cpus_added_and_removed_under_openmp(vm, programs):
    # 1 -> 2 -> 3 -> 2 -> 1 CPUs while the team of 3 computes; at the end of
    # round 1 its last thread pins itself to the highest CPU it may use
    # (LWK CPU 1), which the last removal takes away.
    res = vm(r'''
mkdir -p /tmp/r
online_before=$(cat /sys/devices/system/cpu/online)
atoll create --cpus 1 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/omp_resize /tmp/r 5 > /tmp/omp.out 2>&1 & prog=$!
step() {  # resize, then let round $1 end and show the enclave's CPUs
    shift; "$@"; echo "STATUS $?"
    atoll status e | grep '^cpus:'
    touch /tmp/r/go.$round
    n=0; while [ ! -e /tmp/r/round.$round ] && [ $n -lt 300 ]; do sleep 0.1; n=$((n + 1)); done
    [ -e /tmp/r/round.$round ] || { echo "ROUND $round DID NOT END"; cat /tmp/omp.out; exit 3; }
    round=$((round + 1))
}
round=0
step 0 true
step 1 atoll add e --cpus 1
step 2 atoll add e --cpus 1
echo "LINUX HAS $(cat /sys/devices/system/cpu/online)"
step 3 atoll remove e --cpus 1
step 4 atoll remove e --cpus 2-2
wait $prog; echo "PROG: $?"
cat /tmp/omp.out
atoll remove e --cpus 3-3; echo "REMOVE BOOT CPU: $?"
atoll remove e --cpus 1; echo "REMOVE LAST: $?"
atoll add e --cpus 0-0; echo "ADD CPU 0: $?"
atoll status e | sed -n '/^resized:/,/^programs/p'
atoll destroy e > /dev/null || exit 10
[ "$online_before" = "$(cat /sys/devices/system/cpu/online)" ] && echo CPUS_BACK
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    rounds = re.findall(r"round (\d): team=3 affinity=(\d),(\d),(\d) cpus=(\d+),(\d+),(\d+) "
                        r"pinned=(-?\d+) chunks=\d+ wrong=0", out)
    assert len(rounds) == 5, out
    counts = [tuple(int(x) for x in r[1:4]) for r in rounds]
    cpus = [tuple(int(x) for x in r[4:7]) for r in rounds]
    # Unpinned threads see every CPU; the pinned one its one CPU.
    assert counts == [(1, 1, 1), (2, 2, 2), (3, 3, 1), (2, 2, 1), (1, 1, 1)], out
    assert cpus[0] == (0, 0, 0) and cpus[4] == (0, 0, 0), out
    assert len(set(cpus[2])) == 3, out  # three CPUs, a thread on each
    assert rounds[2][7] == "1" and cpus[2][2] == 1, out  # pinned to LWK CPU 1 ...
    assert rounds[4][7] == "0", out  # ... which left: pinned to the CPU it went to
    assert "omp_resize: ok" in out and "PROG: 0" in out, out
    assert re.search(r"added CPU 2 to enclave e: it has CPUs 2-3 now", out), out
    assert "added CPU 1 to enclave e: it has CPUs 1-3 now" in out and "LINUX HAS 0\n" in out, out
    assert "removed CPU 1 from enclave e: it has CPUs 2-3 now" in out, out
    assert "removed CPU 2 from enclave e: it has CPUs 3 now" in out, out
    for line in ["cpus: 3 (1 CPUs)", "cpus: 2-3 (2 CPUs)", "cpus: 1-3 (3 CPUs)"]:
        assert line in out, out
    assert "CPU 3 is enclave e's boot CPU" in out and "REMOVE BOOT CPU: 1" in out, out
    assert "at most 0 can be removed" in out and "REMOVE LAST: 1" in out, out
    assert "CPU 0 cannot go to an enclave" in out and "ADD CPU 0: 1" in out, out
    assert len(re.findall(r"\+CPU \d at [\d.]+ s: done", out)) == 2, out
    assert re.search(r"-CPU 1 at [\d.]+ s: done", out) and re.search(r"-CPU 2 at [\d.]+ s: done", out), out
    assert "+CPU 0 at" in out and "refused (Operation not permitted)" in out, out
    assert "CPUS_BACK" in out, out


def test_refused_or_unanswered_cpu_add_loses_nothing(vm, programs):
    # The LWK refuses the second of two CPUs: the first goes back too and
    # Linux has both again; an LWK that does not answer (hangtest): the CPU
    # stays offline until destroy --force gives everything back.
    res = vm(r'''
online_before=$(cat /sys/devices/system/cpu/online)
atoll create --cpus 1 --mem 128M --name r --kernel /lib/atoll/atoll-kernel-test --cmdline refuse_cpu=2 \
    > /dev/null || exit 9
online_created=$(cat /sys/devices/system/cpu/online)
atoll add r --cpus 2; echo "ADD REFUSED: $?"
[ "$online_created" = "$(cat /sys/devices/system/cpu/online)" ] && echo LINUX_HAS_THEM_BACK
atoll status r | grep '^cpus:'
atoll add r --cpus 1; echo "ADD AFTER: $?"
atoll run r -- /extra/hello > /dev/null; echo "RUN AFTER: $?"
atoll destroy r > /dev/null || exit 10
atoll create --cpus 1 --mem 128M --name h --kernel /lib/atoll/atoll-kernel-test --cmdline hangtest \
    > /dev/null || exit 11
atoll add h --cpus 1; echo "ADD UNANSWERED: $?"
atoll destroy h --force > /dev/null || exit 12
[ "$online_before" = "$(cat /sys/devices/system/cpu/online)" ] && echo CPUS_BACK
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert re.search(r"did not take CPU \d \(refused\): it is Linux's again", out), out
    assert "ADD REFUSED: 1" in out and "LINUX_HAS_THEM_BACK" in out, out
    assert "cpus: 3 (1 CPUs)" in out, out
    assert "ADD AFTER: 0" in out and "RUN AFTER: 0" in out, out
    assert "does not answer about it: it stays offline until the enclave is destroyed" in out, out
    assert "ADD UNANSWERED: 1" in out and "CPUS_BACK" in out, out


def test_memory_added_used_and_taken_back(vm, programs):
    res = vm(r'''
mkdir -p /tmp/m
total_before=$(grep MemTotal /proc/meminfo | tr -s ' ')
atoll create --cpus 1 --mem 128M --name e > /dev/null || exit 9
total_created=$(grep MemTotal /proc/meminfo | tr -s ' ')
lwk_before=$(atoll status e | grep '^lwk memory')
echo "LWK BEFORE: $lwk_before"
atoll add e --mem 384M; echo "ADD: $?"
total_now=$(grep MemTotal /proc/meminfo | tr -s ' ' | cut -d' ' -f2)
echo "LINUX GAVE: $(( $(echo $total_created | cut -d' ' -f2) - $total_now )) kB"
atoll status e | grep -E '^(memory|lwk memory)'
atoll run e -- /extra/memhog 360 /tmp/m & hog=$!
while [ ! -e /tmp/m/memhog.ready ]; do sleep 0.2; done
atoll remove e --mem 384M; echo "REMOVE IN USE: $?"
atoll status e | grep -E '^memory'
touch /tmp/m/memhog.done; wait $hog; echo "HOG: $?"
atoll remove e --mem 384M; echo "REMOVE: $?"
[ "$lwk_before" = "$(atoll status e | grep '^lwk memory')" ] && echo LWK_MEMORY_BACK
atoll remove e --mem 128M; echo "REMOVE BOOT MEMORY: $?"
atoll add e --mem 100M; echo "ADD ODD SIZE: $?"
atoll status e | sed -n '/^resized:/,/^programs/p'
atoll destroy e > /dev/null || exit 10
[ "$total_before" = "$(grep MemTotal /proc/meminfo | tr -s ' ')" ] && echo MEMTOTAL_BACK
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert "added 384 MiB to enclave e: it has 512 MiB now" in out and "ADD: 0" in out, out
    assert "LINUX GAVE: 393216 kB" in out, out
    assert "memory: 512 MiB in 4 ranges" in out, out
    assert "holds memory of enclave e's programs: nothing removed" in out, out
    assert "REMOVE IN USE: 1" in out, out
    assert "memhog: 360 MiB checked" in out and "HOG: 0" in out, out
    assert "removed 384 MiB from enclave e: it has 128 MiB now" in out and "REMOVE: 0" in out, out
    assert "LWK_MEMORY_BACK" in out, out
    assert "only that can be removed" in out and "REMOVE BOOT MEMORY: 1" in out, out
    assert "ADD ODD SIZE: 2" in out, out  # refused by the CLI's size check, as at create
    assert "+384 MiB memory at" in out and "-384 MiB memory at" in out, out
    assert "refused (Device or resource busy)" in out, out
    assert "MEMTOTAL_BACK" in out, out


def test_block_given_back_while_mirrors_exist_elsewhere(vm, programs):
    # Two programs whose mirrors (their memory mapped in their `atoll run`)
    # hold pages (tests/programs/mirror_hold.c): keep's memory lies in the
    # boot block, taken before a block was added; drop's next mapping lies
    # in the added block, and drop unmaps it without a delegated call, so
    # its mirror keeps stale mappings there. Removing the block zaps drop's
    # mirror (the module's debug message says so) and not keep's: keep's
    # worker then reads and writes its 16 MiB again without a page fault
    # (zapped, they would take one per 4 KiB page), and both programs go on
    # correctly; the memory comes back to the byte.
    res = vm(r'''
mkdir -p /tmp/h
wait_for() {
    n=0; while [ ! -e "$1" ] && [ $n -lt 600 ]; do sleep 0.1; n=$((n + 1)); done
    [ -e "$1" ] || { echo "NO $1"; cat /tmp/h/*.out; exit 3; }
}
minflt() { awk '{ print $10 }' /proc/$1/stat; }
lwk_pid() { atoll status g | awk -v h="$1" '$2 == h { print $1 }'; }
for c in /proc/dynamic_debug/control /sys/kernel/debug/dynamic_debug/control; do
    [ -e $c ] || mount -t debugfs none /sys/kernel/debug 2> /dev/null
    [ -e $c ] && echo 'module atoll file mirror.c +p' > $c && break
done
total_before=$(grep MemTotal /proc/meminfo | tr -s ' ')
atoll create --cpus 1 --mem 128M --name g > /dev/null || exit 9
lwk_before=$(atoll status g | grep '^lwk memory')
# Both programs start before the block is added: nothing of theirs lies in it ...
atoll run g -- /extra/mirror_hold keep 16 /tmp/h > /tmp/h/keep.out 2>&1 & keep=$!
wait_for /tmp/h/keep.ready
atoll run g -- /extra/mirror_hold drop /tmp/h > /tmp/h/drop.out 2>&1 & drop=$!
wait_for /tmp/h/drop.started
atoll add g --mem 128M; echo "ADD: $?"
# ... but drop's next mapping: the LWK gives the lowest memory first, and
# the added block lies below the boot block (Linux's highest movable one).
echo 64 > /tmp/h/drop.go
wait_for /tmp/h/drop.ready
echo "PIDS keep=$(lwk_pid $keep) drop=$(lwk_pid $drop)"
# Refused until drop has unmapped its memory.
n=0
until atoll remove g --mem 128M > /tmp/h/remove.out 2>&1; do
    n=$((n + 1)); [ $n -lt 100 ] || break; sleep 0.1
done
cat /tmp/h/remove.out
dmesg | grep "mirror zapped"
before=$(minflt $keep)
kill -HUP $keep $drop
wait_for /tmp/h/keep.done
echo "KEEP FAULTS: $(($(minflt $keep) - before))"
touch /tmp/h/keep.end
wait $keep; echo "KEEP: $?"
wait $drop; echo "DROP: $?"
cat /tmp/h/keep.out /tmp/h/drop.out
n=0
until [ "$lwk_before" = "$(atoll status g | grep '^lwk memory')" ] || [ $n -ge 50 ]; do
    n=$((n + 1)); sleep 0.1
done
[ "$lwk_before" = "$(atoll status g | grep '^lwk memory')" ] && echo LWK_MEMORY_BACK
atoll destroy g > /dev/null || exit 10
[ "$total_before" = "$(grep MemTotal /proc/meminfo | tr -s ' ')" ] && echo MEMTOTAL_BACK
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert "ADD: 0" in out, out
    pids = re.search(r"PIDS keep=(\d+) drop=(\d+)", out)
    assert pids, out
    assert "removed 128 MiB from enclave g: it has 128 MiB now" in out, out
    zapped = re.findall(r"enclave g: program (\d+)'s mirror zapped", out)
    assert zapped == [pids[2]], out  # drop's, not keep's
    # Zapped, keep's 16 MiB would have faulted back in page by page (4096).
    assert int(re.search(r"KEEP FAULTS: (\d+)", out)[1]) < 1024, out
    assert "mirror_hold: keep ok" in out and "KEEP: 0" in out, out
    assert "mirror_hold: drop ok" in out and "DROP: 0" in out, out
    assert "LWK_MEMORY_BACK" in out and "MEMTOTAL_BACK" in out, out


def test_refused_or_unanswered_resize_loses_nothing(vm, programs):
    # An LWK that refuses the second of three blocks: the first, already
    # taken, is taken back and every block is Linux's again; an LWK that
    # does not answer at all (hangtest): the block stays out of Linux's
    # hands until destroy --force gives everything back.
    res = vm(r'''
total_before=$(grep MemTotal /proc/meminfo | tr -s ' ')
atoll create --cpus 1 --mem 128M --name r --kernel /lib/atoll/atoll-kernel-test --cmdline refuse_resize=2 \
    > /dev/null || exit 9
total_created=$(grep MemTotal /proc/meminfo | tr -s ' ')
lwk_before=$(atoll status r | grep '^lwk memory')
atoll add r --mem 384M; echo "ADD REFUSED: $?"
[ "$total_created" = "$(grep MemTotal /proc/meminfo | tr -s ' ')" ] && echo LINUX_HAS_IT_BACK
[ "$lwk_before" = "$(atoll status r | grep '^lwk memory')" ] && echo LWK_AS_BEFORE
atoll status r | grep -E '^memory'
atoll add r --mem 128M; echo "ADD AFTER: $?"
atoll destroy r > /dev/null || exit 10
atoll create --cpus 1 --mem 128M --name h --kernel /lib/atoll/atoll-kernel-test --cmdline hangtest \
    > /dev/null || exit 11
atoll add h --mem 128M; echo "ADD UNANSWERED: $?"
atoll destroy h --force > /dev/null || exit 12
[ "$total_before" = "$(grep MemTotal /proc/meminfo | tr -s ' ')" ] && echo MEMTOTAL_BACK
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert "did not take the block at" in out and "(refused): nothing added" in out, out
    assert "ADD REFUSED: 1" in out and "LINUX_HAS_IT_BACK" in out and "LWK_AS_BEFORE" in out, out
    assert "memory: 128 MiB in 1 ranges" in out, out
    assert "ADD AFTER: 0" in out, out
    assert "does not answer about it: 1 blocks stay offline until it is destroyed" in out, out
    assert "ADD UNANSWERED: 1" in out and "MEMTOTAL_BACK" in out, out


def seeded_rolls(steps):
    """(seed, `steps` random bytes as words): the seed is printed, and taken from
    ATOLL_SEED when set, so that a failure's steps can be replayed."""
    seed = int(os.environ.get("ATOLL_SEED") or random.randrange(1 << 32))
    print(f"random resize steps: ATOLL_SEED={seed}")
    rng = random.Random(seed)
    return seed, " ".join(str(rng.randrange(256)) for _ in range(steps))


@pytest.mark.parametrize("steps,churn", [
    pytest.param(20, 100, id="quick"),
    pytest.param(200, 300, id="full", marks=pytest.mark.long),
])
def test_random_add_remove_cycles_while_programs_run(vm, programs, steps, churn):
    # Random steps, each one 128 MiB block or one CPU in or out, while
    # mmap_churn maps, writes, checks and unmaps memory on its threads and
    # OpenMP teams (as large as the enclave at their start) sum known
    # series: every byte and sum is right, memory removals they block are
    # refused, and at the end everything added goes back: the LWK's memory
    # (after a first CPU cycle made each CPU index's stacks), Linux's
    # MemTotal and online CPUs as before.
    seed, rolls = seeded_rolls(steps)
    res = vm(f'SEED={seed} ROLLS="{rolls}" CHURN={churn}\n' + r'''
echo "SEED $SEED"
atoll create --cpus 1 --mem 128M --name c > /dev/null || exit 9
atoll add c --cpus 2 > /dev/null && atoll remove c --cpus 2 > /dev/null || exit 11
total_created=$(grep MemTotal /proc/meminfo | tr -s ' ')
online_created=$(cat /sys/devices/system/cpu/online)
lwk_before=$(atoll status c | grep '^lwk memory')
# The programs run again and again until the cycles are over.
( while [ ! -e /tmp/stop ]; do
    atoll run c -- /extra/mmap_churn $CHURN >> /tmp/churn.out 2>&1 || echo CHURN_FAILED >> /tmp/churn.out
done ) & churn=$!
( while [ ! -e /tmp/stop ]; do
    atoll run c -- /extra/openmp >> /tmp/omp.out 2>&1 || echo OMP_FAILED >> /tmp/omp.out
done ) & omp=$!
blocks=0 cpus=0 adds=0 removes=0 refused=0
i=0
for r in $ROLLS; do
    i=$((i + 1))
    if [ $((r % 2)) -eq 0 ]; then
        if [ $cpus -lt 2 ] && { [ $cpus -eq 0 ] || [ $((r % 4)) -eq 0 ]; }; then
            atoll add c --cpus 1 > /dev/null 2>/tmp/step.err \
                || { echo "CPU ADD FAILED at $i"; cat /tmp/step.err; break; }
            cpus=$((cpus + 1)) adds=$((adds + 1))
        else
            atoll remove c --cpus 1 > /dev/null 2>/tmp/step.err \
                || { echo "CPU REMOVE FAILED at $i"; cat /tmp/step.err; break; }
            cpus=$((cpus - 1)) removes=$((removes + 1))
        fi
    elif [ $blocks -eq 0 ] || { [ $blocks -lt 3 ] && [ $((r % 4)) -eq 1 ]; }; then
        atoll add c --mem 128M > /dev/null 2>/tmp/step.err || { echo "ADD FAILED at $i"; cat /tmp/step.err; break; }
        blocks=$((blocks + 1)) adds=$((adds + 1))
    elif atoll remove c --mem 128M > /dev/null 2>/tmp/step.err; then
        blocks=$((blocks - 1)) removes=$((removes + 1))
    else
        grep -q "nothing removed" /tmp/step.err || { echo "REMOVE FAILED at $i"; cat /tmp/step.err; break; }
        refused=$((refused + 1))
    fi
done
echo "STEPS adds=$adds removes=$removes refused=$refused left=$blocks,$cpus"
touch /tmp/stop; wait $churn $omp
echo "CHURN RUNS: $(grep -c '^mmap_churn: threads=' /tmp/churn.out)"
echo "OMP RUNS: $(grep -c '^openmp: ok' /tmp/omp.out)"
echo "OMP TEAMS: $(grep -o '^team=[0-9]*' /tmp/omp.out | sort | uniq -c | tr -s ' \n' ' ')"
grep -c CHURN_FAILED /tmp/churn.out | sed 's/^/CHURN FAILURES: /'
grep -c OMP_FAILED /tmp/omp.out | sed 's/^/OMP FAILURES: /'
[ $blocks -gt 0 ] && atoll remove c --mem $((blocks * 128))M > /dev/null && echo "REST REMOVED"
[ $cpus -gt 0 ] && atoll remove c --cpus $cpus > /dev/null && echo "CPUS REMOVED"
[ "$lwk_before" = "$(atoll status c | grep '^lwk memory')" ] && echo LWK_MEMORY_BACK
[ "$total_created" = "$(grep MemTotal /proc/meminfo | tr -s ' ')" ] && echo MEMTOTAL_BACK
[ "$online_created" = "$(cat /sys/devices/system/cpu/online)" ] && echo CPUS_BACK
atoll destroy c > /dev/null || exit 10
''', extra_dir=str(programs), timeout=900)
    assert res.status == 0, res.output
    out = res.output
    assert "FAILED at" not in out, out
    done = re.search(r"STEPS adds=(\d+) removes=(\d+) refused=(\d+) left=(\d+),(\d+)", out)
    assert done and sum(int(x) for x in done.groups()[:3]) == steps, out
    assert int(done[1]) > 0 and int(done[2]) > 0, out
    assert "CHURN FAILURES: 0" in out and "OMP FAILURES: 0" in out, out
    assert int(re.search(r"CHURN RUNS: (\d+)", out)[1]) >= 2, out
    assert int(re.search(r"OMP RUNS: (\d+)", out)[1]) >= 2, out
    # Teams of more than one thread: the programs ran on added CPUs too.
    assert re.search(r"team=[23]", out), out
    assert "LWK_MEMORY_BACK" in out and "MEMTOTAL_BACK" in out and "CPUS_BACK" in out, out
