# Atoll: one entry point for building, testing and benchmarking.
#   make demo                boot the test VM, create an enclave, show its
#                            console, run programs, measure OS noise
#   make test                install what is missing, check style, build, run every test
#   make test-kdebug         (not in `make test`) the tests that exercise host/
#                            most, on a debug build of Debian's 6.1 (KASAN,
#                            KFENCE, lockdep, kmemleak, UBSAN) in build/kdebug/
#   make lint                style: flake8 on the Python, shellcheck on the shell
#                            scripts, rustfmt and clippy -D warnings on every Rust
#                            workspace, checkpatch.pl on the C (--strict on the
#                            kernel code), no import loop in the crates listed
#                            in LOOP_FREE, and the generated C ABI header not stale
#   make abi-header          abi/atoll_abi_gen.h, the C side of the ABI, from
#                            its one source, the atoll-abi crate (cbindgen)
#   make kernel module cli   build into build/ what is installed: the LWK
#                            (atoll-kernel), atoll.ko and the atoll CLI; and for
#                            the test VM the test parts beside them: the LWK's
#                            test image atoll-kernel-test (self-tests, benchmarks),
#                            the test module atoll_test.ko (message checks and
#                            benchmarks, /dev/atoll-test) and the CLI's test build
#                            atoll-test (kmsg-check, kmsg-bench, kmsg-mcast)
#   make selftest SMP=<n>    boot the LWK standalone with `selftest`
#   make crashtest           boot with `crashtest` (must report a fault, exit non-zero)
#   make bench SMP=<n>       boot with `bench` and print the table
#   make bench-enclave       enclave benchmarks in the VM (create/destroy,
#                            message round trip) against Linux's own steps
#   make bench-noise         OS noise on one vCPU: untuned Linux, tuned Linux
#                            (nohz_full, isolcpus, ...), an enclave on each; Linux
#                            idle, CPU-bound, doing I/O; medians of 3, a plot
#   make bench-programs      programs in an enclave vs on Linux (getpid,
#                            delegated write, threads, STREAM, CG) with a plot
#   make bench-processes     processes in an enclave vs on Linux (thread
#                            start, fork+wait, signal round trip, CPU share)
#   make bench-mpi           MPI jobs in an enclave vs on Linux (ping-pong,
#                            CG with Linux busy, start-up)
#   make bench-insitu        the in-situ workflow over XEMEM (a simulation in an
#                            enclave, analytics on Linux), 1 GiB attach vs copy
#   make bench-resize        resizing a running enclave: Pisces Table 5 rows (a CPU
#                            and a block in and out vs Linux's own step) and IRS
#                            (a job losing a CPU mid-run vs the ideal), with a plot
#   make bench-kmsg          message round trips (Linux <-> LWK, LWK <-> LWK)
#                            next to a bounced cache line and a bare IPI
#   make bench-hrt           the hybrid-runtime API vs Linux (null call, thread
#                            create+join, wake-ups, broadcast), real time and
#                            -icount, beside the seed's figures, with a plot
#   make bench-smoke         (in `make test`) the regression guard: the key
#                            enclave / Linux ratios under -icount in a minute
#                            or two, failing if one is over 3x its recorded value
#                            (RECORD=1 records them)
#   make report              the README's benchmark tables and target verdicts,
#                            written from bench/results/*.json (no VM)
#   make report-check        fails, showing the diff, if a committed table
#                            differs from what bench/results gives
#   make install [DESTDIR=<root>] [PREFIX=/usr/local] [KVER=$(uname -r)]
#                            the CLI, the LWK image, headers, libxpmem, the module
#                            built for kernel KVER, the udev rule and the module's
#                            source for DKMS (scripts/install.sh); no test parts
#   make slurm               the Slurm SPANK plugin: build/spank_atoll.so
#   make vm-run SCRIPT=<f> [EXTRA=<dir>] [SMP=4]
#                            run a shell script in the Debian-kernel test VM,
#                            exit with its status; the guest gets build/atoll.ko
#                            and atoll_test.ko (loaded), build/atoll-test as atoll,
#                            build/atoll-kernel and -test (built first) and EXTRA
#                            at /extra
#   make vm-deps             install the VM's Debian kernel, headers, busybox

