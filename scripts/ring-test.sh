#!/bin/sh
# Builds host/kmsg_ring.c (the module's message ring) in user space with
# AddressSanitizer and runs host/tests/kmsg_ring_test.c against it.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$ROOT/build}
mkdir -p "$out"
gcc -O2 -g -Wall -Werror -fsanitize=address,undefined -fno-sanitize-recover=all -pthread \
    -I "$ROOT/host/tests/shim" -I "$ROOT/host" -I "$ROOT/abi" \
    -o "$out/kmsg_ring_test" "$ROOT/host/tests/kmsg_ring_test.c" "$ROOT/host/kmsg_ring.c"
"$out/kmsg_ring_test"
