"""XEMEM (issue 14): segments made anywhere on the node and attached
anywhere else, through xpmem.h (tests/programs/xemem_check.c, linked with
libxpmem.a, and dyn-xemem_check with libxpmem.so): the producer writes a
pattern, the consumer checks it byte for byte and writes its own, which
the producer checks; owners that crash or whose enclave is destroyed
revoke every attachment; segments kept past their owner stay until
removed; nothing is left behind."""

import re

import pytest

from resources import RESOURCES, assert_nothing_lost

TEST_IMAGE = "--kernel /lib/atoll/atoll-kernel-test"

PAIRS = r'''
mkdir -p /tmp/x
pair() {  # tag, producer command prefix, consumer command prefix, size, binary, consumer mode
    tag=$1 prod=$2 cons=$3 size=$4 bin=${5:-/extra/xemem_check} mode=${6:-attach}
    $prod $bin make $tag $size /tmp/x > /tmp/x/$tag.make 2>&1 &
    $cons $bin $mode $tag $size /tmp/x > /tmp/x/$tag.attach 2>&1; a=$?
    wait $!; m=$?
    echo "PAIR $tag size $size: make $m attach $a"
    cat /tmp/x/$tag.make /tmp/x/$tag.attach
}
'''


def statuses(out):
    """{tag: (make status, attach status)} from the PAIR lines."""
    return {m[0]: (int(m[2]), int(m[3]))
            for m in re.findall(r"PAIR (\S+) size (\d+): make (\d+) attach (\d+)", out)}


