#!/usr/bin/env bash
# Builds the debug kernel of `make test-kdebug`: Debian's Linux 6.1 source
# (linux-source-6.1) configured as x86_64 defconfig + kvm_guest.config +
# scripts/kdebug.config (KASAN, KFENCE, lockdep, kmemleak, UBSAN, ... and the
# test VM's and atoll.ko's needs built in), into build/kdebug/:
#   src/      the source, unpacked once per tarball
#   obj/      the object tree (O=), what atoll.ko builds against
#   bzImage   the kernel the test VM boots
#   build.log make's output (its tail is shown when a step fails)
# Nothing is rebuilt when neither the tarball nor the fragment changed.
# Prints a line per phase; run it under `nice -n 19` on a shared machine.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

KSRC=linux-source-6.1
TARBALL=/usr/src/$KSRC.tar.xz
FRAGMENT=scripts/kdebug.config
OUT=build/kdebug
SRC=$OUT/src
OBJ=$OUT/obj
LOG=$OUT/build.log
JOBS=$(nproc)
# Minutes between progress lines while make compiles.
PROGRESS_EVERY=${KDEBUG_PROGRESS_MINUTES:-5}

begun=$SECONDS
say() { printf 'kdebug: [%3d min] %s\n' $(((SECONDS - begun) / 60)) "$*"; }
fail() {
    echo "kdebug: $*" >&2
    if [ -s "$LOG" ]; then
        echo "kdebug: the last lines of $LOG:" >&2
        tail -n 40 "$LOG" >&2
    fi
    exit 1
}
kmake() { make -C "$SRC" O="$(pwd)/$OBJ" -j"$JOBS" "$@" >>"$LOG" 2>&1; }

# The tools Linux's build needs beyond a C compiler.
scripts/apt-install.sh "$KSRC" flex bison bc libelf-dev libssl-dev
mkdir -p "$OUT"

# The source, unpacked again only when the installed tarball changes.
tarball_id=$(stat -c '%s %Y' "$TARBALL")
if [ "$(cat "$SRC/.kdebug-tarball" 2>/dev/null)" != "$tarball_id" ]; then
    say "unpacking $TARBALL into $SRC"
    rm -rf "$SRC" "$SRC.tmp" "$OBJ"
    mkdir -p "$SRC.tmp"
    tar -xJf "$TARBALL" -C "$SRC.tmp" --strip-components=1
    echo "$tarball_id" >"$SRC.tmp/.kdebug-tarball"
    mv "$SRC.tmp" "$SRC"
fi

# The configuration, made again only when the fragment or the source changed.
config_id="$tarball_id $(sha256sum <"$FRAGMENT")"
if [ "$(cat "$OUT/config.id" 2>/dev/null)" != "$config_id" ] || [ ! -f "$OBJ/.config" ]; then
    say "configuring: defconfig + kvm_guest.config + $FRAGMENT"
    rm -f "$OUT/config.id" "$OUT/built.id"
    : >"$LOG"
    mkdir -p "$OBJ"
    kmake defconfig || fail "make defconfig failed"
    kmake kvm_guest.config || fail "make kvm_guest.config failed"
    "$SRC/scripts/kconfig/merge_config.sh" -m -O "$OBJ" "$OBJ/.config" "$FRAGMENT" >>"$LOG" 2>&1 ||
        fail "merge_config.sh failed"
    kmake olddefconfig || fail "make olddefconfig failed"
    # Kconfig silently drops an option whose dependencies are not met.
    dropped=()
    while read -r line; do
        if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
            grep -qx "$line" "$OBJ/.config" || dropped+=("$line")
        elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
            ! grep -q "^${BASH_REMATCH[1]}=" "$OBJ/.config" || dropped+=("$line")
        fi
    done <"$FRAGMENT"
    if [ ${#dropped[@]} -gt 0 ]; then
        printf 'kdebug:   %s\n' "${dropped[@]}" >&2
        fail "${#dropped[@]} option(s) of $FRAGMENT are not in $OBJ/.config as asked" \
             "(unmet dependencies?); fix the fragment"
    fi
    echo "$config_id" >"$OUT/config.id"
fi

# The kernel: vmlinux, bzImage, the few modules defconfig has and
# Module.symvers (which an external module builds against).
build_id="$config_id $(sha256sum <"$OBJ/.config")"
if [ "$(cat "$OUT/built.id" 2>/dev/null)" = "$build_id" ] && [ -f "$OUT/bzImage" ]; then
    say "the kernel is up to date ($OUT/bzImage)"
    exit 0
fi
say "building the kernel with $JOBS jobs (make's output: $LOG)"
echo "=== make all $(date)" >>"$LOG"
kmake all &
make_pid=$!
# Progress without the compiler's lines: how many objects exist so far.
while kill -0 "$make_pid" 2>/dev/null; do
    for _ in $(seq $((PROGRESS_EVERY * 60))); do
        kill -0 "$make_pid" 2>/dev/null || break
        sleep 1
    done
    if kill -0 "$make_pid" 2>/dev/null; then
        say "  still building: $(find "$OBJ" -name '*.o' | wc -l) objects so far"
    fi
done
wait "$make_pid" || fail "the kernel build failed"
cp "$OBJ/arch/x86/boot/bzImage" "$OUT/bzImage"
echo "$build_id" >"$OUT/built.id"
say "built $OUT/bzImage"
