"""System tests of the inter-kernel messaging layer (kmsg): Linux and the
LWK talk only through it, and Linux never trusts what an LWK writes."""
import re

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
