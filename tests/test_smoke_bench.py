"""The regression guard's verdict (bench/smoke_bench.py), without a VM: a
ratio more than 3x worse than the recorded one fails, one just within passes,
and a ratio with nothing recorded fails rather than passing unchecked; the
one-slot message's path, an exact instruction count, fails at 1.5x."""
import copy
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))

import smoke_bench  # noqa: E402


def recorded():
    with open(os.path.join(ROOT, "bench", "results", "smoke-bench.json")) as f:
        return json.load(f)


def test_the_recorded_results_name_every_ratio():
    rec = recorded()
    assert {name for name, _ in smoke_bench.rows()} <= set(rec["ratios"])
    assert rec["measured"]["commit"], "the results say which commit they measured"


def test_a_ratio_over_three_times_worse_fails():
    rec = recorded()
    now = copy.deepcopy(rec["ratios"])
    _, bad = smoke_bench.check(now, rec)
    assert bad == []
    now["devnull"]["ratio"] *= 2.9
    _, bad = smoke_bench.check(now, rec)
    assert bad == []
    now["devnull"]["ratio"] = rec["ratios"]["devnull"]["ratio"] * 3.1
    _, bad = smoke_bench.check(now, rec)
    assert len(bad) == 1 and "delegated" in bad[0] and "more than 3 times worse" in bad[0]


def test_a_ratio_with_nothing_recorded_fails():
    rec = recorded()
    now = copy.deepcopy(rec["ratios"])
    del rec["ratios"]["message"]
    _, bad = smoke_bench.check(now, rec)
    assert len(bad) == 1 and "no recorded ratio" in bad[0]


def test_the_message_path_is_read_from_both_sides_and_guarded():
    console = ("[   50.1] atoll: kmsg-path: linux send=1600 receive=2400 ticks (the TSC's own read, 16, taken off)\n"
               "kmsg-path: lwk send=1280 receive=960 ticks (the TSC's own read, 16, taken off)\n")
    path = smoke_bench.path_counts(console, 4)
    assert path["linux"] == (100, 150) and path["lwk"] == (80, 60)
    assert path["linux_to_lwk"] == 160 and path["lwk_to_linux"] == 230
    assert smoke_bench.path_counts(console.splitlines()[0], 4) is None  # one side missing

    rec = recorded()
    now = copy.deepcopy(rec["ratios"])
    rec["path"] = {"linux_to_lwk": 160, "lwk_to_linux": 230}
    _, bad = smoke_bench.check(now, rec, path)
    assert bad == []
    longer = dict(path, lwk_to_linux=346)  # just over 1.5x
    _, bad = smoke_bench.check(now, rec, longer)
    assert len(bad) == 1 and "lwk_to_linux" in bad[0]
    del rec["path"]
    _, bad = smoke_bench.check(now, rec, path)
    assert len(bad) == 2 and all("nothing recorded" in b for b in bad)
