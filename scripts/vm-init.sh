#!/bin/busybox sh
# /init of the Atoll test VM (scripts/vm.py builds it into the initramfs).
# Sets up a minimal system, loads /atoll.ko if present, runs /run.sh and
# reports its exit status on the console as "ATOLL-VM-EXIT: N" for the host.

/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/ TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp

finish() {
    echo "ATOLL-VM-EXIT: $1"
    sync
    poweroff -f
    # poweroff -f only returns if the reboot syscall failed: force it.
    echo o >/proc/sysrq-trigger
    sleep 60
}

# Boot ran at loglevel=4 (errors only) to keep the console quiet; from here
# on warnings show too, so a WARN() or oops from the module is seen live.
echo 5 >/proc/sys/kernel/printk

if [ -e /atoll.ko ]; then
    if ! insmod /atoll.ko; then
        echo "ATOLL-VM: insmod /atoll.ko failed; the script was not run"
        finish 99
    fi
fi

echo "ATOLL-VM: script starts"
cd /
/bin/sh /run.sh </dev/null
finish $?
