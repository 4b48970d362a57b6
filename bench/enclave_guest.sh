# The enclave benchmarks, run inside the test VM by bench/enclave_bench.py.
# Prints sections "=== <name>" with JSON or key=value lines after each.
# Needs /extra/{selfish,hotplug,pipe_rtt}; NOISE_SECONDS, NOISE_THRESHOLD_NS,
# ROUNDS and PARTS come from the driver.
set -e
section() { echo "=== $1"; }
BLOCK_BYTES=$((128 << 20))

if [ "$PARTS" != noise ]; then
    for i in $(seq "$ROUNDS"); do
        section create
        atoll --json create --cpus 3-3 --mem 128M --name t5
        start=$(atoll --json status t5 | sed -n 's/.*"start":\([0-9]*\).*/\1/p')
        section destroy
        atoll --json destroy t5
        section linux_cpu
        /extra/hotplug cpu 3
        section linux_mem
        /extra/hotplug mem $((start / BLOCK_BYTES))
    done

    # Same topology for both: a Linux process on CPU 1 and whatever runs CPU 3.
    section pipe
    /extra/pipe_rtt 1 3 2000
    atoll create --cpus 3-3 --mem 128M --name rtt > /dev/null
    section ping
    taskset -c 1 atoll --json ping rtt --count 200
    atoll destroy rtt > /dev/null
fi

busy_on() { for c in "$@"; do taskset -c "$c" sh -c 'while :; do :; done' & done; }
busy_off() { kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; }

section noise_linux_idle
/extra/selfish 3 "$NOISE_SECONDS" "$NOISE_THRESHOLD_NS"
section noise_linux_busy
busy_on 0 1 2 3
/extra/selfish 3 "$NOISE_SECONDS" "$NOISE_THRESHOLD_NS"
busy_off

for load in idle busy; do
    [ $load = busy ] && busy_on 0 1 2
    atoll create --cpus 3-3 --mem 128M --name noise --kernel /lib/atoll/atoll-kernel-test --cmdline "noise=$NOISE_SECONDS noise_threshold=$NOISE_THRESHOLD_NS" > /dev/null
    until atoll console noise | grep -q "^noise: end"; do sleep 0.5; done
    section noise_lwk_$load
    atoll console noise | sed -n '/^noise: os=/,/^noise: end/p'
    atoll destroy noise > /dev/null
    [ $load = busy ] && busy_off
done
section done
