# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The process benchmarks, run inside the test VM by bench/process_bench.py.
# Prints "=== <where>_<what>" sections, each followed by the programs'
# output: the same binaries on Linux CPU ONE (before the enclave takes it)
# and in a one-CPU enclave on it.
# From the driver: ONE, REPS, THREADS, FORKS, SPAWNS, SIGNALS, SECONDS,
# SHARE_ROUNDS. Helpers from process_share.sh.

measure linux_threads taskset -c "$ONE" /extra/thread_create "$THREADS" "$REPS"
measure linux_fork taskset -c "$ONE" /extra/fork_wait "$FORKS" "$REPS"
measure linux_spawn taskset -c "$ONE" /extra/spawn_wait "$SPAWNS" "$REPS" 64
measure linux_signal taskset -c "$ONE" /extra/signal_rtt "$SIGNALS" "$REPS"
# shellcheck disable=SC3028  # SECONDS: the driver's, an ordinary variable in busybox sh
share_rounds linux taskset -c "$ONE" /extra/spin_rate "$SECONDS"

section create
atoll create --cpus "$ONE-$ONE" --mem 512M --name bench || fail "atoll create failed"
measure enclave_threads atoll run bench -- /extra/thread_create "$THREADS" "$REPS"
measure enclave_fork atoll run bench -- /extra/fork_wait "$FORKS" "$REPS"
measure enclave_spawn atoll run bench -- /extra/spawn_wait "$SPAWNS" "$REPS" 64
measure enclave_signal atoll run bench -- /extra/signal_rtt "$SIGNALS" "$REPS"
# shellcheck disable=SC3028  # SECONDS: the driver's, an ordinary variable in busybox sh
share_rounds enclave atoll run bench -- /extra/spin_rate "$SECONDS"
atoll destroy bench > /dev/null || fail "atoll destroy failed"
section "done"
