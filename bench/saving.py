"""Where a benchmark driver's results go: <stem>.md (the table people
read), <stem>.json (every figure) and <stem>.png (the plot) in out_dir."""
import json
import os


def save_results(out_dir, stem, text, data, plot):
    """Writes the table and the figures; plot(path) draws the picture."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, f"{stem}.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(out_dir, f"{stem}.json"), "w") as f:
        json.dump(data, f, indent=1)
    plot(os.path.join(out_dir, f"{stem}.png"))
