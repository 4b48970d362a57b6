# The noise benchmark in one boot of the test VM (bench/noise_bench.py):
# `atoll noise` on one CPU, first as a Linux CPU, then as an enclave's CPU,
# with Linux's other CPUs idle, busy (a CPU-bound load) and busy with I/O
# (direct reads of a virtio disk: an interrupt per read). The loads are
# started as a user would, not pinned: where they run is the isolation
# being measured. Prints "=== <where> <load> <round> <probe>" and the JSON.
# CPU (the measured one), LOADS, ROUNDS, PROBE_SECONDS, THRESHOLD_NS and
# FWQ_SECONDS come from the driver.
LOADERS=3

start_load() {
    case $1 in
    busy) for i in $(seq $LOADERS); do sh -c 'while :; do :; done' & done ;;
    io) for i in $(seq $LOADERS); do
            sh -c 'while :; do dd if=/dev/vda of=/dev/null bs=4k count=2048 iflag=direct 2>/dev/null; done' &
        done ;;
    esac
    sleep 1
}
stop_load() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; }

probe() {
    where=$1 load=$2 round=$3; shift 3
    echo "=== $where $load $round selfish"
    atoll --json noise "$@" --seconds "$PROBE_SECONDS" --threshold-ns "$THRESHOLD_NS" 2>/dev/null || exit 3
    echo "=== $where $load $round fwq"
    atoll --json noise "$@" --seconds "$FWQ_SECONDS" --probe fwq 2>/dev/null || exit 4
}

[ -b /dev/vda ] || { echo "no /dev/vda: the driver gives the VM a disk"; exit 2; }
echo "=== cmdline"
cat /proc/cmdline
for round in $(seq "$ROUNDS"); do
    for load in $LOADS; do
        start_load $load
        probe linux $load "$round" --linux-cpus $CPU
        stop_load
    done
    atoll create --cpus $CPU-$CPU --mem 128M --name noise > /dev/null || exit 5
    for load in $LOADS; do
        start_load $load
        probe enclave $load "$round" --enclave noise
        stop_load
    done
    atoll destroy noise > /dev/null || exit 6
    echo "ATOLL-NOISE: round $round done" >&2
done
echo "=== done"
