"""System tests of the inter-kernel messaging layer (kmsg): Linux and the
LWK talk only through it, and Linux never trusts what an LWK writes."""
import json
import re

import pytest

from resources import RESOURCES, assert_nothing_lost

TEST_IMAGE = "--kernel /lib/atoll/atoll-kernel-test"


def test_hostile_lwk_is_refused_and_linux_survives(vm):
    # Each "bad" LWK writes garbage into its ring to Linux; a good enclave
    # beside it must keep answering, and every CPU and byte comes back.
    res = vm(RESOURCES + rf'''
resources
atoll create --cpus 1 --mem 128M --name good || exit 9
for seed in 1 2 3; do
    atoll create --cpus 1 --mem 128M --name bad {TEST_IMAGE} --cmdline kmsggarbage=$seed || exit 10
    i=0
    until atoll status bad | grep -q "state: crashed"; do
        i=$((i + 1)); [ $i -gt 100 ] && {{ atoll console bad; dmesg | tail; exit 11; }}
        sleep 0.2
    done
    atoll console bad | grep kmsggarbage
    atoll ping bad && exit 12
    atoll destroy bad || exit 13
    atoll ping good || exit 14
done
atoll destroy good || exit 15
echo "REFUSED $(dmesg | grep -c 'broke the message protocol')"
resources
''', timeout=600)
    assert res.status == 0, res.output
    out = res.output
    assert len(re.findall(r"kmsggarbage: wrote garbage", out)) == 3, out
    assert re.search(r"^REFUSED 3$", out, re.M), out
    assert len(re.findall(r"ping good: [\d.]+ us", out)) == 3, out
    assert_nothing_lost(out)


def check_lines(out, name):
    """(to-LWK, from-LWK) result dicts of each `atoll --json kmsg-check`."""
    return [json.loads(line) for line in out.splitlines()
            if line.startswith("{") and f'"name":"{name}"' in line]


# (small, to_max, from_max, big): small messages each way per sender,
# every size from 16 bytes to to_max to the LWK and to from_max from each
# LWK CPU, then big messages of 60-64 KiB each way. Quick: the same checks
# on fewer messages.
@pytest.mark.parametrize("small,to_max,from_max,big", [
    pytest.param(200000, 16384, 4096, 50, id="quick"),
    pytest.param(1000000, 65536, 8192, 200, id="full", marks=pytest.mark.long),
])
def test_both_ways_every_size_and_all_cpus_at_once(vm, small, to_max, from_max, big):
    # Two LWK CPUs send at once while Linux polls.
    res = vm(RESOURCES + rf'''
resources
atoll create --cpus 2 --mem 256M --name k {TEST_IMAGE} || exit 9
atoll --json kmsg-check k --count {small} --min-size 16 --max-size 48 || exit 10
atoll --json kmsg-check k --direction to-lwk --count {to_max - 15} --min-size 16 --max-size {to_max} || exit 11
atoll --json kmsg-check k --direction from-lwk --count {from_max - 15} --min-size 16 --max-size {from_max} || exit 12
atoll kmsg-check k --count {big} --min-size 60000 --max-size 65536 || exit 12
atoll create --cpus 1 --mem 128M --name prod || exit 13
atoll kmsg-check prod --count 10 && exit 14
atoll ping prod || exit 15
atoll destroy prod || exit 16
atoll destroy k || exit 17
resources
''', timeout=1200)
    assert res.status == 0, res.output
    small_r, every_to, every_from = check_lines(res.output, "k")
    assert small_r["count"] == small, small_r
    for r in (small_r, every_to):
        assert r["to_lwk"]["messages"] == r["count"] and r["to_lwk"]["bad"] == 0, r
    for r in (small_r, every_from):
        assert r["from_lwk"]["senders"] == 2, r
        assert r["from_lwk"]["messages"] == 2 * r["count"] and r["from_lwk"]["bad"] == 0, r
    # Every length from 16 bytes to to_max went from Linux to the LWK, and
    # up to from_max from each LWK CPU, once each.
    assert every_to["to_lwk"]["bytes"] == sum(range(16, to_max + 1)), every_to
    assert every_from["from_lwk"]["bytes"] == 2 * sum(range(16, from_max + 1)), every_from
    assert f"Linux -> LWK: {big} of {big} messages (60000..65536 bytes) intact and in order, 0 bad" \
        in res.output, res.output
    assert f"LWK -> Linux: 2 CPUs x {big}: {2 * big} intact and in order, 0 bad" in res.output, res.output
    # The production LWK has no check code: a clear error, and it keeps working.
    assert "it needs the LWK's test image" in res.output, res.output
    assert "ping prod:" in res.output
    assert_nothing_lost(res.output)


