#!/usr/bin/env bash
# Builds atoll.ko against the debug kernel of `make test-kdebug`
# (scripts/kdebug-build.sh) into build/kdebug/atoll.ko, with debug info so
# that a report's atoll.ko addresses resolve to host/*.c lines
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

mkdir -p "$MOD/host"
ln -sfn "$(pwd)/abi" "$MOD/abi"
# Links for the sources there are now (a file removed from host/ goes too).
find "$MOD/host" -maxdepth 1 -type l -delete
for f in host/Kbuild host/*.c host/*.h; do
    [[ $f == *.mod.c ]] || ln -s "$(pwd)/$f" "$MOD/host/"
done

echo "kdebug: building atoll.ko against $OBJ (log: $OUT/module.log)"
if ! make -C "$OBJ" M="$(pwd)/$MOD/host" KCFLAGS=-g modules >"$OUT/module.log" 2>&1; then
    tail -n 40 "$OUT/module.log" >&2
    echo "kdebug: building atoll.ko failed" >&2
    exit 1
fi
# Compiler warnings show: the instrumented build may find what Debian's did not.
grep -E "warning:|error:" "$OUT/module.log" >&2 || true
cp "$MOD/host/atoll.ko" "$OUT/atoll.ko"
echo "kdebug: built $OUT/atoll.ko"
