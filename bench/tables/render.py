"""What every generated README block is made of: markdown tables, the
benchmark's verdicts, and the line saying which commit the figures measured."""
from figures import ABSENT, Doc, absent, fmt
from targets import MET, MISSED, TARGETS, judge


def table(header, rows):
    """A markdown table; cells are strings already."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def measured(data):
    """Which commit the results file measured, and when, as it recorded them."""
    m = Doc(data)["measured"]
    commit, date = m["commit"], m["date"]
    if absent(commit):
        return "Measured on: commit not recorded."
    dirty = " with uncommitted changes" if m["dirty"] is True else ""
    when = "" if absent(date) else f", {date[:10]}"  # the day; the JSON has the time
    return f"Measured on `{commit[:7]}`{dirty}{when}."


def verdict_word(state):
    return f"**{state}**" if state in (MET, MISSED) else state


def verdicts(bench, data):
    """The benchmark's targets, each judged from its results."""
    rows = []
    for t in TARGETS:
        if t.bench == bench:
            v = judge(t, data)
            rows.append([f"{t.what} (issue {t.issue})", t.limit_text(), v.shown, verdict_word(v.state)])
    return table(["target", "limit", "measured", "verdict"], rows)


def block(data, *parts):
    """A generated block: its tables and lines, then the commit measured."""
    return "\n\n".join([*parts, measured(data)])


def joined(values, spec, sep=", "):
    """Figures written in `spec` one after the other, or "not measured"."""
    values = list(values)
    return fmt(ABSENT) if absent(values) else sep.join(spec.format(v) for v in values)
