"""Ordinary users (issue 17): root creates an enclave for alice; alice runs
programs in it, reads its console and status and pings it, with her own
credentials for every delegated call; bob may not, until root gives the
enclave to a group he is in; creating, destroying, resizing, noise probes
and changing owners stay root's. The module refuses a non-owner's ioctls
itself, without the CLI's checks in front (tests/programs/not_yours.c).
The users are real entries in the VM's /etc/passwd and /etc/group, and
setpriv (util-linux) switches to them."""
import re

USERS = r'''
cp /etc/passwd /tmp/passwd; cp /etc/group /tmp/group
echo 'alice:x:1001:1001:Alice:/tmp:/bin/sh' >> /tmp/passwd
echo 'bob:x:1002:1002:Bob:/tmp:/bin/sh' >> /tmp/passwd
printf 'alice:x:1001:\nbob:x:1002:\nhpc:x:2000:bob\n' >> /tmp/group
mount --bind /tmp/passwd /etc/passwd && mount --bind /tmp/group /etc/group || exit 9
as() { u=$1; shift; /usr/bin/setpriv --reuid=$u --regid=$u --init-groups "$@"; }
echo "only root reads this" > /tmp/secret; chmod 600 /tmp/secret
echo "anyone reads this" > /tmp/public; chmod 644 /tmp/public
'''


