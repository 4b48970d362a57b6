# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The enclave benchmarks, run inside the test VM by bench/enclave_bench.py.
# Prints sections "=== <name>" with JSON or key=value lines after each.
# Needs /extra/{hotplug,pipe_rtt}; ROUNDS comes from the driver.
set -e
section() { echo "=== $1"; }
BLOCK_BYTES=$((128 << 20))

for _ in $(seq "$ROUNDS"); do
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

section "done"