# Debian's own interpreter: tests and benchmarks need only its packages
# (python3-pytest, python3-matplotlib), which make deps installs.
PYTHON := /usr/bin/python3
SMP ?= 4
MEM ?= 512
TIMEOUT ?= 300
KERNEL := build/atoll-kernel
KERNEL_TEST := build/atoll-kernel-test
MODULE := build/atoll.ko
MODULE_TEST := build/atoll_test.ko
CLI := build/atoll
CLI_TEST := build/atoll-test
# The module builds against the Debian kernel the test VM boots.
KVER = $(shell scripts/debian-kernel.sh)
KDIR = /usr/lib/modules/$(KVER)/build
# cli/.cargo/config.toml makes it static (it runs in the VM's busybox initramfs).
# The test build (feature testing) has a target directory of its own, so
# that neither build undoes the other.
CARGO_CLI := cd cli && cargo build --release
CARGO_CLI_TEST := $(CARGO_CLI) --features testing --target-dir target/testing
KERNEL_SRC := kernel
CARGO_KERNEL := cargo build --release --target x86_64-unknown-none \
	--manifest-path $(KERNEL_SRC)/Cargo.toml -p atoll-kernel
RUN_LWK := $(PYTHON) scripts/run_lwk.py --kernel $(KERNEL_TEST) --smp $(SMP) --mem $(MEM) --timeout $(TIMEOUT)

# The Slurm SPANK plugin (slurm/spank_atoll.c), against Debian's libslurm-dev.
SLURM_OUT ?= build
.PHONY: slurm
slurm:
	@mkdir -p $(SLURM_OUT)
	gcc -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC -o $(SLURM_OUT)/spank_atoll.so slurm/spank_atoll.c

.PHONY: install
PREFIX ?= /usr/local
# The running kernel, unless KVER is given on the command line (elsewhere
# KVER is the test VM's kernel).
INSTALL_KVER = $(if $(filter command line,$(origin KVER)),$(KVER),$(shell uname -r))
install: kernel cli xemem hrt
	scripts/install.sh "$(DESTDIR)" "$(PREFIX)" "$(INSTALL_KVER)"

.PHONY: all deps lint abi-header kernel module cli xemem hrt unit systest systest-long test test-all selftest crashtest bench bench-enclave bench-noise bench-programs bench-processes bench-hrt bench-kmsg bench-mpi bench-insitu bench-resize bench-smoke report report-check demo clean

all: kernel module cli xemem

deps:
	@scripts/install-deps.sh
	@scripts/debian-kernel.sh --install >/dev/null

# Both images come out of the same target directory, so each is copied
# out right after its build.
kernel:
	@mkdir -p build
	$(CARGO_KERNEL)
	cp $(KERNEL_SRC)/target/x86_64-unknown-none/release/atoll-kernel $(KERNEL)
	$(CARGO_KERNEL) --features testing
	cp $(KERNEL_SRC)/target/x86_64-unknown-none/release/atoll-kernel $(KERNEL_TEST)
	@scripts/check-kernel-image.sh $(KERNEL)
	@scripts/check-kernel-image.sh $(KERNEL_TEST)

# atoll.ko, and the test module against it (host/atoll_test/, ATOLL_TEST=m).
module:
	$(MAKE) --no-print-directory -C host KDIR=$(KDIR) ATOLL_TEST=m
	@mkdir -p build
	cp host/atoll.ko $(MODULE)
	cp host/atoll_test/atoll_test.ko $(MODULE_TEST)

