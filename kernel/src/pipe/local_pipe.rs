//! A pipe whose ends are all held by programs of this enclave: its bytes
//! stay in the LWK, and a read or write waits here, not on Linux. Linux's
//! own pipe, made with it, holds the descriptor numbers; once anything
//! needs Linux to see the pipe (poll, epoll, a /proc path, ...), the bytes
//! waiting move there and every call on it is Linux's from then on
//! (`begin_move`, `moved`). An `OpenEnd` is one open description of an
//! end: dup'ed and inherited descriptors share it, and its last one closing
//! closes that end.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use lwk_logic::errno::{Errno, EAGAIN, EPIPE, ERESTARTSYS};
use lwk_logic::pipe::{End, PipeBuffer, Read, Write};

use crate::sync::{SpinLock, WaitQueue};

/// Bytes all local pipes may hold together, at most this share of the
/// kernel heap they live in; a pipe that would pass it stays Linux's.
const HEAP_SHARE: usize = 4;
/// Capacity of the local pipes that exist.
static HELD: AtomicUsize = AtomicUsize::new(0);

/// Where the pipe's bytes are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Home {
    Lwk,
    /// Being written into Linux's pipe: calls wait until they are there.
    Moving,
    Linux,
}

struct State {
    buffer: PipeBuffer,
    home: Home,
}

pub struct LocalPipe {
    state: SpinLock<State>,
    /// Its share of HELD (given back when it moves to Linux).
    reserved: AtomicUsize,
    /// Readers waiting for bytes, writers for room (or the pipe's move).
    readers: WaitQueue,
    writers: WaitQueue,
}

/// One open description of one end of a local pipe.
pub struct OpenEnd {
    pub pipe: Arc<LocalPipe>,
    pub end: End,
    nonblock: AtomicBool,
}

/// A call on a pipe: done here, or Linux's to do (the pipe moved there).
pub enum Outcome<T> {
    Done(Result<T, Errno>),
    Linux,
}

