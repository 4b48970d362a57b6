"""Jobs through Slurm (issue 17): a real one-node cluster in the test VM
(Debian's slurmctld, slurmd and munged) with the Atoll SPANK plugin
(slurm/spank_atoll.c). `srun --atoll-cpus --atoll-mem` runs the job's tasks
in an enclave owned by the job's user, with the program's output and exit
status; the enclave is gone when the step ends, also on scancel, with every
CPU and byte back with Linux; sbatch scripts' srun steps do the same; a job
without the options runs on Linux as before."""
import os
import socket
import subprocess
import threading

import pytest

from conftest import ROOT


def build_plugin(extra):
    """The SPANK plugin into extra (the VM's /extra); node.sh's text."""
    extra.mkdir()
    res = subprocess.run(["make", "-s", "slurm", f"SLURM_OUT={extra}"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    with open(os.path.join(ROOT, "tests", "slurm", "node.sh")) as f:
        return f.read()


def test_srun_sbatch_and_scancel(vm, tmp_path):
    extra = tmp_path / "extra"
    node = build_plugin(extra)
    out = vm("SPANK_ATOLL=/extra/spank_atoll.so\n" + node + r'''
online() { cat /sys/devices/system/cpu/online; }
mem() { grep MemTotal /proc/meminfo; }
before="$(online) $(mem)"
echo "== a job without the options"
as_alice srun -n1 /usr/bin/cat /sys/devices/system/cpu/online | sed 's/^/PLAIN /'
echo "== in an enclave"
as_alice srun -n1 --atoll-cpus=1 --atoll-mem=128M /usr/bin/cat /sys/devices/system/cpu/online | sed 's/^/ENCLAVE /'
as_alice srun -n2 --atoll-cpus=2 --atoll-mem=256M /usr/bin/id -un | sed 's/^/TASK /'
as_alice srun -n1 --atoll-cpus=1 --atoll-mem=128M /usr/bin/dash -c 'exit 3'; echo "STATUS $?"
as_alice srun -n1 --atoll-cpus=2 /usr/bin/true; echo "HALF: $?"
as_alice srun -n1 --atoll-cpus=2 --atoll-mem=256M /usr/bin/echo SHOULD-NOT-RUN; echo "MORE THAN ALLOCATED: $?"
echo "AFTER: $(atoll list)"
echo "== scancel"
for i in $(seq 120); do [ -z "$(squeue -h)" ] && atoll list | grep -q '^no enclaves' && break; sleep 0.5; done
as_alice srun -n1 -c2 --atoll-cpus=2 --atoll-mem=256M /usr/bin/sleep 60 > /dev/null 2>&1 &
for i in $(seq 120); do atoll list | grep -q '^[0-9].*slurm.* running ' && break; sleep 0.5; done
atoll list | sed -n 's/^[0-9]* *\(slurm[0-9.]*\) *running *\([^ ]*\) .*/RUNNING \1 \2/p'
scancel -u alice
for i in $(seq 60); do atoll list | grep -q '^no enclaves' && break; sleep 0.5; done
wait
echo "CANCELLED: $(atoll list)"
echo "== sbatch"
cat > /tmp/job.sh <<'JOB'
#!/bin/sh
#SBATCH -n 2
#SBATCH --atoll-cpus=2
#SBATCH --atoll-mem=256M
#SBATCH --output=/tmp/job.out
echo "script on Linux: $(cat /sys/devices/system/cpu/online)"
srun -n1 -c2 /usr/bin/cat /sys/devices/system/cpu/online
srun -n1 --atoll-cpus=1 --atoll-mem=128M /usr/bin/cat /sys/devices/system/cpu/online
JOB
chmod 755 /tmp/job.sh; chown 1001:1001 /tmp/job.sh
cd /tmp && as_alice sbatch /tmp/job.sh
for i in $(seq 120); do [ -z "$(squeue -h)" ] && break; sleep 0.5; done
sed 's/^/BATCH /' /tmp/job.out
echo "END $(atoll list)"
[ "$(online) $(mem)" = "$before" ] && echo "ALL BACK"
''', extra_dir=str(extra), timeout=400)
    o = out.output
    assert out.status == 0, o
    assert "PLAIN 0-3" in o, o
    # the program sees its enclave's one CPU (on Linux it would see 0-3)
    assert "ENCLAVE 0\n" in o, o
    assert o.count("TASK alice") == 2, o
    assert "STATUS 3" in o, o
    assert "give both --atoll-cpus and --atoll-mem" in o and "HALF: 1" in o, o
    # an enclave takes only CPUs Slurm gave the step: the launch fails (srun
    # 22.05 reports it, yet exits 0) and the program does not run
    assert "task 0 launch failed: Plugin initialization failed" in o and "SHOULD-NOT-RUN" not in o, o
    assert "AFTER: no enclaves" in o, o
    assert "RUNNING slurm" in o and " alice" in o, o
    assert "CANCELLED: no enclaves" in o, o
    assert "BATCH script on Linux: 0-3" in o and "BATCH 0-1" in o and "BATCH 0\n" in o, o
    assert "END no enclaves" in o and "ALL BACK" in o, o


def free_udp_ports(n):
    socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


# Both nodes' state at the start, and a check that it is so again.
STATE = r'''
state() { echo "$(cat /sys/devices/system/cpu/online) $(grep MemTotal /proc/meminfo)"; }
before="$(state)"
all_back() {
    for i in $(seq 60); do atoll list | grep -q '^no enclaves' && break; sleep 0.5; done
    echo "$1 END $(atoll list)"
    [ "$(state)" = "$before" ] && echo "$1 ALL BACK"
}
'''

NODE1 = r'''
echo "== both nodes, without the options"
as_alice srun -N2 -n2 /usr/bin/dash -c 'echo "PLAIN $(uname -n) sees CPUs $(cat /sys/devices/system/cpu/online)"'
echo "== both nodes, in an enclave each"
as_alice srun -N2 -n2 --atoll-cpus=1 --atoll-mem=128M \
    /usr/bin/dash -c 'echo "ENCLAVE $(uname -n) sees CPUs $(cat /sys/devices/system/cpu/online)"'
echo "== scancel"
# The last step's enclaves go in its epilog: wait until they and the job are gone.
for i in $(seq 120); do [ -z "$(squeue -h)" ] && atoll list | grep -q '^no enclaves' && break; sleep 0.5; done
as_alice srun -N2 -n2 -c2 --atoll-cpus=2 --atoll-mem=256M /usr/bin/sleep 60 > /tmp/scancel.out 2>&1 &
for i in $(seq 240); do atoll list | grep -q '^[0-9].*slurm.* running ' && break; sleep 0.5; done
atoll list | sed -n 's/^[0-9]* *\(slurm[0-9.]*\) *running *\([^ ]*\) .*/RUNNING \1 \2/p'
scancel -u alice
wait
sed "s/^/SCANCEL-SRUN /" /tmp/scancel.out
all_back NODE1
# Node 2 waits for this word, not for Slurm (its slurmctld is about to go).
for i in $(seq 20); do echo done | busybox nc 10.0.3.2 7000 && break; sleep 1; done
'''

NODE2 = r'''
busybox nc -l -p 7000 > /tmp/done
grep -q done /tmp/done || exit 96
all_back NODE2
'''


@pytest.mark.long
def test_two_nodes_on_a_qemu_network(tmp_path):
    """Two VMs on one QEMU network (UDP on the loopback), node 1 with
    slurmctld: srun -N2 runs a task on each node, in an enclave on each with
    the options, and scancel leaves neither node an enclave; both nodes get
    every CPU and byte back."""
    import vm as vm_tool  # scripts/vm.py

    extra = tmp_path / "extra"
    node = build_plugin(extra)
    (extra / "munge.key").write_bytes(os.urandom(1024))
    ports = free_udp_ports(2)
    results = {}

    def boot(n, body):
        script = tmp_path / f"node{n}.sh"
        script.write_text(f"SPANK_ATOLL=/extra/spank_atoll.so NODES=2 NODE={n}\n" + node + STATE + body)
        net = [
            "-netdev", f"socket,id=n0,udp=127.0.0.1:{ports[2 - n]},localaddr=127.0.0.1:{ports[n - 1]}",
            "-device", f"virtio-net-pci,netdev=n0,mac=52:54:00:12:34:0{n}",
        ]
        results[n] = vm_tool.run_vm(str(script), extra_dir=str(extra), timeout=600, echo=False,
                                    qemu_args=net)

    threads = [threading.Thread(target=boot, args=(n, body)) for n, body in [(1, NODE1), (2, NODE2)]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    one, two = results[1].output, results[2].output
    assert results[1].status == 0, one + "\n--- node 2 ---\n" + two
    assert results[2].status == 0, two
    assert "PLAIN atoll1 sees CPUs 0-3" in one and "PLAIN atoll2 sees CPUs 0-3" in one, one
    # each task sees its node's one-CPU enclave
    assert "ENCLAVE atoll1 sees CPUs 0\n" in one and "ENCLAVE atoll2 sees CPUs 0\n" in one, one
    assert "RUNNING slurm" in one and " alice" in one, one
    assert "NODE1 END no enclaves" in one and "NODE1 ALL BACK" in one, one
    assert "NODE2 END no enclaves" in two and "NODE2 ALL BACK" in two, two
