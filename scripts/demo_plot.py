#!/usr/bin/env python3
"""make demo's plot of the in-situ workflow: the analytics' temperature
histograms of each snapshot it read from the simulation's XEMEM segment
(the "INSITU snapshot K: sum=S hist=..." lines of scripts/demo.sh), as a
heat map over time, and the total heat per snapshot.
  scripts/demo_plot.py DEMO_LOG OUT_PNG"""
import re
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench"))
from plotting import pyplot  # noqa: E402


def main():
    log, png = sys.argv[1], sys.argv[2]
    snaps = []
    for line in open(log, errors="replace"):
        m = re.match(r"INSITU snapshot (\d+): sum=(\S+) hist=([\d,]+)", line)
        if m:
            snaps.append((int(m[1]), float(m[2]), [int(x) for x in m[3].split(",")]))
    if not snaps:
        sys.exit("demo_plot: no snapshots in the log")
    plt = pyplot("demo_plot")
    if plt is None:
        return 0
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    hist = [[max(c, 0.5) for c in s[2]] for s in snaps]
    img = a.imshow(list(zip(*hist)), aspect="auto", origin="lower", cmap="inferno", norm="log",
                   extent=[0, len(snaps), 0, 100])
    a.set_xlabel("snapshot (every 100 steps)")
    a.set_ylabel("temperature")
    a.set_title("cells per temperature, read in place on Linux")
    fig.colorbar(img, ax=a, label="cells")
    b.plot([s[0] for s in snaps], [s[1] for s in snaps], marker=".")
    b.set_xlabel("snapshot")
    b.set_ylabel("total heat in the grid")
    b.set_title("the simulation (in an enclave) as the analytics saw it")
    fig.suptitle("in-situ workflow over XEMEM: simulation in an enclave, analytics on Linux")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"demo: {len(snaps)} snapshots read in place on Linux; plot in {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
