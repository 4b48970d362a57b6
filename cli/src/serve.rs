//! Serving a running program: worker threads wait in IOC_CALL for its
//! delegated system calls, perform them in this process and hand the results
//! back with their next IOC_CALL, until the program ends. A delegated call
//! blocks only the LWK thread that made it (a read of the terminal can take
//! forever), so one worker must always be waiting: a worker that takes a
//! call while no other is idle starts another first.

pub mod call_stats;
pub mod descriptors;
pub mod kept_files;
pub mod messages;
pub mod names;
pub mod passthrough;
pub mod perform;
pub mod policy;
pub mod proc_paths;
pub mod signals;
pub mod status;
pub mod system_files;

use crate::device::Device;
use crate::error::os_error;
use atoll_abi::syscalls::How;
use atoll_abi::{
    Call, CALL_EXEC, CALL_FILE_NAME, CALL_FORK, CALL_KEPT_FILE, CALL_SYSCALL, CALL_TEXT_FILE, CALL_UNSUPPORTED,
    EVENT_CALL, EVENT_CRASHED, EVENT_EXITED, MAX_SLOTS,
};
use messages::Messages;
use perform::Perform;
use std::collections::HashSet;
use std::io;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

/// How a forked child gets its server (area, LWK pid, the module's adopt
/// token, the descriptors kept for the parent's write-back) -> its `atoll
/// run`'s Linux pid or -errno.
pub type ForkServer = fn(u32, u32, u64, &[RawFd]) -> i64;

/// Set by `atoll run` (unset, fork fails with ENOSYS).
pub static FORK: OnceLock<ForkServer> = OnceLock::new();

/// One worker per LWK thread that can wait at once, and one more idle.
pub const MAX_WORKERS: usize = MAX_SLOTS + 2;

/// A worker does little besides one system call at a time.
const WORKER_STACK: usize = 256 * 1024;

/// What the workers need from /dev/atoll (a trait so the tests can play the
/// module's part).
pub trait Module: Send + Sync + 'static {
    fn call(&self, call: &mut Call) -> io::Result<()>;
    fn kill(&self, signal: i32) -> io::Result<()>;
}

impl Module for Device {
    fn call(&self, call: &mut Call) -> io::Result<()> {
        Device::call(self, call)
    }

    fn kill(&self, signal: i32) -> io::Result<()> {
        Device::kill(self, signal)
    }
}

/// How serving ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    /// The program ended with this wait(2) status.
    Exited(u32),
    /// The LWK crashed; the program is gone.
    Crashed,
    /// IOC_CALL failed or said something unexpected.
    Failed(String),
}

pub struct Server<M: Module, P: Perform> {
    module: M,
    performer: P,
    messages: Messages,
    /// --strict: end the program at its first unsupported system call.
    strict: bool,
    /// Unsupported system calls already reported.
    reported: Mutex<HashSet<u64>>,
    strict_kill_sent: AtomicBool,
    idle: AtomicUsize,
    workers: AtomicUsize,
    end: Mutex<Option<End>>,
    ended: Condvar,
}

impl<M: Module, P: Perform> Server<M, P> {
    pub fn new(module: M, performer: P, messages: Messages, strict: bool) -> Arc<Self> {
        Arc::new(Server {
            module,
            performer,
            messages,
            strict,
            reported: Mutex::new(HashSet::new()),
            strict_kill_sent: AtomicBool::new(false),
            idle: AtomicUsize::new(0),
            workers: AtomicUsize::new(0),
            end: Mutex::new(None),
            ended: Condvar::new(),
        })
    }

    /// Starts the first worker; it starts the others as calls come in.
    pub fn start(self: &Arc<Self>) -> io::Result<()> {
        self.add_worker()
    }

    /// How serving ended, once it has; None if `timeout` passed first.
    pub fn wait(&self, timeout: Duration) -> Option<End> {
        let end = self.end.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (end, _) =
            self.ended.wait_timeout_while(end, timeout, |end| end.is_none()).unwrap_or_else(|p| p.into_inner());
        end.clone()
    }

    /// Ends the program as if by `signal`.
    pub fn kill(&self, signal: i32) -> io::Result<()> {
        self.module.kill(signal)
    }

    pub fn messages(&self) -> &Messages {
        &self.messages
    }

    /// Worker threads started so far.
    #[cfg(test)]
    pub fn workers(&self) -> usize {
        self.workers.load(Ordering::SeqCst)
    }

