#!/usr/bin/env python3
"""Two LWK test images' message round trips, A/B in one pinned test VM:
the images take turns, each booting a fresh pair of enclaves per turn, so
the host's drifts (which move every figure under TCG) hit both alike. For
deciding whether a change to the message path helps; the figures to quote
come from bench/kmsg_bench.py.

  python3 bench/kmsg_ab.py OLD_IMAGE NEW_IMAGE [--turns 8] [--from-linux]

Prints per image the medians of the one-slot polling round trip and of the
bounced line, their ratio, and each turn's pair."""
import argparse
import json
import os
import statistics
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "scripts"))
sys.path.insert(0, HERE)
import vm  # noqa: E402
from kmsg_bench import run_pinned  # noqa: E402

GUEST = r'''
for turn in $(seq $TURNS); do
    echo "progress: turn $turn of $TURNS" >&2
    for image in a b; do
        atoll create --cpus 3-3 --mem 128M --name x --kernel /lib/atoll/$image > /dev/null || exit 2
        atoll create --cpus 2-2 --mem 128M --name y --kernel /lib/atoll/$image > /dev/null || exit 3
        if [ "$FROM_LINUX" = 1 ]; then
            taskset -c 0 atoll --json kmsg-bench x --rounds 4000 | sed "s/^/$image /" || exit 4
        else
            atoll --json kmsg-bench y --from x --rounds 4000 | sed "s/^/$image /" || exit 4
        fi
        atoll destroy x > /dev/null && atoll destroy y > /dev/null || exit 5
    done
done
echo "=== done"
'''


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--turns", type=int, default=8)
    p.add_argument("--from-linux", action="store_true", help="Linux CPU 0 <-> LWK instead of LWK <-> LWK")
    args = p.parse_args()
    files = vm.default_files()
    files.update({"/lib/atoll/a": args.old, "/lib/atoll/b": args.new})
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "run.sh")
        with open(script, "w") as f:
            f.write(f"TURNS={args.turns}\nFROM_LINUX={int(args.from_linux)}\n{GUEST}")
        res = run_pinned(script, "atoll-kmsg-ab", files=files)
    if res.status != 0 or "=== done" not in res.output:
        sys.exit(f"kmsg_ab: the VM run failed (status {res.status}):\n{res.output[-3000:]}")
    turns = {"a": [], "b": []}
    for line in res.output.splitlines():
        image, _, rest = line.partition(" ")
        if image in turns and rest.startswith("{"):
            modes = json.loads(rest)["modes"]
            turns[image].append((modes["slot_poll"]["median_ns"], modes["line"]["median_ns"]))
    for image, path in (("a", args.old), ("b", args.new)):
        slot, line = [t[0] for t in turns[image]], [t[1] for t in turns[image]]
        print(f"{path}: one-slot {statistics.median(slot)} ns, line {statistics.median(line)} ns, "
              f"ratio {statistics.median(slot) / statistics.median(line):.2f}x")
        print("  turns (one-slot / line ns): " + ", ".join(f"{s}/{l}" for s, l in turns[image]))


if __name__ == "__main__":
    main()
