"""Where a benchmark driver's results go: <stem>.md (the table people
read), <stem>.json (every figure, and the commit it measured) and the
plot in out_dir. make report (bench/report.py) reads the JSON."""
import datetime
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _git(*args):
    """git's answer in this tree, or None where there is no git or no repository."""
    try:
        return subprocess.run(["git", "-C", ROOT, *args], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def measured():
    """The commit the tree is at, whether tracked files differ from it
    (results files aside: runs rewrite them), and the date, so that every
    results file says what it measured."""
    status = _git("status", "--porcelain", "--untracked-files=no", "--", ".", ":(exclude)bench/results")
    return {"commit": _git("rev-parse", "HEAD"), "dirty": None if status is None else status != "",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}


def save_results(out_dir, stem, text, data, plot=None, plot_name=None):
    """Writes the table, the figures with measured() and the plot; returns
    the table. text is the table, or a function of the data written (the
    report's renderers, which show the commit); plot(path) draws the
    picture, into <stem>.png unless plot_name says otherwise."""
    os.makedirs(out_dir, exist_ok=True)
    data = {**data, "measured": measured()}
    if callable(text):
        text = text(data)
    with open(os.path.join(out_dir, f"{stem}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out_dir, f"{stem}.json"), "w") as f:
        json.dump(data, f, indent=1)
    if plot:
        plot(os.path.join(out_dir, plot_name or f"{stem}.png"))
    return text
