#!/bin/sh
# Builds XEMEM's library for programs (xemem/): the header at
# OUT/include/xpmem.h, the libraries at OUT/lib/libxpmem.a and libxpmem.so.
#   scripts/build-xemem.sh [OUT]     (default: build)
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$ROOT/build}
mkdir -p "$out/include" "$out/lib"
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
CFLAGS="-O2 -Wall -Werror -fPIC -I $ROOT/abi -I $ROOT/xemem"
# shellcheck disable=SC2086  # CFLAGS: a list of arguments (sh has no arrays)
gcc $CFLAGS -c -o "$obj/libxpmem.o" "$ROOT/xemem/libxpmem.c"
ar rcs "$obj/libxpmem.a" "$obj/libxpmem.o"
gcc -shared -Wl,-soname,libxpmem.so -o "$obj/libxpmem.so" "$obj/libxpmem.o"
for f in libxpmem.a libxpmem.so; do
    "$ROOT/scripts/replace-file.sh" "$obj/$f" "$out/lib/$f"
done
"$ROOT/scripts/replace-file.sh" "$ROOT/xemem/xpmem.h" "$out/include/xpmem.h"
