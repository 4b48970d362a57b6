# The CPU-share pairs of process_guest.sh again, under QEMU -icount: guest
# time counts instructions, so the host's own load cannot move them. Linux
# 6.1 hangs bringing up a second CPU at boot under -icount: the VM boots
# with one and onlines CPU 1, measured on Linux and then as an enclave.
# From the driver: SECONDS, SHARE_ROUNDS.
section() { echo "=== $1"; }
fail() { echo "process_share_icount: $*"; exit 1; }
measure() { name=$1; shift; section "$name"; "$@" || fail "$name failed: $*"; }
two() { "$@" & "$@" & wait; }

echo 1 > /sys/devices/system/cpu/cpu1/online || fail "CPU 1 did not come online"
measure linux_share_alone taskset -c 1 /extra/spin_rate "$SECONDS"
for r in $(seq "$SHARE_ROUNDS"); do
    measure linux_share_two two taskset -c 1 /extra/spin_rate "$SECONDS"
    measure linux_share_alone taskset -c 1 /extra/spin_rate "$SECONDS"
done
atoll create --cpus 1 --mem 256M --name bench > /dev/null || fail "atoll create failed"
measure enclave_share_alone atoll run bench -- /extra/spin_rate "$SECONDS"
for r in $(seq "$SHARE_ROUNDS"); do
    measure enclave_share_two two atoll run bench -- /extra/spin_rate "$SECONDS"
    measure enclave_share_alone atoll run bench -- /extra/spin_rate "$SECONDS"
done
atoll destroy bench > /dev/null || fail "atoll destroy failed"
section done
