# Atoll: one entry point for building, testing and benchmarking.
#   make kernel              build the LWK to build/atoll-kernel
#   make test                install what is missing, build, run every test
#   make selftest SMP=<n>    boot the LWK standalone with `selftest`
#   make crashtest           boot with `crashtest` (must report a fault, exit non-zero)
#   make bench SMP=<n>       boot with `bench` and print the table
#   make demo                self-tests on 4 vCPUs, then the benchmark table
#   make vm-run SCRIPT=<f> [EXTRA=<dir>] [SMP=4]
#                            run a shell script in the Debian-kernel test VM,
#                            exit with its status; the guest gets build/atoll.ko,
#                            build/atoll, build/atoll-kernel when they exist
#                            (vm-run does not build them) and EXTRA at /extra
#   make vm-deps             install the VM's Debian kernel, headers, busybox

SMP ?= 4
MEM ?= 512
TIMEOUT ?= 300
KERNEL := build/atoll-kernel
KERNEL_SRC := kernel
CARGO_KERNEL := cargo build --release --target x86_64-unknown-none \
	--manifest-path $(KERNEL_SRC)/Cargo.toml -p atoll-kernel
RUN_LWK := python3 scripts/run_lwk.py --kernel $(KERNEL) --smp $(SMP) --mem $(MEM) --timeout $(TIMEOUT)

.PHONY: all deps kernel unit systest test selftest crashtest bench demo clean

all: kernel

deps:
	@scripts/install-deps.sh

kernel:
	$(CARGO_KERNEL)
	@mkdir -p build
	cp $(KERNEL_SRC)/target/x86_64-unknown-none/release/atoll-kernel $(KERNEL)
	@scripts/check-kernel-image.sh $(KERNEL)

unit:
	cargo test --manifest-path $(KERNEL_SRC)/Cargo.toml -p atoll-lwk-logic

systest: kernel
	python3 -m pytest -v tests

test: deps
	$(MAKE) kernel
	$(MAKE) unit
	$(MAKE) systest

selftest: deps kernel
	$(RUN_LWK) --cmdline "selftest"

crashtest: deps kernel
	$(RUN_LWK) --cmdline "crashtest"

bench: deps kernel
	python3 bench/lwk_bench.py --kernel $(KERNEL) --smp $(SMP)

# The README's first command. Until enclaves exist (issue 3) it shows the LWK
# on its own: self-tests on 4 vCPUs, then the benchmark table.
demo: deps kernel
	$(RUN_LWK) --cmdline "selftest"
	python3 bench/lwk_bench.py --kernel $(KERNEL) --smp $(SMP)

clean:
	rm -rf build $(KERNEL_SRC)/target

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

vm-run: vm-deps
	python3 scripts/vm.py --script $(SCRIPT) $(if $(EXTRA),--extra $(EXTRA)) --smp $(SMP)
