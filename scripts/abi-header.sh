#!/bin/sh
# The C side of the ABI, abi/atoll_abi_gen.h, generated from its one source,
# the atoll-abi crate (abi/src), by Debian's cbindgen with abi/cbindgen.toml,
# then:
#   - C's fixed-width types as the kernel's UAPI headers spell them (__u32,
#     __s64, ...), which atoll_abi.h's users in the kernel and in user space
#     both have (cbindgen writes <stdint.h>'s);
#   - each ioctl number, which Rust computes with a const fn cbindgen cannot
#     read, as _IOWR(ATOLL_IOC_MAGIC, nr, struct ...) from its line in
#     abi/src/lib.rs (`pub const IOC_X: u32 = iowr::<Type>(nr);`).
# It fails rather than leave anything out: on any warning of cbindgen's (an
# item it could not translate), on a #[repr(C)] struct that did not come
# out whole under its C name, on an IOC_ line not in the form above.
#   scripts/abi-header.sh           writes abi/atoll_abi_gen.h
#   scripts/abi-header.sh --check   fails, showing the diff, if it is stale
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ABI=$ROOT/abi
out=$ABI/atoll_abi_gen.h
fail() { echo "abi-header: $*" >&2; exit 1; }

command -v cbindgen >/dev/null || fail "cbindgen is missing: make deps (Debian's package cbindgen)"
# Another version may write the same header differently: the check would
# then fail on a header that is not stale.
case $(cbindgen --version) in
    "cbindgen 0.24."*) ;;
    *) fail "$(cbindgen --version) is not Debian 12's cbindgen 0.24, which writes the checked-in header" ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# cbindgen runs `cargo metadata` on the crate; keep its files out of the tree.
CARGO_TARGET_DIR=$tmp/target cbindgen --quiet --config "$ABI/cbindgen.toml" --crate atoll-abi \
    --output "$tmp/raw.h" "$ABI" 2> "$tmp/warnings" || { cat "$tmp/warnings" >&2; fail "cbindgen failed"; }
# CChar is `char` by name only: no definition of it is wanted in C.
if grep -v "^WARN: Can't find CChar\. " "$tmp/warnings" | grep . >&2; then
    fail "cbindgen left items out (above): make them translatable, or mark them \`/// cbindgen:ignore\` if C has no use for them"
fi

# The ioctls, from lib.rs's IOC_ lines; struct names as cbindgen.toml renames them.
iocs=$(grep -c '^pub const IOC_[A-Z0-9_]*:' "$ABI/src/lib.rs")
sed -n 's/^pub const IOC_\([A-Z0-9_]*\): u32 = iowr::<\([A-Za-z0-9]*\)>(\([0-9]*\));$/\1 \2 \3/p' \
    "$ABI/src/lib.rs" > "$tmp/iocs"
# IOC_MAGIC is the one IOC_ constant that is not an ioctl.
[ "$(wc -l < "$tmp/iocs")" -eq $((iocs - 1)) ] ||
    fail "an IOC_ constant in abi/src/lib.rs is not in the form \`pub const IOC_X: u32 = iowr::<Type>(nr);\`"
sed -n 's/^"\([A-Za-z0-9]*\)" = "\(atoll_[a-z0-9_]*\)"$/\1 \2/p' "$ABI/cbindgen.toml" > "$tmp/names"
awk 'NR == FNR { c[$1] = $2; next }
     !($2 in c) { print "abi-header: no C name for " $2 > "/dev/stderr"; exit 1 }
     { printf "#define ATOLL_IOC_%s _IOWR(ATOLL_IOC_MAGIC, %s, struct %s)\n", $1, $3, c[$2] }' \
    "$tmp/names" "$tmp/iocs" > "$tmp/ioctls"

# Types, the ioctls before the include guard's end, one blank line at most.
sed -e 's/\buint\(8\|16\|32\|64\)_t\b/__u\1/g' -e 's/\bint\(8\|16\|32\|64\)_t\b/__s\1/g' "$tmp/raw.h" |
    awk -v ioctls="$tmp/ioctls" '
        /^#endif \/\* ATOLL_ABI_GEN_H \*\/$/ {
            print "/* The ioctls on /dev/atoll (abi/src/lib.rs, IOC_MAGIC). */"
            while ((getline line < ioctls) > 0) print line
            print ""
        }
        { print }' | cat -s > "$tmp/atoll_abi_gen.h"

structs=$(grep -c '^#\[repr(C)\]' "$ABI"/src/*.rs | awk -F: '{ n += $2 } END { print n }')
whole=$(grep -c '^struct atoll_[a-z0-9_]* {$' "$tmp/atoll_abi_gen.h" || true)
[ "$whole" -eq "$structs" ] ||
    fail "$whole of the crate's $structs #[repr(C)] structs came out whole as struct atoll_...: name each in abi/cbindgen.toml (include, rename)"

if [ "${1:-}" = --check ]; then
    diff -u "$out" "$tmp/atoll_abi_gen.h" ||
        fail "abi/atoll_abi_gen.h is stale: its source abi/src changed; run make abi-header and commit it"
else
    cp "$tmp/atoll_abi_gen.h" "$out"
fi
