//! The events of the segments an LWK's programs made (signalled segments,
//! `atoll_abi.h` "XEMEM"): each one's count of signals and its waiters,
//! kept in the owner's kernel. Requests come from programs there, from the
//! host and from other enclaves' LWKs; another enclave is served only once
//! the host granted it the event, and a request that came before the
//! event's opening or its grant (both on the host's ring, which may be
//! read after another kernel's) waits for them. Answers go out through a
//! callback that says whether they could be sent.

use alloc::collections::{BTreeMap, BTreeSet, VecDeque};
use alloc::vec::Vec;
use atoll_abi::{XememEvent, XEMEM_CANCEL, XEMEM_SIGNAL, XEMEM_WAIT};

use crate::errno::{Errno, EIDRM, ENOENT, ETIMEDOUT};

/// Who asks: the kernel's caller says which need a grant.
pub trait Asker: Copy + Eq {
    /// Another enclave's id (served once granted), or None (the kernel's own
    /// programs and the host, which checked their users itself).
    fn enclave(&self) -> Option<u32>;
}

/// Sends an answer to request `id` of `asker`: its segid and 0 or an
/// error; false if it could not be sent.
pub trait Answer<A> {
    /// Sends it.
    fn answer(&mut self, asker: A, id: u64, segid: i64, result: Result<(), Errno>) -> bool;
}

impl<A, F: FnMut(A, u64, i64, Result<(), Errno>) -> bool> Answer<A> for F {
    fn answer(&mut self, asker: A, id: u64, segid: i64, result: Result<(), Errno>) -> bool {
        self(asker, id, segid, result)
    }
}

/// Requests kept for each asker before their event's opening or grant, at most.
pub const MAX_EARLY_EACH: usize = 64;

struct Event<A> {
    /// Signals not taken yet.
    count: u64,
    /// WAITs not answered yet, first come first served: (asker, request id).
    waiters: VecDeque<(A, u64)>,
}

impl<A: Copy> Event<A> {
    /// Gives waiting signals to waiters, first come first served. A waiter
    /// whose answer cannot be sent now (its kernel's ring is full) keeps
    /// its place and is tried again at the next signal or wait.
    fn hand_out(&mut self, segid: i64, out: &mut impl Answer<A>) {
        let mut i = 0;
        while self.count > 0 && i < self.waiters.len() {
            let (waiter, id) = self.waiters[i];
            if out.answer(waiter, id, segid, Ok(())) {
                self.waiters.remove(i);
                self.count -= 1;
            } else {
                i += 1;
            }
        }
    }
}

/// Every event of one kernel.
pub struct Events<A> {
    open: BTreeMap<i64, Event<A>>,
    /// The highest segid opened: the host opens events in segid order.
    highest: i64,
    /// (enclave, segid): that enclave's programs may use the event.
    granted: BTreeSet<(u32, i64)>,
    /// Requests that came before their event's opening or their grant.
    early: Vec<(A, XememEvent)>,
}

impl<A: Asker> Default for Events<A> {
    fn default() -> Self {
        Self::new()
    }
}

impl<A: Asker> Events<A> {
    /// No events.
    pub const fn new() -> Self {
        Events { open: BTreeMap::new(), highest: 0, granted: BTreeSet::new(), early: Vec::new() }
    }

    /// Signals taken by nobody yet, if the event is open.
    #[cfg(test)]
    pub(crate) fn count(&self, segid: i64) -> Option<u64> {
        self.open.get(&segid).map(|e| e.count)
    }

    /// SIGNAL (id 0: no answer), WAIT or CANCEL from `asker`.
    pub fn serve(&mut self, asker: A, ev: XememEvent, out: &mut impl Answer<A>) {
        if ev.op == XEMEM_CANCEL {
            return self.cancel(asker, ev, out);
        }
        let ready = self.allowed(asker, ev.segid);
        let Some(event) = self.open.get_mut(&ev.segid).filter(|_| ready) else {
            return self.early_or_refused(asker, ev, out);
        };
        match ev.op {
            XEMEM_SIGNAL => {
                event.count += 1;
                event.hand_out(ev.segid, out);
                if ev.id != 0 {
                    out.answer(asker, ev.id, ev.segid, Ok(()));
                }
            }
            XEMEM_WAIT => {
                event.waiters.push_back((asker, ev.id));
                event.hand_out(ev.segid, out);
            }
            _ => {
                out.answer(asker, ev.id, ev.segid, Err(crate::errno::EINVAL));
            }
        }
    }

