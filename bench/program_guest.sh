# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The program benchmarks, run inside the test VM by bench/program_bench.py.
# Prints "=== <where>_<what>_<load>" sections, each followed by one program's
# output; the same binaries run first on Linux, on the CPUs the enclave will
# take (before it exists: then Linux has them), then in the enclave, each
# with Linux idle and busy.
# From the driver: K (CPUs measured), MEASURED (them, as a range: 1-3, 3-3),
# ONE (one of them, for single-threaded programs), LINUX_ONLY (the other
# CPUs, space separated), RUNS, REPS, GETPID_CALLS, DEVNULL_CALLS, THREADS,
# STREAM_N, STREAM_SWEEPS, CG_N, CG_ITERS, PIPE_ROUNDS, FILE_CALLS, SERVE_NICE.
export OMP_NUM_THREADS="$K"
section() { echo "=== $1"; }
fail() { echo "program_guest: $*"; exit 1; }
measure() { name=$1; shift; section "$name"; "$@" || fail "$name failed: $*"; }

# Linux's own work: a busy loop pinned to each Linux-only CPU, and a
# dd | md5sum pipeline Linux schedules wherever it may (on Linux's side that
# includes the measured CPUs; once the enclave holds them, it cannot).
noise_on() {
    for c in $LINUX_ONLY; do taskset -c "$c" sh -c 'while :; do :; done' & done
    sh -c 'while :; do dd if=/dev/zero bs=1M count=64 2>/dev/null | md5sum > /dev/null; done' &
    sleep 1
}
# shellcheck disable=SC2046  # one argument per pid
noise_off() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; return 0; }

pipe_a=${LINUX_ONLY%% *}
for load in idle busy; do
    [ $load = busy ] && noise_on
    measure linux_getpid_$load taskset -c "$ONE" /extra/getpid "$GETPID_CALLS" "$REPS"
    measure linux_devnull_$load taskset -c "$ONE" /extra/devnull "$DEVNULL_CALLS" "$REPS"
    measure linux_pipe_$load /extra/pipe_rtt "$pipe_a" "$ONE" "$PIPE_ROUNDS"
    measure linux_file_$load taskset -c "$ONE" /extra/file_rw /tmp "$FILE_CALLS" "$REPS"
    measure linux_pipethreads_$load taskset -c "$MEASURED" /extra/pipe_threads "$PIPE_ROUNDS" "$REPS"
    measure linux_threads_$load taskset -c "$MEASURED" /extra/thread_create "$THREADS" "$REPS"
    measure linux_stream_$load taskset -c "$MEASURED" /extra/stream "$STREAM_N" "$RUNS" "$STREAM_SWEEPS"
    measure linux_cg_$load taskset -c "$MEASURED" /extra/cg "$CG_N" "$CG_ITERS" "$RUNS"
    [ $load = busy ] && noise_off
done

section create
atoll create --cpus "$MEASURED" --mem 512M --name bench || fail "atoll create failed"
for load in idle busy; do
    [ $load = busy ] && noise_on
    measure enclave_getpid_$load atoll run bench -- /extra/getpid "$GETPID_CALLS" "$REPS"
    measure enclave_devnull_$load atoll run bench -- /extra/devnull "$DEVNULL_CALLS" "$REPS"
    measure enclave_file_$load atoll run bench -- /extra/file_rw /tmp "$FILE_CALLS" "$REPS"
    measure enclave_pipethreads_$load atoll run bench -- /extra/pipe_threads "$PIPE_ROUNDS" "$REPS"
    measure enclave_threads_$load atoll run bench -- /extra/thread_create "$THREADS" "$REPS"
    measure enclave_stream_$load atoll run bench -- /extra/stream "$STREAM_N" "$RUNS" "$STREAM_SWEEPS"
    measure enclave_cg_$load atoll run bench -- /extra/cg "$CG_N" "$CG_ITERS" "$RUNS"
    [ $load = busy ] && noise_off
done
# Where the delegated calls' time went, as each program that made many says at its end.
section call_times
atoll console bench | grep "delegated calls"
atoll destroy bench > /dev/null || fail "atoll destroy failed"
# The same delegated call with the programs' servers at nice $SERVE_NICE
# (root's `atoll create --serve-nice`): Linux's scheduler serves them first.
section create_served
atoll create --cpus "$MEASURED" --mem 512M --name served --serve-nice "$SERVE_NICE" || fail "atoll create --serve-nice failed"
for load in idle busy; do
    [ $load = busy ] && noise_on
    measure served_devnull_$load atoll run served -- /extra/devnull "$DEVNULL_CALLS" "$REPS"
    [ $load = busy ] && noise_off
done
atoll destroy served > /dev/null || fail "atoll destroy failed"
section "done"
