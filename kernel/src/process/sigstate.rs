//! Signal numbers and the state signals leave in a process and its
//! threads: siginfo, the pending sets and the dispositions (signal.rs sends
//! and delivers). A standard signal is pending at most once, as on Linux;
//! real-time signals are not queued beyond one each either (documented).

use alloc::boxed::Box;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::sync::SpinLock;

pub const SIGILL: u32 = 4;
pub const SIGTRAP: u32 = 5;
pub const SIGBUS: u32 = 7;
pub const SIGFPE: u32 = 8;
pub const SIGKILL: u32 = 9;
pub const SIGSEGV: u32 = 11;
pub const SIGALRM: u32 = 14;
pub const SIGCHLD: u32 = 17;
pub const SIGCONT: u32 = 18;
pub const SIGSTOP: u32 = 19;
const SIGTSTP: u32 = 20;
const SIGTTIN: u32 = 21;
const SIGTTOU: u32 = 22;
const SIGURG: u32 = 23;
const SIGWINCH: u32 = 28;

/// Signals no mask can hold back.
pub const UNBLOCKABLE: u64 = bit(SIGKILL) | bit(SIGSTOP);

pub const SI_USER: i32 = 0;
pub const SI_KERNEL: i32 = 0x80;
pub const SI_TKILL: i32 = -6;
pub const SI_TIMER: i32 = -2;

pub const SIG_DFL: u64 = 0;
pub const SIG_IGN: u64 = 1;

pub const fn bit(sig: u32) -> u64 {
    1 << (sig - 1)
}

/// What a handler learns about its signal (struct siginfo's fields).
#[derive(Clone, Copy, Default, Debug)]
pub struct SigInfo {
    pub signo: u32,
    pub code: i32,
    /// Sender's pid and uid (kill, tkill, sigqueue).
    pub pid: u32,
    pub uid: u32,
    /// The faulting address (SIGSEGV, SIGBUS, SIGILL, SIGFPE).
    pub addr: Option<u64>,
    /// Timers: the timer id, overrun count and value.
    pub timer: Option<(u32, u32, u64)>,
}

impl SigInfo {
    pub fn user(signo: u32, code: i32, pid: u32) -> SigInfo {
        SigInfo { signo, code, pid, ..Default::default() }
    }

    pub fn kernel(signo: u32) -> SigInfo {
        SigInfo { signo, code: SI_KERNEL, ..Default::default() }
    }

    /// struct siginfo (128 bytes) as Linux lays it out for x86-64.
    pub fn to_bytes(self) -> [u8; 128] {
        let mut b = [0u8; 128];
        b[0..4].copy_from_slice(&self.signo.to_le_bytes());
        b[8..12].copy_from_slice(&self.code.to_le_bytes());
        if let Some(addr) = self.addr {
            b[16..24].copy_from_slice(&addr.to_le_bytes());
        } else if let Some((id, overrun, value)) = self.timer {
            b[16..20].copy_from_slice(&id.to_le_bytes());
            b[20..24].copy_from_slice(&overrun.to_le_bytes());
            b[24..32].copy_from_slice(&value.to_le_bytes());
        } else {
            b[16..20].copy_from_slice(&self.pid.to_le_bytes());
            b[20..24].copy_from_slice(&self.uid.to_le_bytes());
        }
        b
    }
}

/// Signals waiting for delivery, one each. The set can be read without
/// the lock (every return to user mode looks at it). The details are
/// made with the first signal: most threads never get one, and a new
/// thread (the HRT API makes many) should not build 3 KiB of them.
pub struct Pending {
    set: AtomicU64,
    info: SpinLock<Option<Box<[SigInfo; 64]>>>,
}

impl Pending {
    pub const fn new() -> Self {
        Pending { set: AtomicU64::new(0), info: SpinLock::new(None) }
    }

    pub fn set(&self) -> u64 {
        self.set.load(Ordering::Acquire)
    }

    pub(super) fn add(&self, info: SigInfo) {
        let b = bit(info.signo);
        let mut all = self.info.lock();
        if self.set() & b == 0 {
            let all = all.get_or_insert_with(|| Box::new([SigInfo::default(); 64]));
            all[info.signo as usize - 1] = info;
            self.set.fetch_or(b, Ordering::AcqRel);
        }
    }

    /// The lowest-numbered pending signal in `allowed`, taken out.
    pub fn take(&self, allowed: u64) -> Option<SigInfo> {
        if self.set() & allowed == 0 {
            return None;
        }
        let all = self.info.lock();
        let ready = self.set() & allowed;
        if ready == 0 {
            return None;
        }
        let i = ready.trailing_zeros() as usize;
        self.set.fetch_and(!(1 << i), Ordering::AcqRel);
        // A bit is set only once the details are there.
        all.as_ref().map(|all| all[i])
    }
}

/// A process's dispositions: struct sigaction per signal (handler, flags,
/// restorer, mask).
pub struct Actions(pub [[u64; 4]; 65]);

impl Actions {
    pub const fn new() -> Self {
        Actions([[0; 4]; 65])
    }
}

/// What a signal does when it arrives with its default action.
pub fn default_ignores(sig: u32) -> bool {
    // No job control: the stop signals are ignored (documented).
    matches!(sig, SIGCHLD | SIGCONT | SIGURG | SIGWINCH | SIGSTOP | SIGTSTP | SIGTTIN | SIGTTOU)
}
