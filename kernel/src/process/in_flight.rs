//! A program's delegated calls in flight, and the frames that wait for
//! them to end before they go back (the calls themselves are
//! call_slots.rs's).

use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::mm::vm;
use crate::sync::SpinLock;

/// A program's delegated calls in flight, by ticket, and the frames it
/// unmapped while some of them ran: `atoll run` performs a call through its
/// mirror of the program's memory, which may still map those frames until
/// the call ends (the next call's pickup zaps the mirror first). So they
/// go back to the LWK only once every call that started before they were
/// unmapped has ended, never while a worker may still write them. The
/// calls of vfork children running on the memory count too.
pub struct InFlight {
    next: AtomicU64,
    /// Tickets of the calls in flight and their callers' pids (a few: one
    /// per waiting thread; the vector keeps its room, so a call allocates
    /// nothing once warm).
    live: SpinLock<Vec<(u64, u32)>>,
    /// Frames unmapped, and the ticket no call before which may still run.
    parked: SpinLock<Vec<(vm::Freed, u64)>>,
}

impl InFlight {
    pub const fn new() -> Self {
        InFlight {
            next: AtomicU64::new(0),
            live: SpinLock::new(Vec::new()),
            parked: SpinLock::new(Vec::new()),
        }
    }

    /// No delegated call of the program is in flight.
    pub fn idle(&self) -> bool {
        self.live.lock().is_empty()
    }

    /// No delegated call of process `pid` is in flight.
    pub fn idle_of(&self, pid: u32) -> bool {
        !self.live.lock().iter().any(|&(_, caller)| caller == pid)
    }

    pub(super) fn begin(&self, pid: u32) -> u64 {
        let mut live = self.live.lock();
        let ticket = self.next.fetch_add(1, Ordering::AcqRel);
        live.push((ticket, pid));
        ticket
    }

    /// The call ended: frames no earlier call may write go back.
    pub(super) fn end(&self, ticket: u64) {
        self.end_where(|(t, _)| t == ticket);
    }

    /// A vfork child that ran on this memory was freed (its mirror is
    /// gone): the calls it left unfinished hold nothing back any more.
    pub fn forget_caller(&self, pid: u32) {
        self.end_where(|(_, caller)| caller == pid);
    }

    fn end_where(&self, ended: impl Fn((u64, u32)) -> bool) {
        let oldest = {
            let mut live = self.live.lock();
            live.retain(|&call| !ended(call));
            live.iter().map(|&(t, _)| t).min().unwrap_or(u64::MAX)
        };
        let ready: Vec<vm::Freed> = {
            let mut parked = self.parked.lock();
            let (ready, wait) = parked.drain(..).partition(|(_, upto)| *upto <= oldest);
            *parked = wait;
            ready.into_iter().map(|(freed, _)| freed).collect()
        };
        drop(ready);
    }

    /// Frees `freed` (unmapped, shot down, the mirror told) now, or once
    /// the calls in flight have ended.
    pub fn free_after_calls(&self, freed: vm::Freed) {
        let live = self.live.lock();
        let upto = self.next.load(Ordering::Acquire);
        if live.iter().any(|&(t, _)| t < upto) {
            self.parked.lock().push((freed, upto));
            return;
        }
        drop(live);
        drop(freed);
    }

    /// A new image (execve): calls its ended threads left behind no longer
    /// hold its memory back (the old image's frames go with the old image).
    pub fn forget_live(&self) {
        self.live.lock().clear();
    }

    /// The program's memory goes: so do the frames kept for its calls.
    pub fn free_parked(&self) {
        let parked = core::mem::take(&mut *self.parked.lock());
        drop(parked);
    }
}
