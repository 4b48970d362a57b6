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
cp "$ROOT/hrt/include/atoll/hrt.h" "$obj/hrt.h"
# Each file replaced in one rename: builds running at once (the test
# workers' programs) never link against a half-written one.
mv -f "$obj/libatoll-hrt.a" "$out/lib/libatoll-hrt.a.new.$$"
mv -f "$out/lib/libatoll-hrt.a.new.$$" "$out/lib/libatoll-hrt.a"
mv -f "$obj/libatoll-hrt.so" "$out/lib/libatoll-hrt.so.new.$$"
mv -f "$out/lib/libatoll-hrt.so.new.$$" "$out/lib/libatoll-hrt.so"
mv -f "$obj/hrt.h" "$out/include/atoll/hrt.h.new.$$"
mv -f "$out/include/atoll/hrt.h.new.$$" "$out/include/atoll/hrt.h"
