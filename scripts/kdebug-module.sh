#!/usr/bin/env bash
# Builds atoll.ko and the test module atoll_test.ko (host/atoll_test/, which
# the test VM loads beside it) against the debug kernel of `make test-kdebug`
# (scripts/kdebug-build.sh) into build/kdebug/, with debug info so that a
# report's addresses resolve to host/ lines
# (scripts/faddr2line build/kdebug/atoll.ko func+0x12/0x80).
# Linux 6.1 builds an external module's objects next to its sources, so the
# sources are linked into build/kdebug/module/host (../abi beside it, as
# host/Kbuild includes it): host/ and build/atoll.ko stay the Debian kernel's.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

OUT=build/kdebug
OBJ=$OUT/obj
MOD=$OUT/module
if [ ! -f "$OBJ/Module.symvers" ]; then
    echo "kdebug: $OBJ has no built kernel; run scripts/kdebug-build.sh first" >&2
    exit 1
fi

mkdir -p "$MOD/host/atoll_test"
ln -sfn "$(pwd)/abi" "$MOD/abi"
# Links for the sources there are now (a file removed from host/ goes too).
find "$MOD/host" -maxdepth 2 -type l -delete
for f in host/Kbuild host/*.c host/*.h host/atoll_test/Kbuild host/atoll_test/*.c \
    host/atoll_test/*.h; do
    [[ $f == *.mod.c ]] || ln -s "$(pwd)/$f" "$MOD/$(dirname "$f")/"
done

echo "kdebug: building atoll.ko and atoll_test.ko against $OBJ (log: $OUT/module.log)"
if ! make -C "$OBJ" M="$(pwd)/$MOD/host" ATOLL_TEST=m KCFLAGS=-g modules >"$OUT/module.log" 2>&1; then
    tail -n 40 "$OUT/module.log" >&2
    echo "kdebug: building atoll.ko failed" >&2
    exit 1
fi
# Compiler warnings show: the instrumented build may find what Debian's did not.
grep -E "warning:|error:" "$OUT/module.log" >&2 || true
cp "$MOD/host/atoll.ko" "$OUT/atoll.ko"
cp "$MOD/host/atoll_test/atoll_test.ko" "$OUT/atoll_test.ko"
echo "kdebug: built $OUT/atoll.ko and $OUT/atoll_test.ko"