def test_owner_uses_others_are_refused(vm, programs):
    res = vm(USERS + r'''
echo "MODE $(stat -c %a /dev/atoll)"
atoll create --cpus 2 --mem 128M --name e --owner alice > /dev/null || exit 10
atoll create --cpus 1 --mem 128M --name f --owner nobody-here; echo "NO SUCH USER: $?"
echo "== alice"
as alice atoll list | sed 's/^/LIST /'
as alice atoll status e | grep '^owner:'
as alice atoll run e -- /usr/bin/id; echo "ID: $?"
as alice atoll run e -- /usr/bin/cat /tmp/public; echo "PUBLIC: $?"
as alice atoll run e -- /usr/bin/cat /tmp/secret; echo "SECRET: $?"
as alice atoll run e -- /usr/bin/touch /tmp/made-by-alice; ls -n /tmp/made-by-alice | awk '{print "MADE " $3 ":" $4}'
as alice atoll ping e --count 1 > /dev/null; echo "PING: $?"
as alice atoll console e | grep -c 'enclave 1 booted' | sed 's/^/CONSOLE /'
for cmd in "destroy e" "create --cpus 1 --mem 128M" "noise --enclave e --seconds 0.1" "add e --mem 128M" \
        "chown e alice"; do
    as alice atoll $cmd > /dev/null; echo "ALICE $cmd: $?"
done
echo "== bob"
as bob atoll list | sed 's/^/BOBLIST /'
for cmd in "run e -- /usr/bin/id" "status e" "console e" "ping e"; do
    as bob atoll $cmd; echo "BOB $cmd: $?"
done
as bob /extra/not_yours 1; echo "NOT YOURS: $?"
echo "== chown"
atoll chown e alice:hpc
as bob atoll run e -- /usr/bin/id; echo "BOB AFTER CHOWN: $?"
atoll destroy e > /dev/null; echo "ROOT DESTROY: $?"
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "MODE 666" in out, out
    assert "no user named 'nobody-here' in /etc/passwd" in out and "NO SUCH USER: 1" in out, out
    # alice: her enclave, her programs, her credentials
    assert "LIST 1   e     running  alice " in out, out
    assert "owner: alice\n" in out, out
    assert "uid=1001(alice) gid=1001(alice) groups=1001(alice)" in out and "ID: 0" in out, out
    assert "anyone reads this" in out and "PUBLIC: 0" in out, out
    assert "only root reads this" not in out, out
    assert "/tmp/secret: Permission denied" in out and "SECRET: 1" in out, out
    assert "MADE 1001:1001" in out, out
    assert "PING: 0" in out and "CONSOLE 1" in out, out
    for cmd, what in [("destroy e", "destroy enclaves"), ("create --cpus 1 --mem 128M", "create enclaves"),
                      ("noise --enclave e --seconds 0.1", "run noise probes"),
                      ("add e --mem 128M", "resize enclaves"), ("chown e alice", "change an enclave's owner")]:
        assert f"ALICE {cmd}: 1" in out, (cmd, out)
        assert f"only root (CAP_SYS_ADMIN) may {what}" in out, (what, out)
    # bob: sees who has it, nothing more
    assert "BOBLIST 1   e     running  alice  -     -" in out, out
    for cmd in ["status e", "console e", "ping e"]:
        assert f"BOB {cmd}: 1" in out, (cmd, out)
    assert "BOB run e -- /usr/bin/id: 125" in out, out
    assert out.count("enclave e belongs to alice: only its owner and root may use it") == 4, out
    # the module itself refuses him
    for what in ["console", "ping", "programs", "run", "adopt", "message", "destroy", "chown", "resize", "noise"]:
        assert f"{what}: refused" in out, (what, out)
    assert "info: id 1 name e owner 1001:4294967295 yours 0 cpus 0" in out, out
    assert "all refused" in out and "NOT YOURS: 0" in out, out
    # the hpc group may, once the enclave is theirs
    assert "enclave e now belongs to alice:hpc" in out, out
    assert "uid=1002(bob) gid=1002(bob) groups=1002(bob),2000(hpc)" in out, out
    assert "BOB AFTER CHOWN: 0" in out and "ROOT DESTROY: 0" in out, out


def test_messages_and_segments_stay_with_their_users(vm, programs):
    """Linux's message ports are each user's own; programs in enclaves of
    two owners cannot message each other until one user owns both; a
    Linux segment's pinned pages count against its user's RLIMIT_MEMLOCK
    and come back with it; others do not see a user's private segments."""
    res = vm(USERS + r'''
atoll create --cpus 1 --mem 128M --name e --owner alice > /dev/null || exit 10
atoll create --cpus 1 --mem 128M --name f --owner bob > /dev/null || exit 11
eid=$(atoll list | awk '$2=="e" {print $1}'); fid=$(atoll list | awk '$2=="f" {print $1}')
echo "== Linux ports"
as alice /extra/msgping post 0 5 alice-on-linux
as bob /extra/msgping take 5 300 2>&1 | sed 's/^/BOB5 /'
as alice /extra/msgping take 5 300 | sed 's/^/ALICE5 /'
as alice atoll run e -- /extra/msgping post 0 6 alice-in-e
as bob /extra/msgping take 6 300 2>&1 | sed 's/^/BOB6 /'
as alice /extra/msgping take 6 300 | sed 's/^/ALICE6 /'
as bob /extra/msgping post 0 7 forged-by-bob
as alice /extra/msgping take 7 300 2>&1 | sed 's/^/ALICE7 /'
echo "== enclaves of two owners"
as alice atoll run e -- /extra/msgping post $fid 8 to-bobs 2>&1 | sed 's/^/E-TO-F /'
as bob atoll run f -- /extra/msgping post $eid 8 to-alices 2>&1 | sed 's/^/F-TO-E /'
atoll chown f alice > /dev/null
as alice atoll run e -- /extra/msgping post $fid 8 now-one-owner | sed 's/^/CHOWNED /'
as alice atoll run f -- /extra/msgping take 8 3000 | sed 's/^/F-TOOK /'
atoll chown f alice:hpc > /dev/null
as alice atoll run e -- /extra/msgping post $fid 8 group-differs 2>&1 | sed 's/^/GROUP /'
atoll chown f bob > /dev/null
as alice atoll run e -- /extra/msgping post $fid 8 again 2>&1 | sed 's/^/BACK /'
echo "== pinned memory"
(ulimit -l 8192; as alice /extra/xemem_check cycles 20 4194304) | tail -1 | sed 's/^/CYCLES /'
(ulimit -l 8192; as alice /extra/xemem_check cycles 1 16777216) | tail -1 | sed 's/^/OVER /'
/extra/xemem_check cycles 1 16777216 | tail -1 | sed 's/^/ROOT /'
echo "== listing"
mkdir -p /tmp/x && chmod 777 /tmp/x
as alice /extra/xemem_check hold alices /tmp/x > /dev/null & holder=$!
while [ ! -e /tmp/x/alices.ready ]; do sleep 0.1; done
as bob atoll list --segments | grep -c alices | sed 's/^/BOB SEES /'
as alice atoll list --segments | grep -c alices | sed 's/^/ALICE SEES /'
atoll list --segments | grep -c alices | sed 's/^/ROOT SEES /'
kill $holder
atoll destroy e > /dev/null && atoll destroy f > /dev/null || exit 12
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    eid, fid = 1, 2
    # Linux's ports: alice hears only what alice and her programs sent
    assert "BOB5 msgping take: Connection timed out" in out, out
    assert "ALICE5 msgping: took 'alice-on-linux' from kernel 0 port 0" in out, out
    assert "BOB6 msgping take: Connection timed out" in out, out
    assert f"ALICE6 msgping: took 'alice-in-e' from kernel {eid} port 0" in out, out
    assert "ALICE7 msgping take: Connection timed out" in out, out
    # two owners' enclaves: refused both ways until one user owns both, and again after
    assert "E-TO-F msgping post: Permission denied" in out, out
    assert "F-TO-E msgping post: Permission denied" in out, out
    assert f"CHOWNED msgping: posted 'now-one-owner' to kernel {fid} port 8" in out, out
    assert f"F-TOOK msgping: took 'now-one-owner' from kernel {eid} port 0" in out, out
    assert "GROUP msgping post: Permission denied" in out, out  # bob, in hpc, may use f
    assert "BACK msgping post: Permission denied" in out, out
    # RLIMIT_MEMLOCK: 20 x 4 MiB one at a time fit in 8 MiB; 16 MiB does not; root's is not limited
    assert "CYCLES cycles 20 x 4194304 bytes: ok" in out, out
    assert "OVER FAIL xpmem_make: Cannot allocate memory" in out, out
    assert "ROOT cycles 1 x 16777216 bytes: ok" in out, out
    # a 0600 segment is listed to its owner and root, not to bob
    assert "BOB SEES 0" in out and "ALICE SEES 1" in out and "ROOT SEES 1" in out, out


def test_a_program_becomes_another_user(vm, programs):
    """setuid and its family are the program's: its atoll run becomes that
    user for every delegated call after (tests/programs/ids.c, the same
    lines as on Linux): root's program that becomes alice cannot read
    root's file nor become root again, and may still fork; alice's setuid
    to herself works."""
    res = vm(USERS + r'''
atoll create --cpus 1 --mem 128M --name e > /dev/null || exit 10
atoll create --cpus 1 --mem 128M --name a --owner alice > /dev/null || exit 11
/extra/ids 1001 /tmp/secret > /tmp/linux.txt
atoll run e -- /extra/ids 1001 /tmp/secret > /tmp/enclave.txt
sed 's/^/ROOT /' /tmp/enclave.txt
cmp /tmp/linux.txt /tmp/enclave.txt && echo "SAME AS LINUX"
as alice /extra/ids > /tmp/linux.txt
as alice atoll run a -- /extra/ids 2>&1 > /tmp/enclave.txt | sed 's/^/ALICE-ERR /'
sed 's/^/ALICE /' /tmp/enclave.txt
cmp /tmp/linux.txt /tmp/enclave.txt && echo "ALICE SAME AS LINUX"
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "ROOT ids: uid 0 0 0, gid 0 0 0" in out, out
    assert "ROOT now: uid 1001 1001 1001, gid 1001 1001 1001, 1 groups" in out, out
    assert "ROOT open /tmp/secret: Permission denied" in out, out
    assert "ROOT setuid(0): Operation not permitted" in out, out
    assert "ROOT child: uid 1001 1001 1001" in out and "ROOT fork: ok" in out, out
    assert "SAME AS LINUX" in out, out
    assert "ALICE ids: uid 1001 1001 1001, gid 1001 1001 1001" in out, out
    assert "ALICE setuid(own): ok" in out and "ALICE-ERR" not in out, out
    assert "ALICE SAME AS LINUX" in out, out


def test_another_users_maps_are_refused(vm, programs):
    """/proc/<pid>/maps of another program of the enclave opens only if
    Linux lets the caller's atoll run open that program's atoll run's, as
    Linux lets one process read another's maps: bob, in the enclave's group,
    may not read alice's program's; alice and root may."""
    res = vm(USERS + r'''
atoll create --cpus 1 --mem 128M --name e --owner alice:hpc > /dev/null || exit 10
as alice atoll run e -- /usr/bin/sleep 60 &
for i in $(seq 50); do pid=$(atoll status e | awk '$3 == "sleep" {print $1}'); [ -n "$pid" ] && break; sleep 0.2; done
[ -n "$pid" ] || exit 11
as bob atoll run e -- /usr/bin/cat /proc/$pid/maps 2>&1 | sed 's/^/BOB /'
as alice atoll run e -- /usr/bin/cat /proc/$pid/maps | grep -c ' /usr/bin/sleep$' | sed 's/^/ALICE /'
atoll run e -- /usr/bin/cat /proc/$pid/task/$pid/maps | grep -c ' /usr/bin/sleep$' | sed 's/^/ROOT /'
kill %1; wait
''', extra_dir=str(programs), timeout=300)
    out = res.output
    assert res.status == 0, out
    bob = [line for line in out.splitlines() if line.startswith("BOB ")]
    assert any("Permission denied" in line for line in bob), out
    assert not any("/usr/bin/sleep" in line for line in bob), out
    assert re.search(r"^ALICE [1-9]$", out, re.M) and re.search(r"^ROOT [1-9]$", out, re.M), out


def test_servers_get_the_nice_root_gave_the_enclave(vm):
    """`atoll create --serve-nice N` (root): every thread of the `atoll run`
    serving a program of the enclave, a forked child's server too, runs at
    nice N on Linux, whoever runs it; other enclaves' servers keep theirs.
    Values outside Linux's range are refused."""
    res = vm(USERS + r'''
atoll create --cpus 1 --mem 128M --name e --owner alice --serve-nice -5 > /dev/null || exit 10
atoll create --cpus 1 --mem 128M --name plain --owner alice > /dev/null || exit 11
atoll status e | grep "^servers' nice" | sed 's/^/STATUS /'
echo "JSON $(atoll --json status e | grep -o '"serve_nice":-*[0-9]*')"
# One thread-bearing server, and a shell whose child (sleep) gets a forked one.
as alice atoll run e -- /bin/sh -c '/usr/bin/sleep 8; true' &
as alice atoll run plain -- /usr/bin/sleep 8 &
# Until the three servers are up (sh's, its forked one for sleep, plain's):
# a loaded host may take seconds.
for i in $(seq 60); do [ "$(pgrep -fc '^atoll run')" -ge 3 ] && break; sleep 0.1; done
sleep 0.5
# A forked server is named after the worker that forked it (atoll-call).
for pid in $(pgrep -f '^atoll run'); do
    enclave=$(tr '\0' ' ' < /proc/$pid/cmdline | awk '{print $3}')
    for t in /proc/$pid/task/*; do echo "NICE $enclave $(awk '{print $19}' $t/stat)"; done
done | sort | uniq -c
wait
atoll create --cpus 1 --mem 128M --name x --serve-nice 20; echo "TOO NICE: $?"
atoll destroy e > /dev/null && atoll destroy plain > /dev/null || exit 12
''', timeout=300)
    out = res.output
    assert res.status == 0, out
    assert "STATUS servers' nice: -5" in out and 'JSON "serve_nice":-5' in out, out
    nices = {(m[1], m[2]): int(m[0]) for m in re.findall(r"^\s*(\d+) NICE (\S+) (-?\d+)$", out, re.M)}
    # e: the sh's server and the forked one for sleep, each with its workers.
    assert set(k for k in nices if k[0] == "e") == {("e", "-5")} and nices["e", "-5"] >= 4, out
    assert set(k for k in nices if k[0] == "plain") == {("plain", "0")}, out
    assert "TOO NICE: 2" in out and "20 is not in -20..=19" in out, out
