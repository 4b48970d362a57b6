# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The noise benchmark in one boot of the test VM (bench/noise_bench.py):
# `atoll noise` on one CPU, first as a Linux CPU, then as an enclave's CPU,
# with Linux's other CPUs idle, busy (a CPU-bound load) and busy with I/O
# (direct reads of a virtio disk: an interrupt per read). The loads are
# started as a user would, not pinned: where they run is the isolation
# being measured. Prints "=== <where> <load> <round> <probe>" and the JSON.
# CPU (the measured one), LOADS, ROUNDS, PROBE_SECONDS, THRESHOLD_NS,
# FWQ_SECONDS and PARTITION come from the driver. PARTITION=1: the Linux
# probe runs a third time with the CPU in a cgroup-v2 isolated partition
# (no load balancing onto it, set up at run time, no reboot).
LOADERS=3
# Kernel messages off the console: a warning (say, hrtimer's "interrupt
# took") written in the middle of a probe's long JSON line broke it.
echo 1 > /proc/sys/kernel/printk

start_load() {
    case $1 in
    busy) for _ in $(seq $LOADERS); do sh -c 'while :; do :; done' & done ;;
    io) for _ in $(seq $LOADERS); do
            sh -c 'while :; do dd if=/dev/vda of=/dev/null bs=4k count=2048 iflag=direct 2>/dev/null; done' &
        done ;;
    esac
    sleep 1
}
# shellcheck disable=SC2046  # one argument per pid
stop_load() { kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; }

probe() {  # where load round [in_partition] atoll-noise-args
    where=$1 load=$2 round=$3; shift 3
    run=; [ "$1" = in_partition ] && { run=in_partition; shift; }
    echo "=== $where $load $round selfish"
    $run atoll --json noise "$@" --seconds "$PROBE_SECONDS" --threshold-ns "$THRESHOLD_NS" 2>/dev/null || exit 3
    echo "=== $where $load $round fwq"
    $run atoll --json noise "$@" --seconds "$FWQ_SECONDS" --probe fwq 2>/dev/null || exit 4
}

# CPU alone in an isolated cpuset partition, and back to an ordinary CPU.
CG=/sys/fs/cgroup
partition_on() {
    # shellcheck disable=SC2015  # any step failing exits
    mkdir -p $CG/noise && echo "$CPU" > $CG/noise/cpuset.cpus &&
        echo isolated > $CG/noise/cpuset.cpus.partition &&
        [ "$(cat $CG/noise/cpuset.cpus.partition)" = isolated ] ||
        { echo "no isolated partition: $(cat $CG/noise/cpuset.cpus.partition)"; exit 7; }
}
partition_off() { echo member > $CG/noise/cpuset.cpus.partition && rmdir $CG/noise; }
# Runs a command inside the partition. Only it moves: a task moved back to
# the root cgroup gets every CPU in its affinity on 6.1, the isolated one
# too, and the loads it then starts pile onto that CPU.
in_partition() { sh -c 'echo $$ > '$CG'/noise/cgroup.procs && exec "$@"' sh "$@"; }

[ -b /dev/vda ] || { echo "no /dev/vda: the driver gives the VM a disk"; exit 2; }
if [ "$PARTITION" = 1 ]; then
    mount -t cgroup2 none $CG && echo +cpuset > $CG/cgroup.subtree_control || exit 8
fi
echo "=== cmdline"
cat /proc/cmdline
for round in $(seq "$ROUNDS"); do
    for load in $LOADS; do
        start_load "$load"
        probe linux "$load" "$round" --linux-cpus "$CPU"
        stop_load
    done
    if [ "$PARTITION" = 1 ]; then
        partition_on
        for load in $LOADS; do
            start_load "$load"
            # atoll joins the partition; the loads, in the root cgroup, cannot.
            probe partition "$load" "$round" in_partition --linux-cpus "$CPU"
            stop_load
        done
        partition_off
    fi
    atoll create --cpus "$CPU-$CPU" --mem 128M --name noise > /dev/null || exit 5
    for load in $LOADS; do
        start_load "$load"
        probe enclave "$load" "$round" --enclave noise
        stop_load
    done
    atoll destroy noise > /dev/null || exit 6
    echo "ATOLL-NOISE: round $round done" >&2
done
echo "=== done"
