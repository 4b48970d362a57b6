//! The machine as a program sees it: uname, sysinfo, getrandom, prlimit64,
//! getcpu, sched_yield, sched_getaffinity, sched_setaffinity.

use core::sync::atomic::{AtomicU64, Ordering};

use lwk_logic::errno::*;

use super::call::Call;
use crate::mm::uaccess;
use crate::sched;
use hal::cpu;

const RLIMIT_STACK: u64 = 3;
const RLIMIT_NOFILE: u64 = 7;
const RLIM_INFINITY: u64 = u64::MAX;

/// Linux's host name (a program on this node is on Linux's node: MPI
/// finds its local ranks by it); the LWK's release and version.
pub fn uname(c: &mut Call) -> SysResult {
    let nodename = c.process.area.nodename();
    let len = nodename.iter().position(|&b| b == 0).unwrap_or(nodename.len());
    let fields = [
        alloc::string::String::from("Linux"),
        alloc::string::String::from_utf8_lossy(&nodename[..len]).into_owned(),
        "6.1.0-atoll".into(),
        "#1 SMP Atoll LWK".into(),
        "x86_64".into(),
        "(none)".into(),
    ];
    let mut buf = [0u8; 65 * 6];
    for (i, f) in fields.iter().enumerate() {
        let n = f.len().min(64);
        buf[65 * i..65 * i + n].copy_from_slice(&f.as_bytes()[..n]);
    }
    uaccess::write_bytes(c.process, c.args[0], &buf).map(|()| 0)
}

/// sysinfo: the enclave's memory and uptime, not Linux's (a program sizes
/// itself by it). struct sysinfo on x86-64 is 112 bytes.
pub fn sysinfo(c: &mut Call) -> SysResult {
    const PAGE: u64 = 4096;
    let (free, total) = hal::mem::frame_counts();
    let uptime_s = crate::process::Process::monotonic_ns() / 1_000_000_000;
    let mut info = [0u8; 112];
    let mut put = |at: usize, bytes: &[u8]| info[at..at + bytes.len()].copy_from_slice(bytes);
    put(0, &uptime_s.to_le_bytes()); // uptime; loads (8..32) stay 0: no load average
    put(32, &(total * PAGE).to_le_bytes()); // totalram
    put(40, &(free * PAGE).to_le_bytes()); // freeram
    put(80, &1u16.to_le_bytes()); // procs: the program
    put(104, &1u32.to_le_bytes()); // mem_unit: bytes
    uaccess::write_bytes(c.process, c.args[0], &info).map(|()| 0)
}

static RANDOM_STATE: AtomicU64 = AtomicU64::new(0x9e37_79b9_7f4a_7c15);