cli:
	$(CARGO_CLI)
	$(CARGO_CLI_TEST)
	@mkdir -p build
	cp cli/target/x86_64-unknown-linux-gnu/release/atoll $(CLI)
	cp cli/target/testing/x86_64-unknown-linux-gnu/release/atoll $(CLI_TEST)

# XEMEM's header and libraries for programs: build/include/xpmem.h,
# build/lib/libxpmem.a and build/lib/libxpmem.so.
xemem:
	scripts/build-xemem.sh build

# The hybrid-runtime API for programs (docs/hrt.md): build/include/atoll/hrt.h,
# build/lib/libatoll-hrt.a and build/lib/libatoll-hrt.so.
hrt:
	scripts/build-hrt.sh build

# Style, checked in CI before anything is built. flake8 takes .flake8 and the
# tracked files only (build/ holds others' Python). The kernel crates are
# linted as both images (with and without the test code).
CLIPPY_LWK := cargo clippy --manifest-path $(KERNEL_SRC)/Cargo.toml --release \
	--target x86_64-unknown-none -p atoll-kernel -p atoll-hal
# Every crate's sources: no files may import each other in a circle (issue
# 40); scripts/import_loops.py lists the loops in any crate.
LOOP_FREE := $(KERNEL_SRC)/logic/src $(KERNEL_SRC)/hal/src $(KERNEL_SRC)/src cli/src abi/src
lint:
	scripts/abi-header.sh --check
	scripts/hrt-bindings.sh --check
	$(PYTHON) -m flake8 $$(git ls-files '*.py')
	$(PYTHON) scripts/import_loops.py $(LOOP_FREE)
	scripts/shellcheck.sh
	cd $(KERNEL_SRC) && cargo fmt --check
	cd abi && cargo fmt --check
	cd cli && cargo fmt --check
	cd hrt/rust && cargo fmt --check && cargo clippy --all-targets -- -D warnings
	$(CLIPPY_LWK) -- -D warnings
	$(CLIPPY_LWK) --features testing -- -D warnings
	cargo clippy --manifest-path $(KERNEL_SRC)/Cargo.toml -p atoll-lwk-logic --all-targets -- -D warnings
	cargo clippy --manifest-path abi/Cargo.toml --all-targets -- -D warnings
	cd cli && cargo clippy --all-targets -- -D warnings
	cd cli && cargo clippy --all-targets --features testing -- -D warnings
	scripts/checkpatch.sh

# The ABI is written once, in Rust (abi/src); its C side is generated from
# it and checked in (the module builds without cargo or cbindgen; DKMS too).
abi-header:
	scripts/abi-header.sh

unit:
	cargo test --manifest-path $(KERNEL_SRC)/Cargo.toml -p atoll-lwk-logic
	scripts/ring-test.sh build
	cargo test --manifest-path abi/Cargo.toml
	cargo test --manifest-path cli/Cargo.toml --features testing

# The system tests: `systest` the quick set (CI), `systest-long` the
# tests marked long (slow variants: sizes, stress, second modes).
# Two test files at once (SYSTEST_JOBS): a VM leaves the host CPUs idle about
# 40% of its time, so two VMs share them well.
SYSTEST_JOBS ?= 2
PYTEST := $(PYTHON) -m pytest -v --durations=15 -n $(SYSTEST_JOBS) --dist loadfile
systest: kernel module cli
	$(PYTEST) -m "not long" tests

systest-long: kernel module cli
	$(PYTEST) -m long tests

test: deps
	$(MAKE) lint
	$(MAKE) report-check
	$(MAKE) kernel module cli
	$(MAKE) unit
	$(MAKE) bench-smoke
	$(MAKE) systest

test-all: test
	$(MAKE) systest-long

# A debug-kernel run, left out of `make test` (the kernel's first build takes
# half an hour and more): scripts/kdebug-build.sh builds Debian's 6.1 source
# with scripts/kdebug.config into build/kdebug/ (once), kdebug-module.sh
# atoll.ko against it, and the quick set of the tests below boots that kernel,
# its timeouts KDEBUG_SLOW times longer. A guest kernel's report, a leak
# kmemleak finds at a VM run's end included, fails the test it came in.
# On a shared machine: nice -n 19 make test-kdebug.
KDEBUG_TESTS ?= tests/test_kdebug.py tests/test_enclave.py tests/test_resize.py tests/test_run.py \
	tests/test_xemem.py tests/test_kmsg.py
