#!/usr/bin/env python3
"""`make report`: writes every benchmark table the README shows, and each
target's verdict, from bench/results/*.json, between the README's
<!-- report:NAME begin/end --> markers; the text around them is hand-written.
`--check` (make report-check) changes nothing: it fails, printing the diff,
when a committed table differs from what the results give."""
import argparse
import difflib
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from tables import BLOCKS  # noqa: E402
from tables.markers import MarkerError, names, splice  # noqa: E402

ROOT = os.path.dirname(HERE)
DOCUMENTS = [os.path.join(ROOT, "README.md")]


def load_results(directory):
    """{stem: data} for every results file."""
    out = {}
    for path in sorted(glob.glob(os.path.join(directory, "*.json"))):
        with open(path) as f:
            out[os.path.basename(path)[:-len(".json")]] = json.load(f)
    return out


def render(results):
    return {name: fn(results) for name, fn in BLOCKS.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="fail with a diff if a committed table differs")
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("documents", nargs="*", default=DOCUMENTS)
    args = ap.parse_args()
    rendered = render(load_results(args.results))
    texts = {}
    for path in args.documents:
        with open(path) as f:
            texts[path] = f.read()
    # Every table has its place, so that none is generated for nowhere.
    unused = sorted(set(rendered) - {n for text in texts.values() for n in names(text)})
    if unused:
        sys.exit(f"report: tables without markers in {', '.join(map(os.path.basename, texts))}: {unused}")
    stale = 0
    for path, old in texts.items():
        try:
            new = splice(old, rendered)
        except MarkerError as e:
            sys.exit(f"report: {os.path.relpath(path, ROOT)}: {e}")
        if new == old:
            continue
        if args.check:
            stale += 1
            name = os.path.relpath(path, ROOT)
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True),
                                                       f"a/{name} (committed)", f"b/{name} (from bench/results)"))
        else:
            with open(path, "w") as f:
                f.write(new)
            print(f"report: wrote {os.path.relpath(path, ROOT)}")
    if stale:
        sys.exit("report: the committed tables differ from bench/results: run `make report` and commit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
