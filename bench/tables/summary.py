"""Every target in one table, and each issue's verdicts in a few words for
its row in the README's status table."""
from figures import Doc, absent
from targets import MET, MISSED, NOT_MEASURED, TARGETS, judge
from tables.render import table, verdict_word

LINK = "[Benchmark targets](#benchmark-targets)"


def commit_of(data):
    m = Doc(data)["measured"]
    if absent(m["commit"]):
        return "not recorded"
    return f"`{m['commit'][:7]}`" + (" (uncommitted changes)" if m["dirty"] is True else "") + \
        ("" if absent(m["date"]) else f", {m['date'][:10]}")


def all_targets(results):
    rows = []
    for t in TARGETS:
        data = results.get(t.bench)
        v = judge(t, data)
        rows.append([str(t.issue), t.what, t.limit_text(), v.shown, verdict_word(v.state),
                     f"`bench/results/{t.bench}.json`", commit_of(data)])
    return table(["issue", "target", "limit", "measured", "verdict", "results", "commit measured"], rows)


def status(issue):
    """"N of M targets met; missed: ...; not measured: ..." for one issue."""
    def render(results):
        verdicts = [judge(t, results.get(t.bench)) for t in TARGETS if t.issue == issue]
        met = sum(v.state == MET for v in verdicts)
        parts = [f"{met} of {len(verdicts)} benchmark targets met"]
        missed = [f"{v.target.short} {v.figure} (target {v.target.limit_text()})" for v in verdicts
                  if v.state == MISSED]
        unmeasured = [v.target.short for v in verdicts if v.state == NOT_MEASURED]
        if missed:
            parts.append("**missed**: " + "; ".join(missed))
        if unmeasured:
            parts.append("not measured: " + "; ".join(unmeasured))
        return "; ".join(parts) + f" (see {LINK})"
    return render


BLOCKS = {"targets": all_targets,
          **{f"status-{issue}": status(issue) for issue in sorted({t.issue for t in TARGETS})}}
