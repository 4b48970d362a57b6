"""Dynamically linked programs in an enclave (issue 13): Debian's own
ld.so, libc, libstdc++ and libgomp, file mappings and dlopen, against the
same programs on Linux: the same output, line for line
(tests/programs/hello.c, filemap.c, dlopen.c, plugin.c, procpaths.c,
procmaps.c, openmp_cpp.cpp)."""
import re


def test_dynamic_programs_match_linux(vm, programs):
    res = vm(r'''
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
run_both() {  # name, command...: the output on Linux and in the enclave
    name=$1; shift
    "$@" > /tmp/$name.linux 2>&1; echo "$name LINUX_STATUS $?"
    atoll run e -- "$@" > /tmp/$name.enclave 2>&1; echo "$name ENCLAVE_STATUS $?"
    cat /tmp/$name.enclave
    diff /tmp/$name.linux /tmp/$name.enclave > /dev/null && echo "$name SAME"
}
mkdir -p /tmp/files
run_both filemap /extra/dyn-filemap /tmp/files
run_both dlopen /extra/dyn-dlopen /extra/libplugin.so
run_both procpaths /extra/dyn-procpaths /tmp/files/procpaths.data
run_both procmaps /extra/dyn-procmaps
run_both procmaps-static /extra/procmaps
run_both openmp /extra/dyn-openmp-cpp
run_both ls /usr/bin/ls /extra
atoll run e -- /extra/dyn-hello
atoll run e -- /usr/bin/lstopo-no-graphics --of console | grep -E "NUMANode|PU L"
atoll status e | grep '^lwk memory'
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    for name in ["filemap", "dlopen", "procpaths", "procmaps", "procmaps-static", "openmp", "ls"]:
        assert f"{name} LINUX_STATUS 0" in out and f"{name} ENCLAVE_STATUS 0" in out, out
        assert f"{name} SAME" in out, out
    for line in ["private, whole file: same bytes yes, zero past the end yes",
                 "write to a private mapping: mapping changed yes, file changed no",
                 "fixed over another: at the hint yes, bytes from offset 2 pages yes, neighbours kept yes",
                 "shared write, every other descriptor closed: file has it yes",
                 "shared write, replaced by MAP_FIXED: file has it yes",
                 "shared write through an O_APPEND descriptor: file has it yes, size kept yes",
                 "a pipe: ENODEV", "plugin: loaded, answer 42",
                 "/proc/self/exe is the program: yes", "reopened through /proc/<getpid()>/fd: yes",
                 "/proc/<getpid()>/exe is the program: yes",
                 "get_nprocs and /proc/cpuinfo count the CPUs it may use: yes", "libm: loaded, cos(0) = 1.0",
                 "/proc/meminfo and node 0 tell sysinfo's memory: yes",
                 "every line in Linux's format, in order: yes", "code: r-x, named by the program's file: yes",
                 "heap: in [heap]: yes", "stack: in [stack], rw-: yes", "vDSO: in [vdso]: yes",
                 "private file mapping: r--p at 00001000, named, device and inode: yes",
                 "shared file mapping: rw-s, named: yes", "PROT_NONE page: its own ---p line: yes",
                 "dynamic: libc and the loader named: yes",
                 "pthread_getattr_np: the main stack holds a local: yes",
                 "/proc/<getpid()>/maps: the same mappings: yes", "openat2: the same first line: yes",
                 "/proc/<child>/maps: its code named, the range it unmapped gone: yes",
                 "reduction: 499500000", "exception: thrown and caught",
                 "team as large as the CPUs: yes", "hello from /extra/dyn-hello (glibc, dynamic)"]:
        assert line in out, out
    assert "not supported in the enclave" not in out, out
    # hwloc sees the enclave: its two CPUs, and one NUMA node of its memory.
    assert len(re.findall(r"PU L#\d", out)) == 2, out
    node_mb = int(re.search(r"NUMANode L#0 \(P#0 (\d+)MB\)", out).group(1))
    lwk_mib = float(re.search(r"^lwk memory: [\d.]+ of ([\d.]+) MiB free", out, re.M).group(1))
    assert abs(node_mb - lwk_mib) <= 1, out


def test_shared_file_mappings_between_processes(vm, programs):
    # Two programs in one enclave take 2000 turns on a word of a POSIX
    # shared-memory object (one set of enclave frames), as MPI ranks do;
    # a forked child's writes to a shared mapping reach its parent; System
    # V segments behave as on Linux; every frame comes back.
    res = vm(r'''
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
free_before=$(atoll status e | grep '^lwk memory')
/extra/sysv_shm > /tmp/sysv.linux 2>&1; echo "sysv linux: $?"
atoll run e -- /extra/sysv_shm > /tmp/sysv.enclave 2>&1; echo "sysv enclave: $?"
cat /tmp/sysv.enclave
diff /tmp/sysv.linux /tmp/sysv.enclave > /dev/null && echo SYSV_SAME
atoll run e -- /extra/shm_pingpong /atoll-test first 2000 &
atoll run e -- /extra/shm_pingpong /atoll-test second 2000; echo "second: $?"
wait $!; echo "first: $?"
mkdir -p /tmp/files
atoll run e -- /extra/shm_pingpong fork /tmp/files; echo "fork: $?"
ls /dev/shm | grep -c atoll-test | sed 's/^/left in \/dev\/shm: /'
[ "$free_before" = "$(atoll status e | grep '^lwk memory')" ] && echo MEMORY_BACK
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert "pingpong: 2000 rounds, last word 4000" in out, out
    assert "second: 0" in out and "first: 0" in out and "fork: 0" in out, out
    assert ('fork: the parent sees "written by the child"; a second mapping of the file '
            'sees "parent" and "written by the child"') in out, out
    assert "process_vm_readv: 21 bytes: read across processes" in out, out
    assert "left in /dev/shm: 0" in out, out
    assert "sysv linux: 0" in out and "sysv enclave: 0" in out and "SYSV_SAME" in out, out
    assert "by key: found again yes, IPC_EXCL EEXIST, larger EINVAL, missing key ENOENT" in out, out
    assert "attached after IPC_RMID: yes" in out, out
    assert "MEMORY_BACK" in out, out


def test_process_vm_copies_between_many_processes(vm, programs):
    # Four processes on two enclave cores read and write each other's
    # memory 3000 times each way, preempted mid-copy. Regression: the LWK
    # once released the two address-space locks in the wrong order, and
    # this hung the enclave on the first run.
    res = vm(r'''
atoll create --cpus 2 --mem 256M --name e > /dev/null || exit 9
mkdir -p /tmp/files
for i in 1 2 3; do
    timeout 120 atoll run e -- /extra/cma_stress 4 3000 /tmp/files; echo "status: $?"
done
echo "after: $(atoll status e | grep '^state') $(atoll status e | grep '^programs')"
atoll destroy e > /dev/null || exit 10
''', extra_dir=str(programs), timeout=300)
    assert res.status == 0, res.output
    out = res.output
    assert out.count("cma: 4 processes, 3000 copies each way, all right: yes") == 3, out
    assert out.count("status: 0") == 3 and "after: state: running programs: none" in out, out
