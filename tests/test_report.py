"""make report's generator, without a VM: the README's tables and verdicts
follow the results files, a target at its limit is met, and a figure a
results file lacks is "not measured"."""
import copy
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
sys.path.insert(0, BENCH)

import report  # noqa: E402
import targets  # noqa: E402
from tables.markers import MarkerError, splice  # noqa: E402


@pytest.fixture
def results():
    return report.load_results(os.path.join(BENCH, "results"))


def verdict(results, bench, short):
    (t,) = [t for t in targets.TARGETS if t.bench == bench and t.short == short]
    return targets.judge(t, results.get(bench))


def row(text, first):
    """The table row of `text` whose first cell is `first`."""
    (line,) = [line for line in text.splitlines() if line.startswith(f"| {first} |")]
    return line


def test_a_changed_figure_changes_the_table_and_the_verdict(results):
    # From whatever the committed results say: twice Linux's own offline
    # (missed), then half of it (met).
    offline = results["resize-bench"]["results"]["table5_ms"]["linux_block"]["offline"]
    missed, met = copy.deepcopy(results), copy.deepcopy(results)
    missed["resize-bench"]["results"]["table5_ms"]["add_block"]["total"] = round(offline * 2, 1)
    met["resize-bench"]["results"]["table5_ms"]["add_block"]["total"] = round(offline / 2, 1)
    before, after = report.render(missed), report.render(met)
    assert verdict(missed, "resize-bench", "add a block").state == targets.MISSED
    assert row(after["resize"], "add a 128 MiB block") != row(before["resize"], "add a 128 MiB block")
    assert f"{round(offline / 2, 1):.1f} ms" in row(after["resize"], "add a 128 MiB block")
    assert verdict(met, "resize-bench", "add a block").state == targets.MET
    assert after["targets"] != before["targets"] and after["status-15"] != before["status-15"]


@pytest.mark.parametrize("bench, short, path, value", [
    # total / Linux's own offline, exactly 1.2 (the limit, <=)
    ("resize-bench", "add a CPU", ["results", "table5_ms", "add_cpu", "total"], 12.0),
    # Linux / enclave getpid, exactly 3 (the limit, >=)
    ("program-bench", "getpid 3x", ["results", "linux", "idle", "getpid_ns"], 3.0),
])
def test_a_figure_exactly_at_its_limit_is_met(results, bench, short, path, value):
    changed = copy.deepcopy(results)
    data = changed[bench]
    if bench == "resize-bench":
        data["results"]["table5_ms"]["linux_cpu"]["offline"] = 10.0
    else:
        data["results"]["enclave"]["idle"]["getpid_ns"] = 1.0
    node = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    assert verdict(changed, bench, short).state == targets.MET


def test_a_missing_figure_is_not_measured(results):
    changed = copy.deepcopy(results)
    del changed["resize-bench"]["results"]["table5_ms"]["add_block"]
    out = report.render(changed)
    assert row(out["resize"], "add a 128 MiB block").count("not measured") >= 4
    v = verdict(changed, "resize-bench", "add a block")
    assert v.state == targets.NOT_MEASURED
    (line,) = [line for line in out["targets"].splitlines() if "add a 128 MiB block within" in line]
    assert "| not measured |" in line


def test_a_missing_results_file_renders_every_table_as_not_measured(results):
    changed = dict(results)
    del changed["kmsg-bench"]
    out = report.render(changed)
    assert "not measured" in out["kmsg"] and "commit not recorded" in out["kmsg"]
    assert verdict(changed, "kmsg-bench", "polling LWK <-> LWK").state == targets.NOT_MEASURED


def test_the_commit_measured_is_shown_when_recorded(results):
    changed = copy.deepcopy(results)
    changed["lwk-bench"]["measured"] = {"commit": "0123456789abcdef", "dirty": True,
                                        "date": "2026-11-28T10:00:00+00:00"}
    out = report.render(changed)
    assert "Measured on `0123456` with uncommitted changes, 2026-11-28." in out["lwk"]
    assert "`0123456` (uncommitted changes), 2026-11-28" in out["targets"]
    unrecorded = copy.deepcopy(results)
    del unrecorded["lwk-bench"]["measured"]
    assert "commit not recorded" in report.render(unrecorded)["lwk"]


def test_markers_take_blocks_and_words_within_a_line():
    text = ("a\n<!-- report:x begin -->\nold\n<!-- report:x end -->\n"
            "| row | <!-- report:y begin -->old<!-- report:y end --> |\n")
    out = splice(text, {"x": "| t |", "y": "3 of 4"})
    assert "<!-- report:x begin -->\n\n| t |\n\n<!-- report:x end -->" in out
    assert "| row | <!-- report:y begin -->3 of 4<!-- report:y end --> |" in out
    with pytest.raises(MarkerError):
        splice(text, {"x": "t"})  # y has no table
    with pytest.raises(MarkerError):
        splice(text, {"x": "t", "y": "two\nlines"})


def check(tmp_path, results_dir):
    readme = tmp_path / "README.md"
    shutil.copy(os.path.join(ROOT, "README.md"), readme)
    return subprocess.run([sys.executable, os.path.join(BENCH, "report.py"), "--check", "--results",
                           str(results_dir), str(readme)], capture_output=True, text=True)


def test_report_check_passes_on_the_committed_readme(tmp_path):
    res = check(tmp_path, os.path.join(BENCH, "results"))
    assert res.returncode == 0, res.stdout + res.stderr


def test_report_check_fails_with_a_diff_when_a_results_file_changed(tmp_path):
    results_dir = tmp_path / "results"
    shutil.copytree(os.path.join(BENCH, "results"), results_dir)
    path = results_dir / "mpi-bench.json"
    data = json.loads(path.read_text())
    linux = data["results"]["linux"]["start"]["median"]
    data["results"]["enclave"]["start"]["median"] = 2 * linux
    path.write_text(json.dumps(data))
    res = check(tmp_path, results_dir)
    assert res.returncode != 0
    assert f"| seconds | {linux:.2f} | {2 * linux:.2f} | 2.00x |" in res.stdout
