# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The CPU-share pairs of process_guest.sh again, under QEMU -icount: guest
# time counts instructions, so the host's own load cannot move them. Linux
# 6.1 hangs bringing up a second CPU at boot under -icount: the VM boots
# with one and onlines CPU 1, measured on Linux and then as an enclave.
# From the driver: SECONDS, SHARE_ROUNDS. Helpers from process_share.sh.

echo 1 > /sys/devices/system/cpu/cpu1/online || fail "CPU 1 did not come online"
# shellcheck disable=SC3028  # SECONDS: the driver's, an ordinary variable in busybox sh
share_rounds linux taskset -c 1 /extra/spin_rate "$SECONDS"
atoll create --cpus 1 --mem 256M --name bench > /dev/null || fail "atoll create failed"
# shellcheck disable=SC3028  # SECONDS: the driver's, an ordinary variable in busybox sh
share_rounds enclave atoll run bench -- /extra/spin_rate "$SECONDS"
atoll destroy bench > /dev/null || fail "atoll destroy failed"
section "done"
