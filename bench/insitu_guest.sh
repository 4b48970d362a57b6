# shellcheck shell=sh  # no shebang: the driver puts its variables first; busybox sh runs it
# The in-situ workflow benchmark, run inside the test VM by
# bench/insitu_bench.py: a Jacobi simulation (insitu_sim) on guest CPU ONE,
# alone and with its analytics (insitu_analytics) and a compile load on
# Linux's CPUs OTHERS, first on Linux and then in a one-CPU enclave on ONE;
# the snapshots through a signalled XEMEM segment or a pipe. Then the
# attach of an ATTACH_BYTES segment against copying it, both ways, and
# signal round trips against the control channel's (atoll ping), enclave
# to Linux and enclave to enclave.
# Prints "=== <case>" sections with the programs' output.
# From the driver: ONE, OTHERS, N, STEPS, EVERY, RUNS, ATTACH_BYTES, PINGS.
section() { echo "=== $1"; }
fail() { echo "insitu_guest: $*"; exit 1; }
LOAD=""
compile_load() {  # a parallel compile: gcc -O2 in a loop on each of Linux's other CPUs
    for c in $OTHERS; do
        taskset -c "$c" sh -c 'while :; do gcc -O2 -c -I /extra /extra/insitu_sim.c -o /tmp/load.$$.o 2>/dev/null; done' &
        LOAD="$LOAD $!"
    done
}
# shellcheck disable=SC2086  # LOAD: a list of pids
quiet() { for p in $LOAD; do pkill -P "$p" 2>/dev/null; kill "$p" 2>/dev/null; done; wait $LOAD 2>/dev/null; LOAD=""; }
ANALYTICS="taskset -c $(echo "$OTHERS" | tr ' ' ,) /extra/insitu_analytics"
# Each run: the simulation alone, then with the load through XEMEM and
# through a pipe; interleaved, so that a drift of the host's speed hits
# all three alike.
runs() {  # side, sim prefix
    for r in $(seq "$RUNS"); do
        section "$1_alone"
        $2 /extra/insitu_sim alone "$N" "$STEPS" "$EVERY" || fail "$1: sim failed"
        compile_load
        section "$1_xemem_busy"
        $ANALYTICS xemem "insitu$1$r" & a=$!
        $2 /extra/insitu_sim xemem "$N" "$STEPS" "$EVERY" "insitu$1$r" || fail "$1: sim failed"
        wait $a || fail "$1: analytics failed"
        section "$1_pipe_busy"
        $2 /extra/insitu_sim pipe "$N" "$STEPS" "$EVERY" | $ANALYTICS pipe "$N" || fail "$1: pipe failed"
        quiet
    done
}
mkdir -p /tmp/x

runs linux "taskset -c $ONE"
section create
atoll create --cpus "$ONE-$ONE" --mem 1280M --name sim > /dev/null || fail "atoll create failed"
runs enclave "atoll run sim --"

section attach_into_enclave   # Linux's segment attached by an enclave program
/extra/xemem_attach make "$ATTACH_BYTES" big1 /tmp/x & m=$!
atoll run sim -- /extra/xemem_attach time "$ATTACH_BYTES" big1 /tmp/x || fail "attach into the enclave failed"
wait $m
section attach_into_linux     # an enclave program's segment attached on Linux
atoll run sim -- /extra/xemem_attach make "$ATTACH_BYTES" big2 /tmp/x & m=$!
/extra/xemem_attach time "$ATTACH_BYTES" big2 /tmp/x || fail "attach on Linux failed"
wait $m

section signal_enclave_linux
# Linux's side on CPU 0, where the LWK's interrupts arrive (boot.c's host_apic_id).
taskset -c 0 /extra/xemem_check pingpong sig "$PINGS" /tmp/x second > /dev/null & s=$!
atoll run sim -- /extra/xemem_check pingpong sig "$PINGS" /tmp/x first || fail "pingpong failed"
wait $s
section control_ping
atoll --json ping sim --count "$PINGS" | tr -d '\n '; echo
# Between two enclaves: the simulation's and a second one on Linux's
# first other CPU, against their LWKs' own round trip (atoll ping --from).
PEER_CPU=${OTHERS%% *}
atoll create --cpus "$PEER_CPU-$PEER_CPU" --mem 128M --name peer > /dev/null || fail "atoll create peer failed"
section signal_enclave_enclave
atoll run peer -- /extra/xemem_check pingpong sig2 "$PINGS" /tmp/x second > /dev/null & s=$!
atoll run sim -- /extra/xemem_check pingpong sig2 "$PINGS" /tmp/x first || fail "pingpong between enclaves failed"
wait $s
section peer_ping
atoll --json ping peer --from sim --count "$PINGS" | tr -d '\n '; echo
atoll destroy peer > /dev/null || fail "atoll destroy peer failed"
atoll destroy sim > /dev/null || fail "atoll destroy failed"
section "done"
