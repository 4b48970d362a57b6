"""The noise benchmark's picture: for each configuration (a column), the
detours of its first round under the I/O load over time, each marked as
its kernel's or not, and below a histogram of detour lengths under each load."""
from plotting import pyplot


def plot(listed, threshold_ns, path):
    """listed[column][load]: per round, the probe's [start ns, length ns, interrupts] list."""
    plt = pyplot("noise_bench")
    if plt is None:
        return
    columns = list(listed)
    # One set of bins for every histogram, so that they compare.
    longest = max([ln for c in columns for runs in listed[c].values() for run in runs for _, ln, _ in run]
                  + [2 * threshold_ns]) / 1e3
    low = threshold_ns / 1e3
    bins = [low * 1.25 ** k for k in range(200) if low * 1.25 ** (k - 1) <= longest]
    fig, axes = plt.subplots(2, len(columns), figsize=(4 * len(columns), 7), sharey="row")
    for i, column in enumerate(columns):
        top, bottom = axes[0][i], axes[1][i]
        first = listed[column]["io"][0]
        for theirs, color, label in [(True, "tab:red", "its kernel's"), (False, "tab:gray", "not its kernel's")]:
            points = [(at / 1e9, ln / 1e3) for at, ln, irqs in first if (irqs > 0) == theirs]
            if points:
                top.scatter(*zip(*points), s=3, color=color, label=label)
        top.set_title(f"{column}\nLinux doing I/O, first round", fontsize=9)
        top.set_yscale("log")
        top.set_xlabel("time (s)")
        top.grid(True, alpha=0.3)
        top.legend(fontsize=7, loc="upper right")
        lengths = {load: [ln / 1e3 for run in runs for _, ln, _ in run] for load, runs in listed[column].items()}
        for load, values in lengths.items():
            bottom.hist(values, bins=bins, histtype="step", label=f"Linux {load}")
        bottom.set_xscale("log")
        bottom.set_yscale("log")
        bottom.set_xlabel("detour length (µs)")
        bottom.grid(True, alpha=0.3)
        bottom.legend(fontsize=7)
    axes[0][0].set_ylabel("detour length (µs)")
    axes[1][0].set_ylabel("detours (all rounds)")
    fig.suptitle("Selfish detour on one vCPU: Linux untuned and tuned, and an enclave's CPU")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
