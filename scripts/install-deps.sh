#!/usr/bin/env bash
# Installs what building and testing Atoll needs on a fresh Debian 12 machine.
# Safe to run again: it only installs what is missing.
set -euo pipefail

need_apt=()
command -v qemu-system-x86_64 >/dev/null || need_apt+=(qemu-system-x86)
command -v readelf >/dev/null || need_apt+=(binutils)
command -v make >/dev/null || need_apt+=(make)
# The C side of the ABI (abi/atoll_abi_gen.h) is generated from the Rust
# crate; `make lint` regenerates it to check the checked-in copy.
command -v cbindgen >/dev/null || need_apt+=(cbindgen)
# Static test programs for `atoll run` (scripts/build-programs.sh): a musl build too.
command -v musl-gcc >/dev/null || need_apt+=(musl-tools)
# Dynamic programs and MPI jobs (issue 13): Debian's Open MPI and MPICH; the
# test VM shares the host's /usr, so the guest runs these very builds.
command -v mpicc.openmpi >/dev/null || need_apt+=(openmpi-bin libopenmpi-dev)
command -v mpicc.mpich >/dev/null || need_apt+=(mpich libmpich-dev)
command -v g++ >/dev/null || need_apt+=(g++)
# XEMEM's library from Fortran (bind(C)): tests/programs/xemem_fortran.f90.
command -v gfortran >/dev/null || need_apt+=(gfortran)
# hwloc's lstopo, which checks the machine an enclave's program sees.
command -v lstopo-no-graphics >/dev/null || need_apt+=(hwloc-nox)
# make install's DKMS configuration is checked by building with DKMS (issue 17).
command -v dkms >/dev/null || need_apt+=(dkms)
# Jobs through Slurm (issue 17): Debian's Slurm 22.05 and munge, run in the
# test VM; spank.h for the plugin.
command -v slurmd >/dev/null || need_apt+=(slurmd slurmctld slurm-client munge)
[ -f /usr/include/slurm/spank.h ] || need_apt+=(libslurm-dev)
# The tests and benchmarks run with Debian's own /usr/bin/python3 (never pip
# into it: Debian marks it externally managed): pytest, and matplotlib for
# the benchmarks' plots.
/usr/bin/python3 -c "import pytest" 2>/dev/null || need_apt+=(python3-pytest)
# make systest runs two test files at once (a VM leaves the host's CPUs
# idle about 40% of its time): pytest-xdist.
/usr/bin/python3 -c "import xdist" 2>/dev/null || need_apt+=(python3-pytest-xdist)
/usr/bin/python3 -c "import matplotlib" 2>/dev/null || need_apt+=(python3-matplotlib)
# make lint: flake8 for the Python, shellcheck for the shell scripts.
/usr/bin/python3 -c "import flake8" 2>/dev/null || need_apt+=(flake8)
command -v shellcheck >/dev/null || need_apt+=(shellcheck)
# test_fork.py checks with strace that short-lived children make no process on Linux.
command -v strace >/dev/null || need_apt+=(strace)
# Guest scripts pin with taskset (util-linux) and bring up loopback with ip (iproute2).
command -v taskset >/dev/null || need_apt+=(util-linux)
command -v ip >/dev/null || need_apt+=(iproute2)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "install-deps: apt packages: ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need_apt[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null; then
    echo "install-deps: Rust (cargo) is required; install it with rustup" >&2
    exit 1
fi
if ! rustup target list --installed | grep -qx x86_64-unknown-none; then
    echo "install-deps: rust target x86_64-unknown-none"
    rustup target add x86_64-unknown-none
fi

# `make lint` checks style with these.
for component in rustfmt clippy; do
    if ! rustup component list --installed | grep -q "^$component"; then
        echo "install-deps: rust component $component"
        rustup component add "$component"
    fi
done

