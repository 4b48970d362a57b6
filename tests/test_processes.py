"""Processes in an enclave: many programs at once sharing its cores, one
killed while the others finish, `atoll status` listing them, destroy
refusing while they run and --force ending them, and nothing lost."""
import json
import re

from resources import RESOURCES, assert_nothing_lost

ROUNDS = 20_000_000
NAMES = [f"p{i}" for i in range(1, 9)]


def status_json(out, tag):
    line = re.search(rf"^{tag} (.*)$", out, re.M)
    assert line, f"no {tag} line:\n{out}"
    return json.loads(line.group(1))


def test_many_programs_share_an_enclave(vm, programs):
    names = " ".join(NAMES)
    res = vm(RESOURCES + rf'''
wait_line() {{ for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }}
resources
for n in a b {names}; do /extra/work $n {ROUNDS}; done > /tmp/linux.out
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
echo "BEFORE $(atoll --json status e)"
atoll run e -- /extra/work a {ROUNDS} > /tmp/a.out & A=$!
atoll run e -- /extra/work b {ROUNDS} > /tmp/b.out & B=$!
wait $A; echo "TWO_A $?"; wait $B; echo "TWO_B $?"
atoll run e --cpus 1-1 -- /extra/work victim forever > /tmp/victim.out 2>&1 & VICTIM=$!
echo "VICTIM_PID $VICTIM"
atoll run e --cpus 0,2 -- /extra/hello; echo "BAD_CPUS $?"
pids=""
for n in {names}; do atoll run e -- /extra/work $n {ROUNDS} > /tmp/$n.out & pids="$pids $!"; done
wait_line /tmp/victim.out running || echo "VICTIM_NEVER_RAN"
# The eight start one after another; on a loaded host that takes a while.
for _ in $(seq 200); do
    [ "$(atoll --json status e | grep -o '"command"' | wc -l)" -ge 3 ] && break; sleep 0.1
done
echo "DURING $(atoll --json status e)"
atoll status e
kill -KILL $VICTIM; wait $VICTIM; echo "VICTIM $?"
for p in $pids; do wait $p; echo "EIGHT $?"; done
sleep 1
echo "AFTER $(atoll --json status e)"
cat /tmp/a.out /tmp/b.out $(for n in {names}; do echo /tmp/$n.out; done) > /tmp/enclave.out
diff /tmp/linux.out /tmp/enclave.out && echo SAME
atoll destroy e > /dev/null || exit 10
resources
''', extra_dir=str(programs), timeout=600)
    out = res.output
    assert res.status == 0, out
    assert "TWO_A 0" in out and "TWO_B 0" in out, out
    assert "VICTIM_NEVER_RAN" not in out, out
    assert out.count("EIGHT 0") == 8, out
    assert "SAME" in out, f"results in the enclave differ from Linux's:\n{out}"
    before, during, after = (status_json(out, t) for t in ("BEFORE", "DURING", "AFTER"))
    assert before["programs"] == [], before
    listed = sorted(p["command"] for p in during["programs"])
    assert "work" in listed and len(listed) >= 2, f"running programs not listed:\n{during}"
    assert all(p["mem_bytes"] > 0 and p["threads"] >= 1 and p["host_pid"] > 0
               for p in during["programs"] if p["state"] == "running"), during
    assert len({p["pid"] for p in during["programs"]}) == len(during["programs"]), during
    # --cpus 1-1: the victim's one thread on the enclave's second core only.
    victim = int(re.search(r"^VICTIM_PID (\d+)$", out, re.M).group(1))
    assert [p["cpus"] for p in during["programs"] if p["host_pid"] == victim] == [[1]], during
    assert "--cpus: enclave e has LWK CPUs 0-1, not 2" in out and "BAD_CPUS 125" in out, out
    # The text view has a row per program.
    assert re.search(r"^\s+PID\s+HOST PID\s+COMMAND", out, re.M), out
    assert after["programs"] == [], after
    assert after["lwk_free_bytes"] == before["lwk_free_bytes"], f"memory lost:\n{before}\n{after}"
    assert_nothing_lost(out)


def test_destroy_refuses_while_programs_run_and_force_ends_them(vm, programs):
    res = vm(RESOURCES + r'''
wait_line() { for _ in $(seq 200); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
resources
atoll create --cpus 1 --mem 256M --name e > /dev/null || exit 9
atoll run e -- /extra/work x forever > /tmp/x.out 2>&1 & X=$!
atoll run e -- /extra/work y forever > /tmp/y.out 2>&1 & Y=$!
wait_line /tmp/x.out running && wait_line /tmp/y.out running || echo NEVER_RAN
atoll destroy e; echo "PLAIN $?"
atoll destroy --force e; echo "FORCE $?"
wait $X; echo "X $?"; wait $Y; echo "Y $?"
atoll list
resources
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "NEVER_RAN" not in out, out
    assert re.search(r"enclave e is running 2 programs: end `atoll run` first, or destroy --force", out), out
    assert "PLAIN 0" not in out and "FORCE 0" in out, out
    # Killed with SIGKILL: the shell's 128 + 9.
    assert "X 137" in out and "Y 137" in out, out
    assert "no enclaves" in out, out
    assert_nothing_lost(out)


def test_programs_moving_across_cores_again_and_again(vm, programs):
    # A program that moves itself across the enclave's cores leaves them
    # idle behind it; fifteen of them, each followed by a program that
    # takes and frees memory, leave the enclave running. Cores that go idle
    # run on the kernel's page tables since a core that kept an ended
    # program's tables reset the machine (a triple fault) after an MPI job
    # was killed; the LWK now refuses to free tables a core still has
    # loaded (vm.rs), so such a bug shows as a contained LWK crash here.
    res = vm(r'''
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
for i in $(seq 15); do
    atoll run e -- /extra/migrate || echo "migrate failed: $?"
    atoll run e -- /extra/mmap_churn 20 > /dev/null || echo "churn failed: $?"
done
sleep 1
echo "after: $(atoll status e | grep '^state')"
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=400)
    assert res.status == 0, res.output
    assert res.output.count("migrate: on each of 2 CPUs in turn: yes") == 15, res.output
    assert "failed" not in res.output and "after: state: running" in res.output, res.output