impl LocalPipe {
    /// A pipe holding up to `capacity` bytes (Linux's pipe's), and its read
    /// and write ends (O_NONBLOCK if `nonblock`); None if the local pipes
    /// would hold more than their share of the heap.
    pub fn make(capacity: usize, nonblock: bool) -> Option<(Arc<OpenEnd>, Arc<OpenEnd>)> {
        let (used, free) = hal::heap::usage();
        let budget = (used + free) / HEAP_SHARE;
        HELD.fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
            (held + capacity <= budget).then_some(held + capacity)
        })
        .ok()?;
        let pipe = Arc::new(LocalPipe {
            state: SpinLock::new(State { buffer: PipeBuffer::new(capacity), home: Home::Lwk }),
            reserved: AtomicUsize::new(capacity),
            readers: WaitQueue::new(),
            writers: WaitQueue::new(),
        });
        let end = |end| {
            Arc::new(OpenEnd { pipe: pipe.clone(), end, nonblock: AtomicBool::new(nonblock) })
        };
        Some((end(End::Read), end(End::Write)))
    }

    /// True once calls on it are Linux's (its bytes are in Linux's pipe).
    pub fn on_linux(&self) -> bool {
        self.state.lock().home == Home::Linux
    }

    /// True while some pipe keeps its bytes in the LWK.
    pub fn any_local() -> bool {
        HELD.load(Ordering::Acquire) != 0
    }

    /// Up to `max` bytes (at least 1); empty at end of file. Waits for
    /// bytes unless `nonblock`, until `interrupted()`.
    pub fn read(
        &self,
        max: usize,
        nonblock: bool,
        interrupted: impl Fn() -> bool,
    ) -> Outcome<Vec<u8>> {
        loop {
            match self.while_local(|b| b.read(max)) {
                None => match self.after_move(&self.readers, &interrupted) {
                    Some(outcome) => return outcome,
                    None => continue,
                },
                Some(Read::Bytes(b)) => {
                    self.writers.wake_all(true);
                    return Outcome::Done(Ok(b));
                }
                Some(Read::EndOfFile) => return Outcome::Done(Ok(Vec::new())),
                Some(Read::Empty) if nonblock => return Outcome::Done(Err(EAGAIN)),
                Some(Read::Empty) => {
                    if let Err(e) = self.wait(&self.readers, PipeBuffer::readable, &interrupted) {
                        return Outcome::Done(Err(e));
                    }
                }
            }
        }
    }

    /// Puts bytes a read took back in front (copying them out failed),
    /// unless the pipe moved to Linux meanwhile: then they are lost, as
    /// the read's EFAULT says.
    pub fn unread(&self, bytes: &[u8]) {
        let mut s = self.state.lock();
        if s.home == Home::Lwk {
            s.buffer.unread(bytes);
        }
    }

    /// Writes some of `data`, the rest of a call writing `total` bytes in
    /// all; returns how many. Waits for room unless `nonblock`, until
    /// `interrupted()`. EPIPE with no reader left (the caller sends SIGPIPE).
    pub fn write(
        &self,
        data: &[u8],
        total: usize,
        nonblock: bool,
        interrupted: impl Fn() -> bool,
    ) -> Outcome<usize> {
        loop {
            match self.while_local(|b| b.write(data, total)) {
                None => match self.after_move(&self.writers, &interrupted) {
                    Some(outcome) => return outcome,
                    None => continue,
                },
                Some(Write::Took(n)) => {
                    self.readers.wake_all(true);
                    return Outcome::Done(Ok(n));
                }
                Some(Write::Broken) => return Outcome::Done(Err(EPIPE)),
                Some(Write::Full) if nonblock => return Outcome::Done(Err(EAGAIN)),
                Some(Write::Full) => {
                    let room = |b: &PipeBuffer| b.writable(data.len(), total);
                    if let Err(e) = self.wait(&self.writers, room, &interrupted) {
                        return Outcome::Done(Err(e));
                    }
                }
            }
        }
    }

    /// `f` on the bytes while the pipe is the LWK's; None once it is
    /// leaving or has left.
    fn while_local<R>(&self, f: impl FnOnce(&mut PipeBuffer) -> R) -> Option<R> {
        let mut s = self.state.lock();
        (s.home == Home::Lwk).then(|| f(&mut s.buffer))
    }

    /// Sleeps on `queue` until `ready` holds of the bytes, the pipe starts
    /// leaving, or `interrupted()` (ERESTARTSYS).
    fn wait(
        &self,
        queue: &WaitQueue,
        ready: impl Fn(&PipeBuffer) -> bool,
        interrupted: &impl Fn() -> bool,
    ) -> Result<(), Errno> {
        let done = || {
            let s = self.state.lock();
            s.home != Home::Lwk || ready(&s.buffer) || interrupted()
        };
        queue.wait_until_deadline(done, None);
        if interrupted() {
            Err(ERESTARTSYS)
        } else {
            Ok(())
        }
    }

    /// The pipe is leaving the LWK: once its bytes are in Linux's pipe, the
    /// call is Linux's. None if the move failed (the call looks again).
    fn after_move<T>(
        &self,
        queue: &WaitQueue,
        interrupted: &impl Fn() -> bool,
    ) -> Option<Outcome<T>> {
        let settled = || self.state.lock().home != Home::Moving || interrupted();
        queue.wait_until_deadline(settled, None);
        match self.state.lock().home {
            Home::Linux => Some(Outcome::Linux),
            Home::Moving => Some(Outcome::Done(Err(ERESTARTSYS))),
            Home::Lwk => None,
        }
    }

    /// Starts moving the pipe to Linux: the bytes waiting, which the caller
    /// writes into Linux's pipe, then calls `moved` (or `stay`). None if it
    /// is Linux's already (once another mover is done).
    pub fn begin_move(&self, interrupted: impl Fn() -> bool) -> Option<Vec<u8>> {
        {
            let mut s = self.state.lock();
            if s.home == Home::Lwk {
                s.home = Home::Moving;
                return Some(s.buffer.take_all());
            }
        }
        let _ = self.after_move::<()>(&self.readers, &interrupted);
        None
    }

    /// The move failed: `bytes` (all `begin_move` took) are back, and the
    /// pipe is the LWK's again.
    pub fn stay(&self, bytes: &[u8]) {
        {
            let mut s = self.state.lock();
            s.buffer.unread(bytes);
            s.home = Home::Lwk;
        }
        self.readers.wake_all(true);
        self.writers.wake_all(true);
    }

    /// The bytes are in Linux's pipe: every call waiting goes there.
    pub fn moved(&self) {
        {
            let mut s = self.state.lock();
            s.home = Home::Linux;
            s.buffer.release();
        }
        HELD.fetch_sub(self.reserved.swap(0, Ordering::AcqRel), Ordering::AcqRel);
        self.readers.wake_all(true);
        self.writers.wake_all(true);
    }
}

impl OpenEnd {
    pub fn nonblock(&self) -> bool {
        self.nonblock.load(Ordering::Relaxed)
    }

    /// fcntl(F_SETFL) changed O_NONBLOCK (on Linux's description too).
    pub fn set_nonblock(&self, on: bool) {
        self.nonblock.store(on, Ordering::Relaxed);
    }
}

impl Drop for LocalPipe {
    fn drop(&mut self) {
        HELD.fetch_sub(self.reserved.swap(0, Ordering::AcqRel), Ordering::AcqRel);
    }
}

impl Drop for OpenEnd {
    /// The description's last descriptor closed: readers may see the end
    /// of file, writers a broken pipe.
    fn drop(&mut self) {
        self.pipe.state.lock().buffer.close(self.end);
        self.pipe.readers.wake_all(true);
        self.pipe.writers.wake_all(true);
    }
}
