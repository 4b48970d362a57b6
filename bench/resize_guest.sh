# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The resize benchmark, run inside the test VM by bench/resize_bench.py.
# Table 5 (Pisces): ROUNDS times, a CPU and a 128 MiB block added to a
# running one-CPU enclave and taken back (atoll --json add/remove), then
# Linux offlining and onlining the same CPU and block alone. IRS: a
# two-thread job (irs_loop, UNITS quanta per thread) in a two-CPU enclave
# on 2 CPUs, restricted to 1 CPU, and with its second CPU removed
# REMOVE_AFTER_MS into the run (then added back), RUNS times each,
# interleaved. Prints "=== <name>" sections.
# From the driver: ROUNDS, RUNS, UNITS, REMOVE_AFTER_MS. (/usr/bin/date: the
# host's GNU date, which knows %N; busybox's does not.)
set -e
section() { echo "=== $1"; }
BLOCK_BYTES=$((128 << 20))

atoll create --cpus 3-3 --mem 128M --name t5 > /dev/null
for _ in $(seq "$ROUNDS"); do
    section add_cpu
    out=$(atoll --json add t5 --cpus 1)
    echo "$out"
    cpu=$(echo "$out" | sed -n 's/.*"cpus":\[\([0-9]*\)\].*/\1/p')
    section remove_cpu
    atoll --json remove t5 --cpus 1
    section linux_cpu
    /extra/hotplug cpu "$cpu"
    section add_block
    atoll --json add t5 --mem 128M
    # The greedy sed takes the last range's start: the added block.
    added=$(atoll --json status t5 | sed -n 's/.*"start":\([0-9]*\).*/\1/p')
    section remove_block
    atoll --json remove t5 --mem 128M
    section linux_block
    /extra/hotplug mem $((added / BLOCK_BYTES))
done
atoll destroy t5 > /dev/null

mkdir -p /tmp/irs
atoll create --cpus 2-3 --mem 256M --name irs > /dev/null
for _ in $(seq "$RUNS"); do
    section irs_two
    atoll run irs -- /extra/irs_loop "$UNITS" /tmp/irs
    section irs_one
    atoll run irs --cpus 0-0 -- /extra/irs_loop "$UNITS" /tmp/irs
    section irs_removed
    rm -f /tmp/irs/started
    atoll run irs -- /extra/irs_loop "$UNITS" /tmp/irs > /tmp/irs/out & job=$!
    while [ ! -e /tmp/irs/started ]; do sleep 0.01; done
    sleep "$(awk "BEGIN { print $REMOVE_AFTER_MS / 1000 }")"
    before=$(/usr/bin/date +%s%N)
    atoll --json remove irs --cpus 1
    echo "removed_real_ns=$(/usr/bin/date +%s%N) asked_real_ns=$before"
    wait $job
    cat /tmp/irs/out
    atoll add irs --cpus 1 > /dev/null
done
atoll destroy irs > /dev/null
section "done"