def test_enclaves_message_each_other_directly(vm):
    # Each LWK maps the rings Linux lent the pair and interrupts the other
    # LWK's CPU itself; the sender times the round trip.
    res = vm(RESOURCES + rf'''
resources
atoll create --cpus 1 --mem 128M --name a {TEST_IMAGE} || exit 9
atoll create --cpus 1 --mem 128M --name b {TEST_IMAGE} || exit 10
atoll ping b --from a --count 3 || exit 11
atoll ping a --from b --count 3 || exit 12
atoll ping a --from a && exit 13
atoll ping b --from a --count 200 | tail -1
atoll --json kmsg-bench b --from a --rounds 50 || exit 22
atoll destroy a || exit 14
atoll ping b || exit 15
atoll ping b --from a && exit 16
# A newcomer gets rings to the enclave already there.
atoll create --cpus 1 --mem 128M --name c || exit 17
atoll ping c --from b --count 2 || exit 18
atoll ping b --from c --count 2 || exit 19
atoll destroy b || exit 20
atoll destroy c || exit 21
dmesg | grep -c "did not unmap its rings" | sed 's/^/NOT_UNMAPPED /'
resources
''', timeout=600)
    assert res.status == 0, res.output
    out = res.output
    assert re.search(r"ping b from a: 3 round trips", out), out
    assert re.search(r"ping a from b: 3 round trips", out), out
    assert "an enclave does not ping itself" in out
    assert re.search(r"ping c from b: 2 round trips", out) and re.search(r"ping b from c: 2 round trips", out), out
    assert re.search(r"ping b from a: 200 round trips", out), out
    # The benchmark's every mode works between two LWKs (figures: bench/kmsg_bench.py).
    bench = [json.loads(line) for line in out.splitlines() if line.startswith('{"from":"a"')]
    assert len(bench) == 1 and all(m["error"] == 0 and m["median_ns"] > 0
                                   for m in bench[0]["modes"].values()), out
    assert "NOT_UNMAPPED 0" in out, out
    assert_nothing_lost(out)


def test_receiver_destroyed_mid_stream(vm):
    # Enclave a's CPUs flood b directly; b is destroyed in the middle: a's
    # senders get errors and stop, nothing hangs, a keeps working, and the
    # rings went back to Linux only after a unmapped them.
    res = vm(RESOURCES + rf'''
resources
console_has() {{ i=0; until atoll console $1 | grep -q "$2"; do
    i=$((i + 1)); [ $i -gt 150 ] && {{ atoll console $1 | tail -5; return 1; }}; sleep 0.2; done; }}
atoll create --cpus 1 --mem 128M --name b {TEST_IMAGE} || exit 9
bid=$(atoll --json status b | sed -n 's/.*"id":\([0-9]*\).*/\1/p')
atoll create --cpus 2 --mem 128M --name a {TEST_IMAGE} --cmdline kmsgflood=$bid || exit 10
console_has a "kmsgflood: sending to enclave $bid" || exit 11
console_has b "intact and in order" || exit 12
atoll console b | grep "kmsgflood: from" | tail -1
atoll destroy b || exit 13
console_has a "is gone after" || exit 14
atoll console a | grep "is gone after"
atoll ping a || exit 15
atoll destroy a || exit 16
dmesg | grep -c "did not unmap its rings" | sed 's/^/NOT_UNMAPPED /'
resources
''', timeout=600)
    assert res.status == 0, res.output
    out = res.output
    m = re.search(r"kmsgflood: from Enclave\(\d+\): (\d+) intact and in order, (\d+) bad", out)
    assert m and int(m.group(1)) >= 20000 and m.group(2) == "0", out
    m = re.search(r"kmsgflood: enclave \d+ is gone after (\d+) messages", out)
    assert m and int(m.group(1)) >= 20000, out
    assert "ping a:" in out
    assert "NOT_UNMAPPED 0" in out, out
    assert_nothing_lost(out)


