#!/bin/bash
# make demo's VM run: scripts/demo.sh in the test VM with OUT/programs at
# /extra. The terminal shows the demo's own output; the whole console,
# kernel messages and the raw per-snapshot lines included, is kept in
# OUT/demo.log. Then the plots: OUT/demo-noise.svg (`atoll noise --plot` in
# the VM) and OUT/demo-insitu.png (the in-situ part).
#   scripts/run-demo.sh OUT
set -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: scripts/run-demo.sh OUT}
kernel_line='^\[ *[0-9]+\.[0-9]+\] '
/usr/bin/python3 "$ROOT/scripts/vm.py" --no-debug-checks --script "$ROOT/scripts/demo.sh" --extra "$out/programs" 2>&1 \
    | tee "$out/demo.log" | grep --line-buffered -v -E "^(INSITU |NOISESVG )|$kernel_line"
status=$?
echo
echo "$(grep -c -E "$kernel_line" "$out/demo.log") kernel messages (Linux offlining memory blocks for the" \
    "enclaves, some of which refuse) are in $out/demo.log"
[ $status -eq 0 ] || exit $status
sed -n 's/^NOISESVG //p' "$out/demo.log" | base64 -d > "$out/demo-noise.svg" &&
    echo "noise plot: $out/demo-noise.svg"
/usr/bin/python3 "$ROOT/scripts/demo_plot.py" "$out/demo.log" "$out/demo-insitu.png"