/// SplitMix64 over a shared counter stirred with the TSC: unpredictable
/// enough for hash seeds and malloc cookies, not for keys.
fn next_random() -> u64 {
    let mut z = RANDOM_STATE.fetch_add(0x9e37_79b9_7f4a_7c15 ^ cpu::rdtsc(), Ordering::Relaxed);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

pub fn getrandom(c: &mut Call) -> SysResult {
    let [buf, len, ..] = c.args;
    let len = len.min(1 << 20) as usize;
    let mut bytes = alloc::vec![0u8; len];
    for chunk in bytes.chunks_mut(8) {
        let r = next_random().to_le_bytes();
        chunk.copy_from_slice(&r[..chunk.len()]);
    }
    uaccess::write_bytes(c.process, buf, &bytes).map(|()| len as u64)
}

/// prlimit64(pid, resource, new, old): limits read as Linux's defaults;
/// setting them is accepted (nothing here enforces them).
pub fn prlimit64(c: &mut Call) -> SysResult {
    let [pid, resource, _new, old, ..] = c.args;
    if pid != 0 && pid as u32 != c.process.pid {
        return Err(ESRCH);
    }
    if resource >= 16 {
        return Err(EINVAL);
    }
    let limit = match resource {
        RLIMIT_STACK => [atoll_abi::STACK_SIZE, RLIM_INFINITY],
        RLIMIT_NOFILE => [1024, 4096],
        _ => [RLIM_INFINITY, RLIM_INFINITY],
    };
    if old != 0 {
        uaccess::write_words(c.process, old, &limit)?;
    }
    Ok(0)
}

pub fn getcpu(c: &mut Call) -> SysResult {
    let [cpu_at, node_at, ..] = c.args;
    let me = hal::cpu_index() as u32;
    if cpu_at != 0 {
        uaccess::write_u32(c.process, cpu_at, me)?;
    }
    if node_at != 0 {
        uaccess::write_u32(c.process, node_at, 0)?;
    }
    Ok(0)
}

pub fn sched_yield(_c: &mut Call) -> SysResult {
    sched::yield_now();
    Ok(0)
}

/// The program's cores as a CPU mask.
fn program_mask(c: &Call) -> u64 {
    c.process.cpu_mask()
}

fn targets_this_program(c: &Call, pid: u64) -> bool {
    pid == 0 || pid as u32 == c.process.pid || pid as u32 == c.user.tid
}

pub fn sched_getaffinity(c: &mut Call) -> SysResult {
    let [pid, len, mask, ..] = c.args;
    if !targets_this_program(c, pid) {
        return Err(ESRCH);
    }
    if len < 8 || len % 8 != 0 {
        return Err(EINVAL);
    }
    let cores = if pid == 0 || pid as u32 == c.user.tid {
        crate::process::cpus::allowed(c.user)
    } else {
        program_mask(c)
    };
    uaccess::write_u64(c.process, mask, cores).map(|()| 8)
}

/// The calling thread's cores: kept as its affinity (which follows the
/// enclave's resizes), and it moves to the first of them if its core is
/// not one (threads of other tids keep theirs).
pub fn sched_setaffinity(c: &mut Call) -> SysResult {
    let [pid, len, mask, ..] = c.args;
    if !targets_this_program(c, pid) {
        return Err(ESRCH);
    }
    if len < 8 {
        return Err(EINVAL);
    }
    let want = uaccess::read_u64(c.process, mask)? & program_mask(c);
    if want == 0 {
        return Err(EINVAL);
    }
    let here = c.thread.cpu();
    if pid == 0 || pid as u32 == c.user.tid {
        c.user.affinity.store(want, core::sync::atomic::Ordering::Release);
        if want & (1 << here) == 0 {
            sched::migrate_current(want.trailing_zeros() as usize);
        }
    }
    Ok(0)
}

const PR_SET_PDEATHSIG: u64 = 1;
const PR_GET_PDEATHSIG: u64 = 2;
const PR_GET_DUMPABLE: u64 = 3;
const PR_SET_DUMPABLE: u64 = 4;
const PR_SET_NAME: u64 = 15;
const PR_GET_NAME: u64 = 16;
const PR_SET_NO_NEW_PRIVS: u64 = 38;
const PR_GET_NO_NEW_PRIVS: u64 = 39;

/// prctl: the program's name (what `atoll status` shows) and the few
/// settings C libraries and shells make; anything else EINVAL.
pub fn prctl(c: &mut Call) -> SysResult {
    let [option, arg, ..] = c.args;
    match option {
        PR_SET_NAME => {
            let mut name = [0u8; atoll_abi::COMM_LEN];
            for (i, b) in name.iter_mut().enumerate().take(atoll_abi::COMM_LEN - 1) {
                let mut byte = [0u8];
                uaccess::read_bytes(c.process, arg + i as u64, &mut byte)?;
                if byte[0] == 0 {
                    break;
                }
                *b = byte[0];
            }
            c.process.area.set_comm(name);
            Ok(0)
        }
        PR_GET_NAME => uaccess::write_bytes(c.process, arg, &c.process.area.comm()).map(|()| 0),
        // Accepted, not acted on: no core dumps; no parent-death signal yet;
        // nothing here gains privileges (exec ignores set-user-ID bits).
        PR_SET_PDEATHSIG if arg <= 64 => Ok(0),
        PR_GET_PDEATHSIG => uaccess::write_u32(c.process, arg, 0).map(|()| 0),
        PR_SET_DUMPABLE if arg <= 1 => Ok(0),
        PR_GET_DUMPABLE => Ok(1),
        PR_SET_NO_NEW_PRIVS if arg == 1 => Ok(0),
        PR_GET_NO_NEW_PRIVS => Ok(0),
        _ => Err(EINVAL),
    }
}
