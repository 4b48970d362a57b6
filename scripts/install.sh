#!/bin/bash
# make install: puts Atoll where a distribution expects it, under DESTDIR
# (empty: this system):
#   PREFIX/bin/atoll                       the CLI (static)
#   PREFIX/lib/atoll/atoll-kernel          the LWK image: `atoll create` finds it
#                                          beside the CLI, without --kernel
#   PREFIX/include/atoll_abi.h, atoll_abi_gen.h (which it includes), atoll_msg.h,
#   xpmem.h; PREFIX/lib/libxpmem.{a,so}    for programs that message or share memory
#   PREFIX/include/atoll/hrt.h,
#   PREFIX/lib/libatoll-hrt.{a,so}         the hybrid-runtime API (docs/hrt.md)
#   PREFIX/lib/atoll/spank_atoll.so        the Slurm plugin (with Slurm's headers)
#   /lib/modules/KVER/updates/atoll.ko     the module, built here for kernel KVER
#   /lib/udev/rules.d/99-atoll.rules       /dev/atoll's mode
#   /usr/src/atoll-VERSION/                the module's source with dkms.conf, for
#                                          DKMS to rebuild it for every new kernel
# Run for this system (no DESTDIR), it also runs depmod; `dkms install
# atoll/VERSION` is the administrator's choice (DKMS then builds the module
# for every new kernel).
#   scripts/install.sh DESTDIR PREFIX KVER
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
destdir=$1 prefix=$2 kver=$3
version=$(sed -n 's/^version = "\(.*\)"/\1/p' "$ROOT/cli/Cargo.toml")
kdir=/lib/modules/$kver/build
if [ ! -d "$kdir" ]; then
    echo "install: no build tree for kernel $kver at $kdir" >&2
    echo "install: apt-get install linux-headers-$kver, or name another kernel: make install KVER=<version>" >&2
    exit 1
fi
for f in atoll atoll-kernel; do
    [ -f "$ROOT/build/$f" ] || { echo "install: build/$f is missing: make kernel cli first" >&2; exit 1; }
done

# The module's source as DKMS gets it, built here in its own tree so that
# the development build in host/ (for the test VM's kernel) stays as it is.
src=$ROOT/build/install/atoll-$version
rm -rf "$src"
mkdir -p "$src/host" "$src/abi"
cp "$ROOT"/host/Kbuild "$ROOT"/host/Makefile "$ROOT"/host/*.h "$src/host/"
for f in "$ROOT"/host/*.c; do
    case $f in *.mod.c) ;; *) cp "$f" "$src/host/" ;; esac  # not Kbuild's generated ones
done
cp "$ROOT"/abi/*.h "$src/abi/"
sed "s/@VERSION@/$version/" "$ROOT/host/dkms.conf" > "$src/dkms.conf"
mkdir -p "$ROOT/build/install/module"
cp -r "$src/host" "$src/abi" "$ROOT/build/install/module/"
make -s -C "$kdir" M="$ROOT/build/install/module/host" modules

put() { install -D -m "$1" "$2" "$destdir$3"; }
put 755 "$ROOT/build/atoll" "$prefix/bin/atoll"
put 644 "$ROOT/build/atoll-kernel" "$prefix/lib/atoll/atoll-kernel"
put 644 "$ROOT/abi/atoll_abi.h" "$prefix/include/atoll_abi.h"
put 644 "$ROOT/abi/atoll_abi_gen.h" "$prefix/include/atoll_abi_gen.h"
put 644 "$ROOT/abi/atoll_msg.h" "$prefix/include/atoll_msg.h"
if [ -f "$ROOT/build/include/xpmem.h" ]; then
    put 644 "$ROOT/build/include/xpmem.h" "$prefix/include/xpmem.h"
    put 644 "$ROOT/build/lib/libxpmem.a" "$prefix/lib/libxpmem.a"
    put 755 "$ROOT/build/lib/libxpmem.so" "$prefix/lib/libxpmem.so"
fi
if [ -f "$ROOT/build/include/atoll/hrt.h" ]; then
    put 644 "$ROOT/build/include/atoll/hrt.h" "$prefix/include/atoll/hrt.h"
    put 644 "$ROOT/build/lib/libatoll-hrt.a" "$prefix/lib/libatoll-hrt.a"
    put 755 "$ROOT/build/lib/libatoll-hrt.so" "$prefix/lib/libatoll-hrt.so"
fi
if [ -f /usr/include/slurm/spank.h ]; then
    make -s -C "$ROOT" slurm SLURM_OUT="$ROOT/build"
    put 755 "$ROOT/build/spank_atoll.so" "$prefix/lib/atoll/spank_atoll.so"
fi
put 644 "$ROOT/build/install/module/host/atoll.ko" "/lib/modules/$kver/updates/atoll.ko"
put 644 "$ROOT/host/99-atoll.rules" "/lib/udev/rules.d/99-atoll.rules"
mkdir -p "$destdir/usr/src"
rm -rf "$destdir/usr/src/atoll-$version"
cp -r "$src" "$destdir/usr/src/atoll-$version"

if [ -z "$destdir" ]; then
    depmod -a "$kver"
    udevadm control --reload 2>/dev/null || true
fi
echo "installed Atoll $version for kernel $kver under ${destdir:-/}: $prefix/bin/atoll," \
    "$prefix/lib/atoll/atoll-kernel, /lib/modules/$kver/updates/atoll.ko (modprobe atoll)," \
    "/usr/src/atoll-$version (dkms install atoll/$version)"
