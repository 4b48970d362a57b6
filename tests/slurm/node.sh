# shellcheck shell=sh  # no shebang: test_slurm.py puts it into its guest scripts (busybox sh)
# A Slurm cluster in the test VM (sourced by tests/test_slurm.py): Debian's
# munged, slurmctld and slurmd (the host's /usr, shared into the VM),
# configured under /tmp/slurm, with the Atoll SPANK plugin at $SPANK_ATOLL
# and a user alice (uid 1001). CPU 0 is the system's (CpuSpecList): jobs get
# CPUs 1-3, which enclaves may take.
# One node (NODES unset): the VM has no network, so the loopback carries a
# second address (Slurm wants one that is not 127.x).
# Two nodes (NODES=2, NODE=1 or 2): two VMs on a QEMU network (eth0,
# 10.0.3.NODE), one munge key from /extra/munge.key; node 1 runs slurmctld
# too. Exports SLURM_CONF; defines as_alice.
NODES=${NODES:-1}
ip link set lo up
if [ "$NODES" = 1 ]; then
    me=atollvm ctld=atollvm nodelist=atollvm
    ip addr add 10.0.2.15/24 dev lo
    hosts="10.0.2.15 atollvm"
else
    # shellcheck disable=SC2153  # NODE: test_slurm.py's, not a misspelt NODES
    me=atoll$NODE ctld=atoll1 nodelist="atoll[1-2]"
    ip link set eth0 up && ip addr add "10.0.3.$NODE/24" dev eth0 || exit 89
    hosts="10.0.3.1 atoll1
10.0.3.2 atoll2"
fi
hostname "$me"
cp /etc/hosts /tmp/hosts && echo "$hosts" >> /tmp/hosts && mount --bind /tmp/hosts /etc/hosts
cp /etc/passwd /tmp/passwd; cp /etc/group /tmp/group
echo 'alice:x:1001:1001:Alice:/tmp:/bin/sh' >> /tmp/passwd
echo 'alice:x:1001:' >> /tmp/group
mount --bind /tmp/passwd /etc/passwd && mount --bind /tmp/group /etc/group || exit 90
# slurmd needs cgroup v2 with a system.slice (systemd would make one).
mount -t cgroup2 none /sys/fs/cgroup && mkdir -p /sys/fs/cgroup/system.slice &&
    echo "+cpu +cpuset +memory +pids" > /sys/fs/cgroup/cgroup.subtree_control || exit 91
mkdir -p /tmp/slurm/ctld /tmp/slurm/d /run/munge
if [ -e /extra/munge.key ]; then
    cp /extra/munge.key /tmp/munge.key
else
    dd if=/dev/urandom of=/tmp/munge.key bs=1024 count=1 2>/dev/null
fi
chmod 400 /tmp/munge.key
/usr/sbin/munged --force --key-file=/tmp/munge.key --socket=/run/munge/munge.socket.2 \
    --pid-file=/tmp/munged.pid --log-file=/tmp/munged.log --seed-file=/tmp/munged.seed || exit 92
cat > /tmp/slurm/slurm.conf <<CONF
ClusterName=atoll
SlurmctldHost=$ctld
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/tmp/slurm/ctld
SlurmdSpoolDir=/tmp/slurm/d
SlurmctldPidFile=/tmp/slurm/slurmctld.pid
SlurmdPidFile=/tmp/slurm/slurmd.pid
SlurmctldLogFile=/tmp/slurm/ctld.log
SlurmdLogFile=/tmp/slurm/d.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
PlugStackConfig=/tmp/slurm/plugstack.conf
MessageTimeout=60
NodeName=$nodelist CPUs=4 CpuSpecList=0 State=UNKNOWN
PartitionName=debug Nodes=$nodelist Default=YES MaxTime=INFINITE State=UP
CONF
printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\n' > /tmp/slurm/cgroup.conf
echo "required $SPANK_ATOLL atoll=/bin/atoll" > /tmp/slurm/plugstack.conf
export SLURM_CONF=/tmp/slurm/slurm.conf
as_alice() { /usr/bin/setpriv --reuid=1001 --regid=1001 --init-groups env SLURM_CONF=$SLURM_CONF "$@"; }
[ "${NODE:-1}" = 1 ] && { /usr/sbin/slurmctld || { cat /tmp/slurm/ctld.log; exit 93; }; }
/usr/sbin/slurmd || { cat /tmp/slurm/d.log; exit 94; }
# Node 1 waits for every node to be idle (a node 2 asks nothing of Slurm).
if [ "${NODE:-1}" = 1 ]; then
    idle() { [ "$(sinfo -h -N -o %T 2>/dev/null | grep -c idle)" = "$NODES" ]; }
    for _ in $(seq 240); do idle && break; sleep 0.5; done
    idle || { echo "the nodes did not come up"; sinfo -N; tail /tmp/slurm/*.log; exit 95; }
fi
