"""Jobs through Slurm (issue 17): a real one-node cluster in the test VM
(Debian's slurmctld, slurmd and munged) with the Atoll SPANK plugin
(slurm/spank_atoll.c). `srun --atoll-cpus --atoll-mem` runs the job's tasks
in an enclave owned by the job's user, with the program's output and exit
status; the enclave is gone when the step ends, also on scancel, with every
CPU and byte back with Linux; sbatch scripts' srun steps do the same; a job
without the options runs on Linux as before."""
import os
import subprocess

from conftest import ROOT


def test_srun_sbatch_and_scancel(vm, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    res = subprocess.run(["make", "-s", "slurm", f"SLURM_OUT={extra}"], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    with open(os.path.join(ROOT, "tests", "slurm", "node.sh")) as f:
        node = f.read()
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
as_alice srun -n1 -c2 --atoll-cpus=2 --atoll-mem=256M /usr/bin/sleep 60 > /dev/null 2>&1 &
for i in $(seq 60); do atoll list | grep -q '^[0-9].*slurm' && break; sleep 0.5; done
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
