#!/bin/sh
# Rewrites the system-call table in README.md with what `atoll syscalls`
# prints (after a change to abi/src/syscalls.rs; a unit test checks it).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cargo run -q --manifest-path "$ROOT/cli/Cargo.toml" -- syscalls > "$ROOT/build/syscalls.txt"
python3 - "$ROOT/README.md" "$ROOT/build/syscalls.txt" <<'PY'
import sys
readme, table = sys.argv[1], open(sys.argv[2]).read()
text = open(readme).read()
head = "The system-call table, as `atoll syscalls` prints it (a unit test checks this copy):\n\n```\n"
start = text.index(head) + len(head)
end = text.index("```", start)
open(readme, "w").write(text[:start] + table + text[end:])
PY
echo "README.md: system-call table updated"
