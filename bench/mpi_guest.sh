# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The MPI benchmarks, run inside the test VM by bench/mpi_bench.py: Debian's
# Open MPI, two ranks on guest CPUs FIRST and FIRST+1, first on Linux
# (each rank pinned to its CPU) and then in a two-CPU enclave on those
# CPUs (atoll run --rank-cpus), over shared memory only (btl self,vader).
# The kernel's copy under Open MPI's single-copy path (cma_copy) on both.
# Prints "=== <where>_<what>" sections with the programs' output.
# From the driver: FIRST, CELLS, ITERATIONS, RUNS, STARTS.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPIRUN="mpirun.openmpi --oversubscribe --bind-to none --mca btl self,vader"
SECOND=$((FIRST + 1))
section() { echo "=== $1"; }
fail() { echo "mpi_guest: $*"; exit 1; }
measure() { name=$1; shift; section "$name"; "$@" || fail "$name failed: $*"; }
# On Linux, rank r on CPU FIRST + r % 2, as --rank-cpus places them in the
# enclave (a file: mpirun starts programs, not shell functions).
export FIRST
# shellcheck disable=SC2016  # expanded by /tmp/pinned when it runs
printf '#!/bin/sh\nexec taskset -c $((FIRST + OMPI_COMM_WORLD_LOCAL_RANK %% 2)) "$@"\n' > /tmp/pinned
chmod +x /tmp/pinned
# Linux's other CPUs busy (CPU-bound loops) for the noisy runs.
BUSY=""
busy() {
    for c in $(seq 0 $((FIRST - 1))); do
        taskset -c "$c" sh -c 'while :; do :; done' & BUSY="$BUSY $!"
    done
}
# shellcheck disable=SC2086  # BUSY: a list of pids
quiet() { kill $BUSY 2>/dev/null; wait $BUSY 2>/dev/null; BUSY=""; }
starts() {  # STARTS timed 4-rank jobs of MPI_Init + barrier + Finalize
    for _ in $(seq "$STARTS"); do
        t0=$(/usr/bin/date +%s%N); "$@" || fail "start-up run failed"; t1=$(/usr/bin/date +%s%N)
        echo "start: seconds=$(echo "$t0 $t1" | awk '{ printf "%.3f", ($2 - $1) / 1e9 }')"
    done
}

# shellcheck disable=SC2086  # MPIRUN and RUN: commands with their arguments
measure linux_pingpong $MPIRUN -n 2 /tmp/pinned /extra/mpi_pingpong
measure linux_cma taskset -c "$FIRST-$SECOND" /extra/cma_copy
busy
# shellcheck disable=SC2086  # MPIRUN and RUN: commands with their arguments
measure linux_cg_busy $MPIRUN -n 2 /tmp/pinned /extra/mpi_cg "$CELLS" "$ITERATIONS" "$RUNS"
quiet
section linux_start
# shellcheck disable=SC2086  # MPIRUN and RUN: commands with their arguments
starts $MPIRUN -n 4 /tmp/pinned /extra/mpi_init

section create
atoll create --cpus "$FIRST-$SECOND" --mem 1G --name mpi > /dev/null || fail "atoll create failed"
RUN="atoll run mpi --rank-cpus --"
# shellcheck disable=SC2086  # MPIRUN and RUN: commands with their arguments
measure enclave_pingpong $MPIRUN -n 2 $RUN /extra/mpi_pingpong
measure enclave_cma atoll run mpi -- /extra/cma_copy
busy
# shellcheck disable=SC2086  # MPIRUN and RUN: commands with their arguments
measure enclave_cg_busy $MPIRUN -n 2 $RUN /extra/mpi_cg "$CELLS" "$ITERATIONS" "$RUNS"
quiet
section enclave_start
# shellcheck disable=SC2086  # MPIRUN and RUN: commands with their arguments
starts $MPIRUN -n 4 $RUN /extra/mpi_init
atoll destroy mpi > /dev/null || fail "atoll destroy failed"
section "done"