    /// The host opens the event of a segment a program here made.
    pub fn open(&mut self, segid: i64, out: &mut impl Answer<A>) {
        self.open.entry(segid).or_insert(Event { count: 0, waiters: VecDeque::new() });
        self.highest = self.highest.max(segid);
        self.replay(|_, ev| ev.segid <= segid, out);
    }

    /// The host told a program of enclave `id` where segid's event is.
    pub fn grant(&mut self, id: u32, segid: i64, out: &mut impl Answer<A>) {
        if !self.open.contains_key(&segid) {
            return; // closed meanwhile (the host opens before it grants)
        }
        self.granted.insert((id, segid));
        self.replay(|a, ev| a.enclave() == Some(id) && ev.segid == segid, out);
    }

    /// The segment is gone: every wait on it ends with EIDRM.
    pub fn close(&mut self, segid: i64, out: &mut impl Answer<A>) {
        self.granted.retain(|&(_, s)| s != segid);
        if let Some(event) = self.open.remove(&segid) {
            for (waiter, id) in event.waiters {
                out.answer(waiter, id, segid, Err(EIDRM));
            }
        }
        self.replay(|_, ev| ev.segid == segid, out);
    }

    /// `asker` is gone (its enclave was destroyed): nothing of its stays.
    pub fn forget(&mut self, asker: A) {
        for event in self.open.values_mut() {
            event.waiters.retain(|&(a, _)| a != asker);
        }
        if let Some(id) = asker.enclave() {
            self.granted.retain(|&(kernel, _)| kernel != id);
        }
        self.early.retain(|&(a, _)| a != asker);
    }

    /// May `asker` use segid's event.
    fn allowed(&self, asker: A, segid: i64) -> bool {
        asker.enclave().is_none_or(|id| self.granted.contains(&(id, segid)))
    }

    /// A request for an event not open, or not granted to its asker: it
    /// waits for what is still coming on the host's ring (an opening for a
    /// segid above the highest, a grant for an open one), up to
    /// MAX_EARLY_EACH per asker; else ENOENT.
    fn early_or_refused(&mut self, asker: A, ev: XememEvent, out: &mut impl Answer<A>) {
        let coming = ev.segid > self.highest || self.open.contains_key(&ev.segid);
        let parked = self.early.iter().filter(|(a, _)| *a == asker).count();
        if coming && parked < MAX_EARLY_EACH {
            self.early.push((asker, ev));
        } else if ev.id != 0 {
            out.answer(asker, ev.id, ev.segid, Err(ENOENT));
        }
    }

    /// A WAIT not answered yet ends with ETIMEDOUT (also one parked
    /// early); one answered already took its event, and its answer is on
    /// the way.
    fn cancel(&mut self, asker: A, ev: XememEvent, out: &mut impl Answer<A>) {
        let id = ev.cancel;
        let is_it = |&w: &(A, u64)| w == (asker, id);
        let waiting = self.open.get_mut(&ev.segid).and_then(|e| take_where(&mut e.waiters, is_it));
        let found = waiting.is_some() || {
            let i = self.early.iter().position(|&(a, e)| a == asker && e.id == id);
            i.map(|i| self.early.swap_remove(i)).is_some()
        };
        if found {
            out.answer(asker, id, ev.segid, Err(ETIMEDOUT));
        }
    }

    /// Serves again the early requests `which` picks (some may wait on).
    fn replay(&mut self, which: impl Fn(A, &XememEvent) -> bool, out: &mut impl Answer<A>) {
        let (ready, later): (Vec<_>, Vec<_>) =
            core::mem::take(&mut self.early).into_iter().partition(|(a, ev)| which(*a, ev));
        self.early = later;
        for (asker, ev) in ready {
            self.serve(asker, ev, out);
        }
    }
}

fn take_where<T>(queue: &mut VecDeque<T>, pred: impl Fn(&T) -> bool) -> Option<T> {
    let i = queue.iter().position(pred)?;
    queue.remove(i)
}

#[cfg(test)]
mod tests;
