# shellcheck shell=sh  # no shebang: the drivers put it into their guest scripts (busybox sh)
# Shell helpers for bench/process_guest.sh and bench/process_share_icount.sh,
# which process_bench.py puts after this file in the guest's script.
section() { echo "=== $1"; }
fail() { echo "process_bench guest: $*"; exit 1; }
measure() { name=$1; shift; section "$name"; "$@" || fail "$name failed: $*"; }
two() { "$@" & "$@" & wait; }
# share_rounds WHERE CMD...: CMD alone, then SHARE_ROUNDS times two copies at
# once and one alone again (pairs between runs alone: the host's load drifts).
share_rounds() {
    where=$1; shift
    measure "${where}_share_alone" "$@"
    for _ in $(seq "$SHARE_ROUNDS"); do
        measure "${where}_share_two" two "$@"
        measure "${where}_share_alone" "$@"
    done
}
