#!/bin/sh
# Builds the programs `atoll run` is tested and measured with into DIR, as
# x86-64 Linux executables, static unless named dyn-* (they also run on
# Linux as they are):
#   scripts/build-programs.sh DIR [tests|bench|all]
# tests (tests/programs): hello, hello-pie (static-pie), args, pthreads, callrate,
#   openmp, hrt_api and tasks_hrt (with libatoll-hrt), hrt_rust (the crate hrt/rust's example), fileio, segv, fpe, ill, sleep, unsupported, linuxapi, ids, sockets, work, fork, exec, shm_pingpong, sysv_shm, migrate, cma_stress, memhog, mirror_hold, signals, cputime, mmap_churn, unmap_inflight, stack_use, pipes, msgping, xemem_check (and dyn-xemem_check with libxpmem.so), xemem_cpp (C++), xemem_fortran (Fortran), and with
#   musl-gcc also hello-musl, args-musl, pthreads-musl; dynamically linked:
#   dyn-hello, dyn-filemap, dyn-dlopen with libplugin.so, dyn-procpaths, dyn-procmaps, dyn-openmp-cpp,
#   and mpi-check-ompi, mpi-check-mpich (Debian's Open MPI and MPICH), with
#   libmpich-finalize-fix.so (preloaded: MPICH 4.0.2's finalize hang over TCP);
# bench (bench/programs and bench/pipe_rtt.c): getpid, devnull, file_rw, pipe_threads,
#   thread_create, fork_wait, spawn_wait, signal_rtt, spin_rate, stream, cg, pipe_rtt,
#   insitu_sim, insitu_analytics, xemem_attach, xemem_check (XEMEM), hrt_bench, tasks_hrt and tasks_pthreads (libatoll-hrt), start_main,
#   and with Debian's Open MPI (dynamic) mpi_pingpong, mpi_cg, mpi_init.
# The tests, bench/program_bench.py and `make demo` put DIR at /extra in the
# test VM.
set -eu

out=${1:?usage: scripts/build-programs.sh DIR [tests|bench|all]}
what=${2:-all}
case $what in tests|bench|all) ;;
*) echo "build-programs: unknown set '$what' (tests, bench or all)" >&2; exit 2 ;;
esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$ROOT/tests/programs
B=$ROOT/bench/programs
CFLAGS="-O2 -Wall -Werror"
# libgomp.a pulls in a dlopen for offloading that ld warns about when linking
# statically; it is never called.
OMP="-fopenmp -Wl,--no-warnings"
mkdir -p "$out"

# CFLAGS, OMP and X are lists of compiler arguments, split on purpose (sh has no arrays).
# shellcheck disable=SC2086
cc() { name=$1; shift; gcc $CFLAGS -static -o "$out/$name" "$@"; }