    fn add_worker(self: &Arc<Self>) -> io::Result<()> {
        if self.workers.fetch_add(1, Ordering::SeqCst) >= MAX_WORKERS {
            self.workers.fetch_sub(1, Ordering::SeqCst);
            return Ok(());
        }
        let server = Arc::clone(self);
        let spawned =
            std::thread::Builder::new().name("atoll-call".into()).stack_size(WORKER_STACK).spawn(move || server.work());
        spawned.map(drop).inspect_err(|_| {
            self.workers.fetch_sub(1, Ordering::SeqCst);
        })
    }

    fn finish(&self, how: End) {
        let mut end = self.end.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        end.get_or_insert(how);
        self.ended.notify_all();
    }

    /// One worker: hand back the last result and wait for the next call,
    /// until the program ends.
    fn work(self: Arc<Self>) {
        let mut call = Call::new();
        call.done_slot = -1;
        loop {
            self.idle.fetch_add(1, Ordering::SeqCst);
            let waited = self.next_event(&mut call);
            let idle_before = self.idle.fetch_sub(1, Ordering::SeqCst);
            if let Err(e) = waited {
                return self
                    .finish(End::Failed(format!("waiting for the program's system calls failed: {}", os_error(&e))));
            }
            match call.event {
                EVENT_CALL => {
                    if idle_before == 1 {
                        // No other worker is waiting: start one before this
                        // call perhaps blocks. Without one, calls just wait
                        // for a worker to come back.
                        let _ = self.add_worker();
                    }
                    if self.strict && call.kind == CALL_UNSUPPORTED && self.ends_strictly(call.nr) {
                        return;
                    }
                    call.done_ret = self.handle(&call);
                    call.done_slot = call.slot as i32;
                }
                EVENT_EXITED => return self.finish(End::Exited(call.wait_status)),
                EVENT_CRASHED => return self.finish(End::Crashed),
                other => return self.finish(End::Failed(format!("the module sent an unknown event ({other})"))),
            }
        }
    }

    /// IOC_CALL, again after a signal: the module cleared done_slot if it
    /// had delivered the result already, so nothing is delivered twice.
    fn next_event(&self, call: &mut Call) -> io::Result<()> {
        loop {
            match self.module.call(call) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => return other,
            }
        }
    }

    /// The result of one delegated call: a value or -errno.
    fn handle(&self, call: &Call) -> i64 {
        match call.kind {
            CALL_SYSCALL => call_stats::timed(call.nr, || self.performer.perform(call.nr, call.args)),
            CALL_UNSUPPORTED => {
                self.unsupported(call.nr);
                -(libc::ENOSYS as i64)
            }
            CALL_EXEC => self.performer.exec(call.args),
            CALL_KEPT_FILE => self.performer.kept_file(call.nr, call.args),
            CALL_FILE_NAME => self.performer.file_name(call.args),
            CALL_TEXT_FILE => self.performer.text_file(call.nr, call.args),
            CALL_FORK => match FORK.get() {
                Some(fork) => {
                    fork(call.args[0] as u32, call.args[1] as u32, call.args[2], &self.performer.kept_snapshot())
                }
                None => -(libc::ENOSYS as i64),
            },
            _ => -(libc::ENOSYS as i64),
        }
    }

    /// --strict: the program ends at this unsupported call, which is not
    /// answered meanwhile (a fast answer let it run on before the kill
    /// landed); true once it has ended. Answered after 5 s if it has not.
    fn ends_strictly(&self, nr: u64) -> bool {
        self.unsupported(nr);
        self.strict_kill_sent.load(Ordering::SeqCst) && self.wait(Duration::from_secs(5)).is_some()
    }

    /// Says once per number that the program made a system call the LWK
    /// does not support; with --strict, ends the program with SIGSYS.
    fn unsupported(&self, nr: u64) {
        if !self.reported.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(nr) {
            return;
        }
        let what = match names::name(nr) {
            Some(name) => format!("system call {nr} ({name})"),
            None => format!("system call {nr}"),
        };
        if !self.strict {
            let line = match atoll_abi::syscalls::how(nr) {
                Some(How::Refused(why)) => {
                    format!("atoll run: {what} is refused in the enclave ({why}): it returned ENOSYS")
                }
                _ => format!("atoll run: {what} is not supported in the enclave: it returned ENOSYS"),
            };
            self.messages.line(&line);
            return;
        }
        self.messages
            .line(&format!("atoll run: {what} is not supported in the enclave: ending the program (--strict)"));
        if !self.strict_kill_sent.swap(true, Ordering::SeqCst) {
            if let Err(e) = self.module.kill(libc::SIGSYS) {
                self.messages.line(&format!("atoll run: cannot end the program: {}", os_error(&e)));
            }
        }
    }
}

#[cfg(test)]
mod tests;
