"""System tests of enclaves on a running Linux: the Debian kernel in the
test VM with atoll.ko, the atoll CLI and the LWK. Each test is one VM run;
its shell script prints what the asserts below check."""
import os
import re

import pytest

import lwk_images
from conftest import KERNEL
from resources import RESOURCES, assert_nothing_lost

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NEEDED = ["build/atoll.ko", "build/atoll-test", "build/atoll-kernel", "build/atoll-kernel-test"]


@pytest.fixture(scope="module", autouse=True)
def built():
    missing = [p for p in NEEDED if not os.path.exists(os.path.join(ROOT, p))]
    if missing:
        pytest.fail(f"missing {missing}: run `make module cli kernel` first")


def test_create_selftest_ping_destroy(vm):
    res = vm(RESOURCES + r'''
resources
# The production image carries no tests: it says so and stays up.
atoll create --cpus 1 --mem 128M --name prod --cmdline selftest || exit 9
atoll console prod
atoll destroy prod || exit 9
atoll create --cpus 2 --mem 256M --name st --kernel /lib/atoll/atoll-kernel-test --cmdline selftest || exit 10
i=0
until atoll console st | grep -q "passed, [0-9]* failed"; do
    i=$((i + 1)); [ $i -gt 600 ] && { atoll console st; exit 11; }
    sleep 0.5
done
atoll console st
atoll list
atoll status st
atoll ping st --count 5 || exit 12
atoll destroy st || exit 13
atoll list
resources
''', timeout=900)
    assert res.status == 0, res.output
    out = res.output
    assert re.search(r"created enclave st \(id \d+\): CPUs \S+, memory 256 MiB in 2 blocks", out), out
    assert '"selftest" needs the test image' in out, out
    assert "enclave 2 booted on 2 CPUs" in out
    assert "17 passed, 0 failed" in out
    assert re.search(r"^\s*\d+\s+st\s+running\s", out, re.M), out
    assert len(re.findall(r"ping st: [\d.]+ us", out)) >= 5
    assert "destroyed enclave st" in out
    assert "no enclaves" in out
    assert_nothing_lost(res.output)


def test_twenty_cycles_while_linux_works(vm):
    res = vm(RESOURCES + r'''
resources
# A Linux workload with a known answer, on Linux's cores, all along.
( while [ ! -e /tmp/stop ]; do dd if=/dev/zero bs=1M count=8 2>/dev/null | md5sum >> /tmp/sums; done ) &
for i in $(seq 20); do
    atoll create --cpus 2 --mem 128M --name c$i > /tmp/create.out || { cat /tmp/create.out; exit 10; }
    atoll ping c$i > /dev/null || exit 11
    atoll destroy c$i > /dev/null || exit 12
    echo "CYCLE $i $(cut -d' ' -f 1-4 /tmp/create.out)"
done
touch /tmp/stop
wait
echo "SUMS $(sort -u /tmp/sums | tr -s ' ' | tr '\n' ' ')"
echo "RUNS $(wc -l < /tmp/sums)"
resources
''', timeout=1500)
    assert res.status == 0, res.output
    assert len(re.findall(r"^CYCLE \d+ created enclave", res.output, re.M)) == 20
    assert re.search(r"^SUMS 96995b58d4cbf6aaa9041b4f00c7f6ae - $", res.output, re.M), res.output
    assert int(re.search(r"^RUNS (\d+)", res.output, re.M).group(1)) > 0
    assert_nothing_lost(res.output)


def test_two_enclaves_at_once_and_no_unload_meanwhile(vm):
    res = vm(RESOURCES + r'''
resources
atoll create --cpus 1 --mem 128M --name a || exit 10
atoll create --cpus 1 --mem 128M --name b || exit 11
atoll list
atoll status a | grep cpus
atoll status b | grep cpus
atoll ping a || exit 12
atoll ping b || exit 13
rmmod atoll_test || exit 18  # it uses atoll.ko: only the enclaves may keep atoll.ko in
rmmod atoll && exit 14
echo "UNLOAD REFUSED"
atoll destroy a || exit 15
atoll destroy b || exit 16
rmmod atoll || exit 17
echo "UNLOADED"
resources
''', timeout=900)
    assert res.status == 0, res.output
    cpus = re.findall(r"^cpus: (\S+)", res.output, re.M)
    assert len(cpus) == 2 and cpus[0] != cpus[1], res.output
    assert "ping a:" in res.output and "ping b:" in res.output
    assert "UNLOAD REFUSED" in res.output and "UNLOADED" in res.output
    assert_nothing_lost(res.output)


def test_bad_input_loses_nothing(vm, tmp_path):
    lwk_images.write_truncated(KERNEL, tmp_path / "truncated-kernel")
    lwk_images.write_hanging(KERNEL, tmp_path / "hanging-kernel")
    res = vm(RESOURCES + r'''
resources
try() { echo "TRY $1"; shift; "$@"; echo "STATUS $?"; resources; }
try truncated atoll create --cpus 1 --mem 128M --kernel /extra/truncated-kernel
try cpu0 atoll create --cpus 0,1 --mem 128M
try toomuch atoll create --cpus 1 --mem 1920M
try unknown atoll destroy nosuch
try unknownping atoll ping nosuch
try hang atoll create --cpus 2 --mem 256M --kernel /extra/hanging-kernel --timeout 5
echo "TRY killed"
atoll create --cpus 2 --mem 256M --kernel /extra/hanging-kernel --timeout 120 &
sleep 4
kill -9 $!
wait
sleep 1
resources
atoll list
''', extra_dir=str(tmp_path), timeout=900)
    assert res.status == 0, res.output
    out = res.output

    def case(name):
        m = re.search(rf"^TRY {name}\n(.*?)(?=^TRY |\Z)", out, re.M | re.S)
        assert m, out
        return m.group(1)
    assert "is not an Atoll LWK image" in case("truncated")
    assert "CPU 0 cannot go to an enclave" in case("cpu0")
    assert "movablecore" in case("toomuch")
    assert "no enclave named 'nosuch'" in case("unknown")
    assert "no enclave named 'nosuch'" in case("unknownping")
    assert "did not report booted within 5000 ms" in case("hang")
    for name in ["truncated", "cpu0", "toomuch", "unknown", "unknownping", "hang"]:
        assert "STATUS 1" in case(name), case(name)
    assert "no enclaves" in case("killed")
    assert_nothing_lost(res.output)


def test_crash_and_hang_are_contained(vm):
    res = vm(RESOURCES + r'''
resources
atoll create --cpus 1 --mem 128M --name boom --kernel /lib/atoll/atoll-kernel-test --cmdline crashtest || exit 10
i=0
until atoll status boom | grep -q "state: crashed"; do
    i=$((i + 1)); [ $i -gt 100 ] && exit 11
    sleep 0.2
done
atoll console boom
atoll ping boom && exit 12
atoll destroy boom || exit 13
resources
atoll create --cpus 1 --mem 128M --name deaf --kernel /lib/atoll/atoll-kernel-test --cmdline hangtest || exit 14
atoll destroy deaf && exit 15
atoll destroy deaf --force || exit 16
# Linux still works and the enclave machinery too.
atoll create --cpus 2 --mem 128M --name after || exit 17
atoll ping after || exit 18
atoll destroy after || exit 19
resources
''', timeout=900)
    assert res.status == 0, res.output
    out = res.output
    assert "EXCEPTION" in out and "page fault" in out, out
    assert "crashed" in out
    assert "did not stop within" in out
    assert "destroyed enclave deaf" in out
    assert "ping after:" in out
    assert_nothing_lost(res.output)
