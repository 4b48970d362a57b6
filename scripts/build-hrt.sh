#!/bin/sh
# Builds the hybrid-runtime API's library (hrt/, docs/hrt.md): the header at
# OUT/include/atoll/hrt.h, the libraries at OUT/lib/libatoll-hrt.a and
# libatoll-hrt.so.
#   scripts/build-hrt.sh [OUT]     (default: build)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$ROOT/build}
mkdir -p "$out/include/atoll" "$out/lib"
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
# No stack protector: a new thread's first frames run before its guard is
# its own, and the library's code never needs one.
CFLAGS="-O2 -Wall -Wextra -Werror -fPIC -fno-stack-protector -I $ROOT/abi -I $ROOT/hrt/include"
for f in call thread sync irq am; do
    # shellcheck disable=SC2086  # CFLAGS: a list of arguments (sh has no arrays)
    gcc $CFLAGS -c -o "$obj/$f.o" "$ROOT/hrt/$f.c"
done
ar rcs "$obj/libatoll-hrt.a" "$obj"/*.o
gcc -shared -Wl,-soname,libatoll-hrt.so -o "$obj/libatoll-hrt.so" "$obj"/*.o
for f in libatoll-hrt.a libatoll-hrt.so; do
    "$ROOT/scripts/replace-file.sh" "$obj/$f" "$out/lib/$f"
done
"$ROOT/scripts/replace-file.sh" "$ROOT/hrt/include/atoll/hrt.h" "$out/include/atoll/hrt.h"