# shellcheck disable=SC2086  # CFLAGS, OMP, X
case $what in tests|all)
    for p in hello args fileio segv fpe ill sleep unsupported linuxapi ids sockets work fork exec shm_pingpong sysv_shm migrate cma_stress memhog mirror_hold spawn_big vdso; do
        cc "$p" "$T/$p.c"
    done
    cc pthreads -pthread "$T/pthreads.c"
    cc callrate -pthread "$T/callrate.c"
    cc signals -pthread "$T/signals.c" -lm
    cc cputime -pthread "$T/cputime.c"
    cc mmap_churn -pthread "$T/mmap_churn.c"
    cc unmap_inflight -pthread "$T/unmap_inflight.c"
    cc stack_use -pthread "$T/stack_use.c"
    cc pipes -pthread "$T/pipes.c"
    cc cpl -pthread "$T/cpl.c"
    cc procmaps -pthread "$T/procmaps.c"
    cc openmp $OMP "$T/openmp.c"
    cc omp_resize $OMP "$T/omp_resize.c"
    cc msgping -I "$ROOT/abi" "$T/msgping.c"
    cc direct_call -pthread -I "$ROOT/abi" "$T/direct_call.c"
    cc not_yours -I "$ROOT/abi" "$T/not_yours.c"
    # The hybrid-runtime API's library as a runtime builds against it.
    "$ROOT/scripts/build-hrt.sh" "$ROOT/build"
    cc hrt_api -I "$ROOT/build/include" "$T/hrt_api.c" "$ROOT/build/lib/libatoll-hrt.a"
    # ... and from Rust, through the crate (hrt/rust), its example.
    cargo build -q --release --example hrt_rust --manifest-path "$ROOT/hrt/rust/Cargo.toml" \
        --config "$ROOT/hrt/rust/.cargo/config.toml"
    cp "$ROOT/hrt/rust/target/x86_64-unknown-linux-gnu/release/examples/hrt_rust" "$out/hrt_rust"
    cc tasks_hrt -pthread -I "$ROOT/hrt/tasks" -I "$ROOT/build/include" "$B/tasks_bench.c" \
        "$ROOT/hrt/tasks/tasks.c" "$ROOT/build/lib/libatoll-hrt.a"
    # XEMEM's library as a user builds against it: static, and shared beside the program.
    "$ROOT/scripts/build-xemem.sh" "$ROOT/build"
    X="-I $ROOT/build/include"
    cc xemem_check $X "$T/xemem_check.c" "$ROOT/build/lib/libxpmem.a"
    cp "$ROOT/build/lib/libxpmem.so" "$out/"
    # shellcheck disable=SC2016  # $ORIGIN is the dynamic linker's
    gcc $CFLAGS $X -o "$out/dyn-xemem_check" "$T/xemem_check.c" -L "$ROOT/build/lib" -lxpmem \
        -Wl,-rpath,'$ORIGIN'
    g++ $CFLAGS -static $X -o "$out/xemem_cpp" "$T/xemem_cpp.cpp" "$ROOT/build/lib/libxpmem.a"
    gfortran -O2 -static -J "$out" -o "$out/xemem_fortran" "$T/xemem_fortran.f90" \
        "$ROOT/build/lib/libxpmem.a"
    rm -f "$out/xpmem.mod"
    gcc $CFLAGS -static-pie -fPIE -o "$out/hello-pie" "$T/hello.c"
    gcc $CFLAGS -o "$out/dyn-hello" "$T/hello.c"
    gcc $CFLAGS -o "$out/dyn-vdso" "$T/vdso.c"
    gcc $CFLAGS -o "$out/dyn-filemap" "$T/filemap.c"
    gcc $CFLAGS -o "$out/dyn-dlopen" "$T/dlopen.c"
    gcc $CFLAGS -o "$out/dyn-procpaths" "$T/procpaths.c"
    gcc $CFLAGS -pthread -o "$out/dyn-procmaps" "$T/procmaps.c"
    gcc $CFLAGS -shared -fPIC -o "$out/libplugin.so" "$T/plugin.c"
    g++ $CFLAGS -fopenmp -o "$out/dyn-openmp-cpp" "$T/openmp_cpp.cpp"
    mpicc.openmpi $CFLAGS -o "$out/mpi-check-ompi" "$T/mpi_check.c"
    mpicc.mpich $CFLAGS -o "$out/mpi-check-mpich" "$T/mpi_check.c"
    gcc $CFLAGS -shared -fPIC -o "$out/libmpich-finalize-fix.so" "$T/mpich_finalize_fix.c" -ldl
    if command -v musl-gcc >/dev/null; then
        for p in hello args pthreads; do
            musl-gcc $CFLAGS -static -pthread -o "$out/$p-musl" "$T/$p.c"
        done
    else
        echo "build-programs: musl-gcc not found (apt install musl-tools): no musl builds" >&2
    fi
esac

# shellcheck disable=SC2086  # CFLAGS, OMP, X
case $what in bench|all)
    for p in getpid devnull file_rw pipe_threads thread_create fork_wait spawn_wait signal_rtt spin_rate cma_copy; do
        cc "$p" -pthread "$B/$p.c"
    done
    cc stream $OMP "$B/stream.c"
    cc cg $OMP "$B/cg.c" -lm
    cc pipe_rtt "$ROOT/bench/pipe_rtt.c"
    cc hotplug "$ROOT/bench/hotplug.c"
    cc irs_loop -pthread "$B/irs_loop.c"
    # The in-situ workflow (bench/insitu_bench.py), with XEMEM's library;
    # its sources too, which the guest's compile load builds.
    "$ROOT/scripts/build-xemem.sh" "$ROOT/build"
    X="-I $ROOT/build/include $ROOT/build/lib/libxpmem.a"
    for p in insitu_sim insitu_analytics xemem_attach; do
        cc "$p" "$B/$p.c" $X
    done
    cc xemem_check "$T/xemem_check.c" $X
    # The hybrid-runtime API against Linux (bench/hrt_bench.py).
    "$ROOT/scripts/build-hrt.sh" "$ROOT/build"
    cc hrt_bench -pthread -I "$ROOT/build/include" "$B/hrt_bench.c" "$ROOT/build/lib/libatoll-hrt.a"
    cc start_main "$B/start_main.c"
    # The task runtime (hrt/tasks) on the API and on pthreads, one source.
    cc tasks_hrt -pthread -I "$ROOT/hrt/tasks" -I "$ROOT/build/include" "$B/tasks_bench.c" \
        "$ROOT/hrt/tasks/tasks.c" "$ROOT/build/lib/libatoll-hrt.a"
    cc tasks_pthreads -pthread -DTASKS_PTHREADS -I "$ROOT/hrt/tasks" "$B/tasks_bench.c" "$ROOT/hrt/tasks/tasks.c"
    cp "$B/insitu_sim.c" "$B/insitu.h" "$ROOT/build/include/xpmem.h" "$out/"
    for p in mpi_pingpong mpi_cg mpi_init; do
        mpicc.openmpi $CFLAGS -o "$out/$p" "$B/$p.c" -lm
    done
esac

