"""The regression guard's verdict (bench/smoke_bench.py), without a VM: a
ratio more than 3x worse than the recorded one fails, one just within passes,
and a ratio with nothing recorded fails rather than passing unchecked."""
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