def test_segments_between_enclaves_and_linux(vm, programs):
    # Every direction, from one page to 64 MiB (2 MiB pages and the 4 KiB
    # ones around them), static and shared library, and from Fortran; both
    # enclaves' free memory and Linux's MemTotal come back to the byte.
    res = vm(PAIRS + r'''
total_before=$(grep MemTotal /proc/meminfo)
atoll create --cpus 1 --mem 256M --name a > /dev/null || exit 9
atoll create --cpus 1 --mem 256M --name b > /dev/null || exit 9
a_before=$(atoll status a | grep '^lwk memory'); b_before=$(atoll status b | grep '^lwk memory')
for size in 4096 2101248 67108864; do
    pair el$size "atoll run a --" "" $size
    pair le$size "" "atoll run a --" $size
    pair ee$size "atoll run a --" "atoll run b --" $size
done
pair ee-back "atoll run b --" "atoll run a --" 2101248 /extra/dyn-xemem_check
pair same "atoll run a --" "atoll run a --" 2101248
pair ll "" "" 65536 /extra/dyn-xemem_check
atoll run a -- /extra/xemem_fortran 20; echo "FORTRAN enclave: $?"
/extra/xemem_fortran 20; echo "FORTRAN linux: $?"
[ "$a_before" = "$(atoll status a | grep '^lwk memory')" ] && echo A_MEMORY_BACK
[ "$b_before" = "$(atoll status b | grep '^lwk memory')" ] && echo B_MEMORY_BACK
atoll destroy a > /dev/null || exit 10
atoll destroy b > /dev/null || exit 10
[ "$total_before" = "$(grep MemTotal /proc/meminfo)" ] && echo MEMTOTAL_BACK
''', extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    got = statuses(out)
    tags = [f"{d}{s}" for s in (4096, 2101248, 67108864) for d in ("el", "le", "ee")]
    for tag in tags + ["ee-back", "same", "ll"]:
        assert got.get(tag) == (0, 0), f"{tag}: {got.get(tag)}\n{out}"
        size = re.search(rf"PAIR {tag} size (\d+)", out)[1]
        assert f"attach {tag} {size}: the producer's bytes checked, ours written" in out, out
        assert f"make {tag} {size}: the consumer's bytes arrived, removed" in out, out
    # The same from Fortran, through bind(C), in the enclave and on Linux.
    assert out.count("xemem_fortran: 20 rounds through xpmem.h from Fortran: ok") == 2, out
    assert "FORTRAN enclave: 0" in out and "FORTRAN linux: 0" in out, out
    for line in ["A_MEMORY_BACK", "B_MEMORY_BACK", "MEMTOTAL_BACK"]:
        assert line in out, out


def test_owner_crash_and_destroy_revoke_attachments(vm, programs):
    # An owner that dies of SIGSEGV, on Linux or in an enclave, and an
    # enclave destroyed under its segment: every attachment, on Linux and
    # in another enclave, is revoked (SIGBUS on Linux, SIGSEGV in an
    # enclave, as the README says) and the watcher sees it.
    res = vm(r'''
mkdir -p /tmp/x
atoll create --cpus 1 --mem 256M --name a > /dev/null || exit 9
atoll create --cpus 1 --mem 256M --name b > /dev/null || exit 9
b_before=$(atoll status b | grep '^lwk memory')
watch() {  # tag, owner prefix, watcher prefix
    $2 /extra/xemem_check crash $1 2101248 /tmp/x > /dev/null 2>&1 &
    $3 /extra/xemem_check watch $1 2101248 /tmp/x; echo "WATCH $1: $?"
    wait $!; echo "OWNER $1: $?"
}
watch enclave-linux "atoll run a --" ""
watch linux-enclave "" "atoll run b --"
watch enclave-enclave "atoll run a --" "atoll run b --"
atoll run a -- /extra/xemem_check make held 65536 /tmp/x > /dev/null 2>&1 &
/extra/xemem_check watch held 65536 /tmp/x & w1=$!
atoll run b -- /extra/xemem_check watch held 65536 /tmp/x & w2=$!
while [ $(ls /tmp/x/held.attached 2>/dev/null | wc -l) -lt 1 ]; do sleep 0.2; done
sleep 2
atoll list --segments
atoll status a | sed -n '/^xemem:/,$p'
atoll --json list --segments \
    | python3 -c 'import json,sys; d=json.load(sys.stdin); print("JSON attachments", len(d["attachments"]))'
atoll destroy a --force > /dev/null; echo "DESTROY: $?"
atoll list --segments
wait $w1; echo "WATCH destroyed-linux: $?"
wait $w2; echo "WATCH destroyed-enclave: $?"
[ "$b_before" = "$(atoll status b | grep '^lwk memory')" ] && echo B_MEMORY_BACK
atoll destroy b > /dev/null || exit 10
''', extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    for tag, sig in [("enclave-linux", "SIGBUS"), ("linux-enclave", "SIGSEGV"),
                     ("enclave-enclave", "SIGSEGV")]:
        assert f"watch {tag}: revoked, reading it gave {sig}" in out, out
        assert f"WATCH {tag}: 0" in out and f"OWNER {tag}: 139" in out, out
    assert "DESTROY: 0" in out, out
    # Listed while held: the segment, owned in enclave 1, attached twice
    # (Linux and enclave 2), in `atoll list --segments` and `atoll status a`.
    assert re.search(r"\n\d+\s+held\s+enclave 1 pid \d+\s+64 KiB\s+0600\s+0\s+\d+\s+2\s+-\n", out), out
    assert re.search(r"\d+\s+\d+\s+linux pid \d+\s+0\s+64 KiB\s+rw\n", out), out
    assert re.search(r"\d+\s+\d+\s+enclave 2 pid \d+\s+0\s+64 KiB\s+rw\n", out), out
    assert "xemem:\n  SEGID" in out and "JSON attachments 2" in out, out
    assert out.rstrip().endswith("no segments") or "no segments\n" in out, out
    assert "watch held: revoked, reading it gave SIGBUS" in out, out
    assert "watch held: revoked, reading it gave SIGSEGV" in out, out
    assert "WATCH destroyed-linux: 0" in out and "WATCH destroyed-enclave: 0" in out, out
    assert "B_MEMORY_BACK" in out, out


@pytest.mark.parametrize("cycles,cpp", [
    pytest.param(50, 10, id="quick"),
    pytest.param(1000, 100, id="full", marks=pytest.mark.long),
])
def test_cycles_and_permissions(vm, programs, cycles, cpp):
    # `cycles` make/get/attach/detach/release/remove cycles in an enclave and
    # on Linux leave nothing behind (also `cpp` rounds from C++), and so does
    # an export of the main stack's untouched part; a segment made with mode
    # 0600 by root is refused to user nobody (its memory and its events), one
    # made 0666 is not. Quick: the same with fewer cycles.
    res = vm(rf'''
mkdir -p /tmp/x; chmod 777 /tmp/x
total_before=$(grep MemTotal /proc/meminfo)
atoll create --cpus 1 --mem 256M --name a > /dev/null || exit 9
before=$(atoll status a | grep '^lwk memory')
atoll run a -- /extra/xemem_check cycles {cycles} 2101248; echo "CYCLES enclave: $?"
/extra/xemem_check cycles {cycles} 65536; echo "CYCLES linux: $?"
atoll run a -- /extra/xemem_cpp {cpp}; echo "CPP enclave: $?"
atoll run a -- /extra/xemem_check stack; echo "STACK enclave: $?"
/extra/xemem_cpp {cpp}; echo "CPP linux: $?"
[ "$before" = "$(atoll status a | grep '^lwk memory')" ] && echo MEMORY_BACK
chmod 666 /dev/atoll   # so that nobody reaches XEMEM at all (issue 17 decides who may)
atoll run a -- /extra/xemem_check make private 65536 /tmp/x 600 > /dev/null 2>&1 &
p1=$!
atoll run a -- /extra/xemem_check make public 65536 /tmp/x 666 > /tmp/x/public.out 2>&1 &
p2=$!
while [ ! -e /tmp/x/private.ready ] || [ ! -e /tmp/x/public.ready ]; do sleep 0.2; done
/usr/bin/setpriv --reuid=nobody --regid=nogroup --clear-groups /extra/xemem_check denied private
echo "DENIED: $?"
/usr/bin/setpriv --reuid=nobody --regid=nogroup --clear-groups /extra/xemem_check attach public 65536 /tmp/x
echo "GRANTED: $?"
touch /tmp/x/private.done
wait $p1; wait $p2; echo "PUBLIC: $?"
atoll destroy a > /dev/null || exit 10
[ "$total_before" = "$(grep MemTotal /proc/meminfo)" ] && echo MEMTOTAL_BACK
''', extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    assert f"cycles {cycles} x 2101248 bytes: ok" in out and "CYCLES enclave: 0" in out, out
    assert f"cycles {cycles} x 65536 bytes: ok" in out and "CYCLES linux: 0" in out, out
    assert "MEMORY_BACK" in out and "MEMTOTAL_BACK" in out, out
    assert out.count(f"xemem_cpp: {cpp} rounds through xpmem.h from C++: ok") == 2, out
    assert "CPP enclave: 0" in out and "CPP linux: 0" in out, out
    # The main stack's untouched part gets its memory when exported.
    assert "stack export: same bytes" in out and "STACK enclave: 0" in out, out
    assert "denied private: get EACCES, signal EACCES, wait EACCES" in out, out
    assert "DENIED: 0" in out, out
    assert "GRANTED: 0" in out and "PUBLIC: 0" in out, out


def test_signalled_segments_every_pair_and_owner_gone(vm, programs):
    # Ping-pong over signalled segments between every pair (each round's
    # number read through the other's attachment); waits that time out,
    # with and without time, and events counted, on Linux and in an
    # enclave, on their own segments and on an enclave program's (whose
    # events live in its LWK); waiters on Linux and in another enclave get
    # EIDRM when the owner's enclave is destroyed, and nothing hangs.
    res = vm(r'''
mkdir -p /tmp/x
atoll create --cpus 1 --mem 256M --name a > /dev/null || exit 9
atoll create --cpus 1 --mem 256M --name b > /dev/null || exit 9
pp() {  # tag, first's prefix, second's prefix
    $3 /extra/xemem_check pingpong $1 300 /tmp/x second > /tmp/x/$1.second 2>&1 &
    $2 /extra/xemem_check pingpong $1 300 /tmp/x first; echo "PP $1 first: $?"
    wait $!; echo "PP $1 second: $?"; cat /tmp/x/$1.second
}
pp enclave-linux "atoll run a --" ""
pp linux-enclave "" "atoll run a --"
pp enclave-enclave "atoll run a --" "atoll run b --"
pp linux-linux "" ""
/extra/xemem_check timeouts tl; echo "TIMEOUTS linux: $?"
atoll run a -- /extra/xemem_check timeouts te; echo "TIMEOUTS enclave: $?"
atoll run a -- /extra/xemem_check hold gone /tmp/x > /dev/null 2>&1 &
# The same on the events of a's program's segment, which live in a's LWK:
# from Linux (forwarded by the host), from b (sent to a directly) and from
# another program in a.
/extra/xemem_check timeouts gone /tmp/x; echo "TIMEOUTS linux on a's: $?"
atoll run b -- /extra/xemem_check timeouts gone /tmp/x; echo "TIMEOUTS b on a's: $?"
atoll run a -- /extra/xemem_check timeouts gone /tmp/x; echo "TIMEOUTS a on a's: $?"
/extra/xemem_check waitgone gone /tmp/x & w1=$!
atoll run b -- /extra/xemem_check waitgone gone /tmp/x & w2=$!
while [ $(ls /tmp/x/gone.waiting 2>/dev/null | wc -l) = 0 ]; do sleep 0.2; done; sleep 1
atoll destroy a --force > /dev/null; echo "DESTROY: $?"
wait $w1; echo "WAITGONE linux: $?"
wait $w2; echo "WAITGONE enclave: $?"
atoll destroy b > /dev/null || exit 10
''', extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    for tag in ["enclave-linux", "linux-enclave", "enclave-enclave", "linux-linux"]:
        assert f"PP {tag} first: 0" in out and f"PP {tag} second: 0" in out, out
        assert f"pingpong {tag}: 300 rounds, round trip median" in out, out
        assert f"pingpong {tag}: 300 rounds answered" in out, out
    for tag, where in [("tl", "linux"), ("te", "enclave")]:
        assert (f"timeouts {tag}: no time timed out, 50 ms timed out, two signals taken, "
                "then timed out") in out, out
        assert f"TIMEOUTS {where}: 0" in out, out
    assert out.count("timeouts gone: no time timed out, 50 ms timed out, two signals taken, "
                     "then timed out") == 3, out
    for who in ["linux", "b", "a"]:
        assert f"TIMEOUTS {who} on a's: 0" in out, out
    assert out.count("waitgone gone: EIDRM") == 2, out
    assert "WAITGONE linux: 0" in out and "WAITGONE enclave: 0" in out, out


@pytest.mark.long
def test_one_gib_segments_every_direction(vm, programs):
    # The largest size the issue names, checked byte for byte in every
    # direction (and through an attachment of its second half): Linux's
    # pinned pages attached in an enclave, an enclave program's frames
    # attached on Linux and in another enclave. Two 1280 MiB enclaves need
    # a larger guest with more of it movable.
    res = vm(PAIRS + r'''
atoll create --cpus 1 --mem 1280M --name big > /dev/null || exit 9
atoll create --cpus 1 --mem 1280M --name big2 > /dev/null || exit 9
before=$(atoll status big | grep '^lwk memory')
before2=$(atoll status big2 | grep '^lwk memory')
pair le1g "" "atoll run big --" 1073741824
pair el1g "atoll run big --" "" 1073741824
pair ee1g "atoll run big --" "atoll run big2 --" 1073741824
[ "$before" = "$(atoll status big | grep '^lwk memory')" ] &&
    [ "$before2" = "$(atoll status big2 | grep '^lwk memory')" ] && echo MEMORY_BACK
atoll destroy big > /dev/null || exit 10
atoll destroy big2 > /dev/null || exit 10
''', extra_dir=str(programs), timeout=900, mem_mb=5632, append_extra="movablecore=2816M")
    assert res.status == 0, res.output
    got = statuses(res.output)
    for tag in ["le1g", "el1g", "ee1g"]:
        assert got.get(tag) == (0, 0), res.output
    assert "MEMORY_BACK" in res.output, res.output


def test_kept_segments_outlive_their_owner(vm, programs):
    # Segments whose owner asked to keep them (xemem_keep) stay after the
    # owner unmapped its buffer and ended, in an enclave and on Linux: they
    # are attached from elsewhere with the owner's bytes intact and listed
    # as kept with the owner ended. Only the owner's user or root removes
    # them (from a program or `atoll remove-segment`); then the enclave's
    # memory is back to the byte. Destroying an enclave removes its kept
    # segments too.
    res = vm(r"""
total_before=$(grep MemTotal /proc/meminfo)
atoll create --cpus 1 --mem 256M --name a > /dev/null || exit 9
atoll create --cpus 1 --mem 256M --name b > /dev/null || exit 9
a_before=$(atoll status a | grep '^lwk memory')
atoll run a -- /extra/xemem_check keep kept-e 2101248; echo "KEEP enclave: $?"
/extra/xemem_check keep kept-l 65536; echo "KEEP linux: $?"
atoll run a -- /extra/xemem_check keep kept-x 65536 > /dev/null; echo "KEEP x: $?"
atoll run b -- /extra/xemem_check keep kept-b 65536 > /dev/null; echo "KEEP b: $?"
[ "$a_before" != "$(atoll status a | grep '^lwk memory')" ] && echo A_MEMORY_HELD
atoll list --segments
atoll --json list --segments | python3 -c '
import json, sys
for s in json.load(sys.stdin)["segments"]:
    print("JSON", s["name"], s["kept"], s["owner_ended"])'
nobody() { /usr/bin/setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; }
nobody /extra/xemem_check unremovable kept-e; echo "UNREMOVABLE: $?"
nobody atoll remove-segment kept-x; echo "CLI NOBODY: $?"
nobody /extra/xemem_check keep kept-n 65536 > /dev/null; echo "KEEP nobody: $?"
nobody atoll remove-segment kept-n; echo "NOBODY REMOVES ITS OWN: $?"
mkdir -p /tmp/x
atoll run a -- /extra/xemem_check hold held-live /tmp/x > /dev/null & holder=$!
while [ ! -e /tmp/x/held-live.ready ]; do sleep 0.2; done
atoll remove-segment held-live; echo "CLI LIVE OWNER: $?"
kill $holder; wait $holder
/extra/xemem_check adopt kept-e 2101248; echo "ADOPT linux: $?"
atoll run b -- /extra/xemem_check adopt kept-l 65536; echo "ADOPT enclave: $?"
atoll remove-segment kept-x; echo "CLI REMOVE: $?"
atoll remove-segment kept-x; echo "CLI AGAIN: $?"
for i in $(seq 50); do  # the LWK reports its free memory once it unpinned
    [ "$a_before" = "$(atoll status a | grep '^lwk memory')" ] && echo A_MEMORY_BACK && break
    sleep 0.1
done
atoll destroy b > /dev/null || exit 10
echo "LEFT: $(atoll list --segments)"
atoll destroy a > /dev/null || exit 10
[ "$total_before" = "$(grep MemTotal /proc/meminfo)" ] && echo MEMTOTAL_BACK
/extra/xemem_check keep kept-at-unload 67108864 > /dev/null; echo "KEEP unload: $?"
free_before=$(grep MemFree /proc/meminfo | tr -dc 0-9)
rmmod atoll_test  # it uses atoll.ko
rmmod atoll && echo UNLOADED
free_after=$(grep MemFree /proc/meminfo | tr -dc 0-9)
echo "UNLOAD FREED KB: $((free_after - free_before))"
""", extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    assert re.search(r"\n\d+\s+kept-e\s+enclave 1 pid \d+ \(ended\)\s+2 MiB\s+0644\s+0\s+0\s+0\s+yes\n",
                     out), out
    assert re.search(r"\n\d+\s+kept-l\s+linux pid \d+ \(ended\)\s+64 KiB\s+0644\s+0\s+0\s+0\s+yes\n",
                     out), out
    for line in [
        "KEEP enclave: 0", "KEEP linux: 0", "KEEP x: 0", "KEEP b: 0",
        "keep kept-e 2101248: kept, unmapped, owner ends", "A_MEMORY_HELD",
        "JSON kept-e True True", "JSON kept-b True True",
        # Others may not remove them; a user may remove its own; a live owner's stays.
        "unremovable kept-e: EPERM", "UNREMOVABLE: 0",
        "segment kept-x is not yours: only its owner's user or root may remove it", "CLI NOBODY: 1",
        "KEEP nobody: 0", "NOBODY REMOVES ITS OWN: 0",
        "segment held-live is still held by its owner (pid", "CLI LIVE OWNER: 1",
        # The owner's bytes, from Linux and from an enclave; then removed.
        "adopt kept-e 2101248: its ended owner's bytes checked, removed", "ADOPT linux: 0",
        "adopt kept-l 65536: its ended owner's bytes checked, removed", "ADOPT enclave: 0",
        "CLI REMOVE: 0", "no segment kept-x (`atoll list --segments` lists them)", "CLI AGAIN: 1",
        "A_MEMORY_BACK", "LEFT: no segments", "MEMTOTAL_BACK",
    ]:
        assert line in out, f"{line!r} missing:\n{out}"
    # Unloading the module lets go of Linux's kept segments (and says nothing).
    assert "KEEP unload: 0" in out and "UNLOADED" in out, out
    assert int(re.search(r"UNLOAD FREED KB: (-?\d+)", out)[1]) >= 60 << 10, out
    assert "WARNING" not in out and "BUG" not in out, out


def test_delegated_calls_on_attachments(vm, programs):
    # A program in an enclave passes attached memory to delegated system
    # calls (write(2) from it, read(2) into it), for a Linux segment and
    # another enclave's; exec drops the old image's segment and attachment.
    # A read into an attachment that waits in Linux while the owner (on
    # Linux, in the same enclave, in another) removes the segment gets
    # EFAULT, and the owner's buffer stays as it was: `atoll run` no longer
    # maps those frames.
    res = vm(PAIRS + r"""
atoll create --cpus 1 --mem 256M --name a > /dev/null || exit 9
atoll create --cpus 1 --mem 256M --name b > /dev/null || exit 9
pair io-linux "" "atoll run a --" 2101248 /extra/xemem_check attach-io
pair io-enclave "atoll run b --" "atoll run a --" 65536 /extra/xemem_check attach-io
rr() {  # tag, owner command prefix
    tag=$1
    mkfifo /tmp/x/$tag.fifo
    $2 /extra/xemem_check removewhile $tag 65536 /tmp/x > /tmp/x/$tag.owner 2>&1 & owner=$!
    atoll run a -- /extra/xemem_check readrevoked $tag 65536 /tmp/x > /tmp/x/$tag.reader 2>&1 &
    reader=$!
    while [ ! -e /tmp/x/$tag.reading ]; do sleep 0.1; done
    # The remove comes once `atoll run` waits in the pipe's read.
    for i in $(seq 100); do
        grep -qs pipe_read /proc/$reader/task/*/wchan && echo "IN READ $tag" && break
        sleep 0.1
    done
    touch /tmp/x/$tag.inread
    while [ ! -e /tmp/x/$tag.removed ]; do sleep 0.1; done
    echo "after the remove" > /tmp/x/$tag.fifo
    wait $reader; echo "READER $tag: $?"
    wait $owner; echo "OWNER $tag: $?"
    cat /tmp/x/$tag.reader /tmp/x/$tag.owner
}
rr rr-linux ""
rr rr-same "atoll run a --"
rr rr-other "atoll run b --"
atoll run a -- /extra/xemem_check execs exec-seg; echo "EXEC: $?"
echo "AFTER EXEC: $(atoll list --segments)"
atoll destroy a > /dev/null || exit 10
atoll destroy b > /dev/null || exit 10
""", extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    got = statuses(out)
    for tag, size in [("io-linux", 2101248), ("io-enclave", 65536)]:
        assert got.get(tag) == (0, 0), f"{tag}: {got.get(tag)}\n{out}"
        assert f"attach-io {tag} {size}: written from the attachment, read into it" in out, out
        assert f"make {tag} {size}: the consumer's bytes arrived, removed" in out, out
    assert "gone exec-seg: the old image's segment went with it" in out, out
    assert "EXEC: 0" in out and "AFTER EXEC: no segments" in out, out
    for tag in ["rr-linux", "rr-same", "rr-other"]:
        assert f"IN READ {tag}" in out, out
        assert f"readrevoked {tag}: EFAULT" in out and f"READER {tag}: 0" in out, out
        assert f"removewhile {tag}: our bytes untouched after the remove" in out, out
        assert f"OWNER {tag}: 0" in out, out


def test_forged_event_messages_from_another_lwk_are_refused(vm, programs):
    # A hostile LWK (the test image's xememforge) sends another enclave what
    # only the host may (opening, closing, granting events), signals and
    # waits on segments it was never granted, a wait nobody would hear and
    # answers to requests never made. Nothing of it reaches the victim's
    # segment: no event waits there, its own signal and wait work, Linux's
    # too, and every CPU and byte comes back.
    res = vm(RESOURCES + rf'''
resources
mkdir -p /tmp/x
console_has() {{ i=0; until atoll console $1 | grep -q "$2"; do
    i=$((i + 1)); [ $i -gt 150 ] && {{ atoll console $1 | tail -5; return 1; }}; sleep 0.2; done; }}
atoll create --cpus 1 --mem 128M --name v > /dev/null || exit 9
atoll run v -- /extra/xemem_check hold forged /tmp/x > /dev/null 2>&1 &
while [ ! -e /tmp/x/forged.ready ]; do sleep 0.2; done
vid=$(atoll --json status v | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
atoll create --cpus 1 --mem 128M --name bad {TEST_IMAGE} --cmdline xememforge=$vid || exit 10
console_has bad "xememforge: sent" || exit 11
atoll console bad | grep "xememforge: sent"
sleep 1
echo "REFUSED $(atoll console v | grep -c 'refused\|dropped')"
atoll run v -- /extra/xemem_check quiet forged /tmp/x; echo "QUIET enclave: $?"
/extra/xemem_check quiet forged /tmp/x; echo "QUIET linux: $?"
atoll ping v > /dev/null || exit 12
atoll destroy bad > /dev/null || exit 13
atoll destroy v --force > /dev/null || exit 14
resources
''', extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    m = re.search(r"xememforge: sent (\d+) forged XEMEM messages", out)
    assert m and int(m.group(1)) >= 150, out
    m = re.search(r"^REFUSED (\d+)$", out, re.M)
    assert m and int(m.group(1)) >= 80, out
    assert out.count("quiet forged: no event waiting, own signal taken") == 2, out
    assert "QUIET enclave: 0" in out and "QUIET linux: 0" in out, out
    assert_nothing_lost(out)
