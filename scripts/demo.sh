# shellcheck shell=sh  # no shebang: the VM's busybox sh runs it as /run.sh
# make demo, inside the test VM: an enclave on two CPUs taken from the
# running Linux runs the LWK's self-tests; then it is destroyed and Linux
# has every CPU and byte back. Then an unmodified Linux program runs on
# Linux and in an enclave, OS noise on an enclave CPU and a Linux CPU, and
# last the in-situ workflow: a simulation in
# an enclave publishes its grid through XEMEM to an analytics program on
# Linux (needs scripts/build-programs.sh's bench build at /extra).
show() { echo; echo "# $*"; "$@"; }
show cat /sys/devices/system/cpu/online
show grep MemTotal /proc/meminfo
show atoll create --cpus 2 --mem 256M --name demo --kernel /lib/atoll/atoll-kernel-test --cmdline selftest || exit 1
until atoll console demo | grep -q "passed, [0-9]* failed"; do sleep 0.5; done
show atoll list
show cat /sys/devices/system/cpu/online
echo; echo "# atoll console demo      (without the self-tests' RUN/OK lines)"
atoll console demo | grep -v -E '^(\[ (RUN|  OK) |    cpu )'
show atoll ping demo --count 3
show atoll destroy demo
show cat /sys/devices/system/cpu/online
show grep MemTotal /proc/meminfo

# Last, an unmodified Linux program: the same static binary (a conjugate-
# gradient solve, bench/programs/cg.c, OpenMP) on CPUs 1-3, as Linux's CPUs
# (taskset) and as an enclave's (`atoll run`). One pair of runs says little
# on a shared host, so PAIRS pairs take turns (Linux first, then the enclave
# first, and so on, so that a drift hits both alike), each solve timing itself.
[ -x /extra/cg ] || { echo "(no /extra/cg: scripts/build-programs.sh DIR bench, then --extra DIR)"; exit 0; }
PAIRS=5
seconds() { sed -n 's/^cg: run=0 seconds=\([0-9.]*\) .*/\1/p' "$1"; }
relres() { sed -n 's/^cg: best=.* relres=\([^ ]*\) .*/\1/p' "$1"; }
on_linux() { taskset -c 1-3 /extra/cg 128 100 1 > /tmp/run.out; }
in_enclave() {
    atoll create --cpus 1-3 --mem 256M --name hpc > /dev/null || return 1
    atoll run hpc -- /extra/cg 128 100 1 > /tmp/run.out
    atoll destroy hpc > /dev/null
}
echo; echo "# $PAIRS pairs of CG solves on CPUs 1-3: taskset -c 1-3 /extra/cg 128 100 1 (Linux),"
echo "# then atoll create --cpus 1-3 hpc; atoll run hpc -- /extra/cg 128 100 1 (enclave)"
: > /tmp/linux.s; : > /tmp/enclave.s; : > /tmp/relres
for i in $(seq $PAIRS); do
    if [ $((i % 2)) = 1 ]; then order="on_linux in_enclave"; else order="in_enclave on_linux"; fi
    for side in $order; do
        $side || { echo "the $side solve failed:"; cat /tmp/run.out; exit 1; }
        [ -n "$(seconds /tmp/run.out)" ] || { echo "the $side solve did not finish:"; cat /tmp/run.out; exit 1; }
        seconds /tmp/run.out >> "/tmp/${side#*_}.s"
        relres /tmp/run.out >> /tmp/relres
    done
    awk -v i="$i" -v l="$(tail -1 /tmp/linux.s)" -v e="$(tail -1 /tmp/enclave.s)" \
        'BEGIN { printf "pair %d: Linux %.1f ms, enclave %.1f ms\n", i, l * 1000, e * 1000 }'
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
range() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.1f-%.1f", lo * 1000, hi * 1000 }'; }
paste /tmp/enclave.s /tmp/linux.s | awk '{ print $1 / $2 }' > /tmp/ratio.s
echo
awk -v l="$(median /tmp/linux.s)" -v e="$(median /tmp/enclave.s)" -v r="$(median /tmp/ratio.s)" \
    -v lr="$(range /tmp/linux.s)" -v er="$(range /tmp/enclave.s)" \
    -v lo="$(sort -n /tmp/ratio.s | head -1)" -v hi="$(sort -n /tmp/ratio.s | tail -1)" -v n=$PAIRS 'BEGIN {
    printf "CG solve on 3 CPUs, median of %d interleaved pairs: Linux %.1f ms (%s), enclave %.1f ms (%s)\n", n, l * 1000, lr, e * 1000, er
    printf "enclave / Linux per pair: median %.2fx, range %.2fx-%.2fx\n", r, lo, hi }'
if [ "$(sort -u /tmp/relres | wc -l)" = 1 ]; then
    echo "same residual in all $((2 * PAIRS)) solves, bit for bit: $(head -1 /tmp/relres)"
else
    echo "the residuals differ:"; sort /tmp/relres | uniq -c
    exit 1
fi

# Two programs at once in an enclave, sharing its cores, as `atoll status` lists them.
show atoll create --cpus 1-3 --mem 256M --name hpc || exit 1
echo; echo "# atoll run hpc --cpus 0-0 -- /extra/spin_rate 2 &   (twice, both on LWK CPU 0)"
atoll run hpc --cpus 0-0 -- /extra/spin_rate 2 & atoll run hpc --cpus 0-0 -- /extra/spin_rate 2 &
sleep 1
show atoll status hpc
wait
show atoll destroy hpc

# OS noise, as `atoll noise` measures it: the selfish-detour probe on an
# enclave's CPU (run by its LWK, which knows which detours it caused) and on
# Linux CPU 2 beside it (an untuned CPU with its tick). The plot leaves the VM
# base64-encoded on NOISESVG lines (scripts/run-demo.sh writes build/demo-noise.svg).
show atoll create --cpus 3-3 --mem 128M --name quiet || exit 1
echo; echo "# atoll noise --enclave quiet --linux-cpus 2 --seconds 3 --plot /tmp/noise.svg"
atoll noise --enclave quiet --linux-cpus 2 --seconds 3 --plot /tmp/noise.svg 2>/dev/null || exit 1
echo "NOISESVG $(base64 -w 0 /tmp/noise.svg)"
show atoll destroy quiet

# The in-situ workflow (XEMEM): a heat simulation (bench/programs/insitu_sim.c)
# in an enclave publishes its grid every 100 steps in a segment and signals
# the analytics' doorbell segment; the analytics on Linux reads each
# snapshot in place and prints its temperature histogram (make demo plots
# them: build/demo-insitu.png).
echo; echo "# the in-situ workflow: a simulation in enclave insitu, its analytics on Linux, the grids in an XEMEM segment"
show atoll create --cpus 3-3 --mem 256M --name insitu || exit 1
/extra/insitu_analytics xemem heat.grid print > /tmp/analytics.out &
atoll run insitu -- /extra/insitu_sim xemem 192 4000 100 heat.grid > /tmp/sim.out &
sleep 1
show atoll list --segments
wait
cat /tmp/sim.out
grep -c '^snapshot' /tmp/analytics.out | sed 's/^/snapshots analysed on Linux: /'
sed -n 's/^snapshot \([0-9]*\): sum=\([^ ]*\) .*/  snapshot \1: total heat \2/p' /tmp/analytics.out | awk 'NR % 10 == 1'
sed 's/^/INSITU /' /tmp/analytics.out
show atoll destroy insitu
