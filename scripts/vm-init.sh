#!/bin/busybox sh
# shellcheck shell=dash  # busybox ash: the closest shell shellcheck knows
# /init of the Atoll test VM (scripts/vm.py builds it into the initramfs).
# Sets up a minimal system with Debian's userland (the host's /usr and /etc,
# read-only over 9p), loads /atoll.ko and then the test module /atoll_test.ko
# (the message checks and benchmarks) if present, runs /run.sh and reports
# its exit status on the console as "ATOLL-VM-EXIT: N" for the host. On a
# kernel with kmemleak (`make test-kdebug`'s) it reports the run's leaks.

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mkdir -p /dev/shm /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t devpts devpts /dev/pts
chmod 1777 /tmp

# kmemleak reports an object only once it is 5 s old and unreferenced in
# two scans in a row (the first notes its contents).
KMEMLEAK=/sys/kernel/debug/kmemleak

# Before the script: the objects of Linux's boot are scanned once (scans
# of a 4 GiB guest are slow under TCG), what that reports is set aside, so
# that the scans after the script report what the run leaked (and any leak
# of the boot that one scan could not tell yet).
kmemleak_baseline() {
    [ -e $KMEMLEAK ] || return 0
    echo scan >$KMEMLEAK
    n=$(grep -c "^unreferenced object" $KMEMLEAK)
    echo clear >$KMEMLEAK
    [ "$n" -eq 0 ] || echo "ATOLL-VM: kmemleak: $n leaks of Linux's boot set aside"
}

# After it: the kernel's count of new leaks ("kmemleak: N new suspected
# memory leaks", a complaint for scripts/kernel_complaints.py) and each
# leak's report go to the console as kernel lines.
kmemleak_report() {
    [ -e $KMEMLEAK ] || return 0
    echo 7 >/proc/sys/kernel/printk  # the count is printed at KERN_INFO
    echo on >/proc/sys/kernel/printk_devkmsg  # no rate limit on the report
    sleep 5
    echo scan >$KMEMLEAK
    echo scan >$KMEMLEAK
    head -n 400 $KMEMLEAK | while IFS= read -r line; do
        echo "kmemleak: $line" >/dev/kmsg
    done
    echo 6 >/proc/sys/kernel/printk
}

finish() {
    kmemleak_report
    echo "ATOLL-VM-EXIT: $1"
    sync
    poweroff -f
    # poweroff -f only returns if the reboot syscall failed: force it.
    echo o >/proc/sysrq-trigger
    sleep 60
}

# Debian's userland: scripts/vm.py shares the host's /usr and /etc. Debian's
# kernel has virtio and 9p as modules (vm.py puts them in /lib/vm-modules);
# a kernel given with vm.py --kernel has them built in.
if [ -d /lib/vm-modules ]; then
    for m in /lib/vm-modules/*.ko; do
        insmod "$m" || echo "ATOLL-VM: insmod $m failed"
    done
fi
if grep -qw 9p /proc/filesystems; then
    for tag in usr etc; do
        mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose "$tag" "/$tag" ||
            echo "ATOLL-VM: mounting the host's /$tag failed"
    done
fi
ifconfig lo 127.0.0.1 up
hostname atoll-vm

# Boot ran at loglevel=4 (errors only) to keep the console quiet; from here
# on warnings show too, so a WARN() or oops from the module is seen live
# (scripts/kernel_complaints.py fails the run on one).
echo 5 >/proc/sys/kernel/printk

mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
kmemleak_baseline
echo "ATOLL-VM: Linux booted"

if [ -e /atoll.ko ]; then
    if ! insmod /atoll.ko; then
        echo "ATOLL-VM: insmod /atoll.ko failed; the script was not run"
        finish 99
    fi
fi
if [ -e /atoll_test.ko ]; then
    if ! insmod /atoll_test.ko; then
        echo "ATOLL-VM: insmod /atoll_test.ko failed; the script was not run"
        finish 99
    fi
fi
# Notices too once the module is in (not its taint notices): the module's
# notice that an enclave is up tells vm.py never to repeat the run.
echo 6 >/proc/sys/kernel/printk

echo "ATOLL-VM: script starts"
cd /
/bin/sh /run.sh </dev/null
finish $?
