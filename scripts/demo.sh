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
# gradient solve, bench/programs/cg.c, OpenMP) on CPUs 1-3, first as Linux's
# CPUs, then as an enclave's under `atoll run`. It times itself.
[ -x /extra/cg ] || { echo "(no /extra/cg: scripts/build-programs.sh DIR bench, then --extra DIR)"; exit 0; }
echo; echo "# taskset -c 1-3 /extra/cg 128 100 3      (on Linux)"
taskset -c 1-3 /extra/cg 128 100 3 | tee /tmp/linux.out
show atoll create --cpus 1-3 --mem 256M --name hpc || exit 1
show atoll run hpc -- /extra/cg 128 100 3 | tee /tmp/enclave.out
# Two programs at once in the enclave, sharing its cores, as `atoll status` lists them.
echo; echo "# atoll run hpc --cpus 0-0 -- /extra/spin_rate 2 &   (twice, both on LWK CPU 0)"
atoll run hpc --cpus 0-0 -- /extra/spin_rate 2 & atoll run hpc --cpus 0-0 -- /extra/spin_rate 2 &
sleep 1
show atoll status hpc
wait
show atoll destroy hpc
mean() { sed -n 's/^cg: best=.* mean=\([0-9.]*\) .*/\1/p' "$1"; }
relres() { sed -n 's/^cg: best=.* relres=\([^ ]*\) .*/\1/p' "$1"; }
[ -n "$(mean /tmp/enclave.out)" ] || { echo "atoll run did not finish the solve"; exit 1; }
echo
awk -v l="$(mean /tmp/linux.out)" -v e="$(mean /tmp/enclave.out)" 'BEGIN {
    printf "CG solve on 3 CPUs, mean of 3: Linux %.1f ms, enclave %.1f ms (enclave / Linux %.2fx)\n", l * 1000, e * 1000, e / l }'
if [ "$(relres /tmp/linux.out)" = "$(relres /tmp/enclave.out)" ]; then
    echo "same residual on both, bit for bit: $(relres /tmp/linux.out)"
else
    echo "the residuals differ: Linux $(relres /tmp/linux.out), enclave $(relres /tmp/enclave.out)"
    exit 1
fi

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
cat /tmp/analytics.out | sed 's/^/INSITU /'
show atoll destroy insitu
