"""Pinning the test VM's vCPU threads on this machine's host CPUs for the
benchmark drivers: measured vCPUs each get a host CPU of their own, every
other QEMU thread and the driver share the rest, so the host's scheduling
does not pose as guest noise."""
import os
import time


def split_host_cpus():
    """(alone, shared): the last host CPU for the measured vCPU, the rest for
    everything else, this driver and QEMU's other threads included."""
    host_cpus = sorted(os.sched_getaffinity(0))
    if len(host_cpus) < 2:
        print("enclave_bench: one host CPU only; noise figures include host scheduling")
        return None
    alone, shared = {host_cpus[-1]}, set(host_cpus[:-1])
    os.sched_setaffinity(0, shared)
    return alone, shared


def pin_vcpus(proc, measured, alone, shared, stop):
    """Measured vCPU threads one per host CPU, every other QEMU thread shared."""
    if alone is None:
        return
    owner = {f"CPU {cpu}/TCG": {host} for cpu, host in zip(measured, alone)}
    seen = set()
    while not stop.is_set() and proc.poll() is None:
        try:
            tids = os.listdir(f"/proc/{proc.pid}/task")
        except FileNotFoundError:
            return
        for tid in tids:
            if tid in seen:
                continue
            try:
                with open(f"/proc/{proc.pid}/task/{tid}/comm") as f:
                    name = f.read().strip()
                os.sched_setaffinity(int(tid), owner.get(name, set(shared)))
                seen.add(tid)
            except (FileNotFoundError, ProcessLookupError):
                pass
        time.sleep(0.2)
