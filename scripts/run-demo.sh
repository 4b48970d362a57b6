#!/bin/bash
# make demo's VM run: scripts/demo.sh in the test VM with OUT/programs at
# /extra, its output shown (without the raw per-snapshot lines) and kept in
# OUT/demo.log; then the in-situ part's plot, OUT/demo-insitu.png.
#   scripts/run-demo.sh OUT
set -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/run-demo.sh OUT}
python3 "$ROOT/scripts/vm.py" --script "$ROOT/scripts/demo.sh" --extra "$out/programs" 2>&1 \
    | tee "$out/demo.log" | grep --line-buffered -v '^INSITU '
status=$?
[ $status -eq 0 ] || exit $status
python3 "$ROOT/scripts/demo_plot.py" "$out/demo.log" "$out/demo-insitu.png"