def test_programs_message_each_other(vm, programs):
    # The same program (tests/programs/msgping.c, abi/atoll_msg.h) on Linux
    # and in two enclaves: round trips Linux <-> enclave both ways and
    # enclave <-> enclave, every byte checked by the sender.
    res = vm(RESOURCES + r'''
resources
atoll create --cpus 1 --mem 128M --name a || exit 9
atoll create --cpus 1 --mem 128M --name b || exit 10
id_of() { atoll --json status $1 | sed -n 's/.*"id":\([0-9]*\).*/\1/p'; }
aid=$(id_of a); bid=$(id_of b)
/extra/msgping serve 7 100 > /tmp/linux-serve.txt &
atoll run a -- /extra/msgping send 0 7 100 256 || exit 11
wait $! || exit 12
cat /tmp/linux-serve.txt
atoll run a -- /extra/msgping serve 9 50 &
/extra/msgping send $aid 9 50 1000 || exit 13
wait $! || exit 14
atoll run b -- /extra/msgping serve 11 100 &
atoll run a -- /extra/msgping send $bid 11 100 4096 || exit 15
wait $! || exit 16
/extra/msgping send 99 7 1 16 && exit 17
atoll destroy a || exit 18
atoll destroy b || exit 19
resources
''', extra_dir=str(programs), timeout=600)
    assert res.status == 0, res.output
    out = res.output
    assert re.search(r"100 round trips of 256 bytes to kernel 0 port 7, 0 bad", out), out
    assert re.search(r"50 round trips of 1000 bytes to kernel \d+ port 9, 0 bad", out), out
    assert re.search(r"100 round trips of 4096 bytes to kernel \d+ port 11, 0 bad", out), out
    assert len(re.findall(r"msgping: served \d+ messages", out)) == 3, out
    assert "msgping send: No route to host" in out, out
    assert_nothing_lost(out)


def test_multicast_to_three_lwks(vm):
    # One ring, three LWK receivers: each message is written once and read
    # by all three (the slots are free only after the last); then the same
    # messages as unicasts. Every LWK checks every byte and the order.
    res = vm(RESOURCES + rf'''
resources
for n in a b c; do atoll create --cpus 1 --mem 128M --name $n {TEST_IMAGE} > /dev/null || exit 9; done
atoll --json kmsg-mcast a b c --count 20000 --size 64 || exit 10
atoll --json kmsg-mcast a b c --count 500 --size 4096 || exit 11
atoll kmsg-mcast a b b && exit 12
for n in a b c; do atoll destroy $n > /dev/null || exit 13; done
dmesg | grep -c "did not unmap multicast" | sed 's/^/NOT_UNMAPPED /'
resources
''', timeout=600)
    assert res.status == 0, res.output
    out = res.output
    runs = [json.loads(line) for line in out.splitlines() if line.startswith('{"bad"')]
    assert [r["count"] for r in runs] == [20000, 500], out
    for r in runs:
        assert r["received"] == [2 * r["count"]] * 3 and r["bad"] == [0, 0, 0], r
        assert r["mcast_ns"] > 0 and r["unicast_ns"] > 0, r
    assert "is named twice" in out, out
    assert "NOT_UNMAPPED 0" in out, out
    assert_nothing_lost(out)