# 4 is enough on an idle machine; niced under others' VMs, a boot of the
# debug kernel took longer than 180 x 4 s.
KDEBUG_SLOW ?= 6
# vm.py's slab checks (its page_poison=1 needs PAGE_POISONING, which this
# kernel leaves to KASAN) and every KASAN report, not the first only.
KDEBUG_CHECKS ?= slub_debug=FZPU kasan_multi_shot
.PHONY: test-kdebug
test-kdebug: kernel module cli
	scripts/kdebug-build.sh
	scripts/kdebug-module.sh
	ATOLL_VM_KERNEL=build/kdebug/bzImage ATOLL_VM_MODULE=build/kdebug/atoll.ko \
	ATOLL_VM_SLOW=$(KDEBUG_SLOW) ATOLL_DEBUG_CHECKS="$(KDEBUG_CHECKS)" $(PYTEST) -m "not long" $(KDEBUG_TESTS)

selftest: deps kernel
	$(RUN_LWK) --cmdline "selftest"

crashtest: deps kernel
	$(RUN_LWK) --cmdline "crashtest"

bench: deps kernel
	$(PYTHON) bench/lwk_bench.py --kernel $(KERNEL_TEST) --smp $(SMP)

bench-enclave: deps kernel module cli
	$(PYTHON) bench/enclave_bench.py

bench-noise: deps kernel module cli
	$(PYTHON) bench/noise_bench.py

bench-programs: deps kernel module cli
	$(PYTHON) bench/program_bench.py

bench-processes: deps kernel module cli
	$(PYTHON) bench/process_bench.py

bench-hrt: deps kernel module cli
	$(PYTHON) bench/hrt_bench.py

bench-kmsg: deps kernel module cli
	$(PYTHON) bench/kmsg_bench.py

bench-mpi: deps kernel module cli
	$(PYTHON) bench/mpi_bench.py

bench-insitu: deps kernel module cli
	$(PYTHON) bench/insitu_bench.py

bench-resize: deps kernel module cli
	$(PYTHON) bench/resize_bench.py

bench-smoke: kernel module cli
	$(PYTHON) bench/smoke_bench.py $(if $(RECORD),--record)

# The README's tables between its <!-- report:NAME --> markers, from the
# results files alone.
report:
	$(PYTHON) bench/report.py

report-check:
	$(PYTHON) bench/report.py --check

# The README's first command, in the test VM: create an enclave that runs
# the self-tests, show its console, run a program in an enclave and on
# Linux side by side, measure OS noise on both, and the in-situ workflow.
demo: deps kernel module cli
	scripts/build-programs.sh build/programs bench
	scripts/run-demo.sh build

clean:
	rm -rf build $(KERNEL_SRC)/target cli/target abi/target
	-$(MAKE) -C host KDIR=$(KDIR) ATOLL_TEST=m clean

# The test VM (scripts/vm.py): the installed Debian kernel and a busybox
# initramfs under QEMU (TCG).
.PHONY: vm-deps vm-run

ifneq ($(filter vm-run,$(MAKECMDGOALS)),)
ifeq ($(SCRIPT),)
$(error vm-run needs SCRIPT=<shell script to run in the VM>, e.g. make vm-run SCRIPT=my-test.sh)
endif
endif

vm-deps:
	@ver=$$(scripts/debian-kernel.sh --install) && echo "vm-deps: Debian kernel $$ver"

vm-run: vm-deps kernel module cli
	$(PYTHON) scripts/vm.py --script $(SCRIPT) $(if $(EXTRA),--extra $(EXTRA)) --smp $(SMP)
