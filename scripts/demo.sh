# make demo, inside the test VM: an enclave on two CPUs taken from the
# running Linux runs the LWK's self-tests; then it is destroyed and Linux
# has every CPU and byte back.
show() { echo; echo "# $*"; "$@"; }
show cat /sys/devices/system/cpu/online
show grep MemTotal /proc/meminfo
show atoll create --cpus 2 --mem 256M --name demo --cmdline selftest || exit 1
until atoll console demo | grep -q "passed, [0-9]* failed"; do sleep 0.5; done
show atoll list
show cat /sys/devices/system/cpu/online
show atoll console demo
show atoll ping demo --count 3
show atoll destroy demo
show cat /sys/devices/system/cpu/online
show grep MemTotal /proc/meminfo
