//! Delegated system calls (the HobbesIO/McKernel proxy model): the calling
//! thread puts the call in its slot of the program area, tells the host
//! which slot (a CALL_POSTED message, left out while a worker of the
//! program's server polls the slots), polls for the answer for a window
//! that follows how long answers take, then sleeps; the `atoll run`
//! process on Linux performs it with the program's memory mirrored at the
//! same addresses, writes the result and interrupts this core unless the
//! caller still polls. Only the calling thread waits. (delegate.rs has a
//! thread's calls made here once the servers they need are there.)

use atoll_abi::{
    Slot, DONE_VECTOR, KMSG_CALL_CANCEL, KMSG_CALL_POSTED, KMSG_PAGE_READY, MAX_PROGRAMS,
    MAX_SLOTS, SLOT_DONE, SLOT_IDLE, SLOT_REQUEST,
};
use core::sync::atomic::{AtomicU64, Ordering};

use super::area::Area;
use super::signal;
use super::types::{Process, UserThread};
use super::vfork::Mem;
use crate::kmsg::{self, Peer};
use crate::sync::WaitQueue;
use hal::{cpu, percpu, tsc, MAX_CPUS};
use lwk_logic::errno::{Errno, EAGAIN, EINTR};

/// Every program's slots, numbered area by area.
const ALL_SLOTS: usize = MAX_PROGRAMS * MAX_SLOTS;
const WORDS: usize = ALL_SLOTS / 64;
static WAITERS: [WaitQueue; ALL_SLOTS] = [const { WaitQueue::new() }; ALL_SLOTS];

/// Per CPU, a bit per slot whose caller waits there, and a summary bit per
/// word of those: the host's "done" interrupt goes to that CPU, which then
/// looks at those slots alone (a scan of every slot was most of the LWK's
/// work per delegated call).
const _: () = assert!(MAX_SLOTS.is_multiple_of(64) && WORDS.is_multiple_of(64));
static WAITING: [[AtomicU64; WORDS]; MAX_CPUS] =
    [const { [const { AtomicU64::new(0) }; WORDS] }; MAX_CPUS];
static SUMMARY: [[AtomicU64; WORDS / 64]; MAX_CPUS] =
    [const { [const { AtomicU64::new(0) }; WORDS / 64] }; MAX_CPUS];

fn area_and_slot(g: usize) -> (Area, usize) {
    let area = Area::from_index((g / MAX_SLOTS) as u64).expect("slot number out of range");
    (area, g % MAX_SLOTS)
}

/// How long a caller polls for its answer before it sleeps: twice the
/// slot's recent answer time, within these bounds; only the shortest when
/// answers take longer than the longest window (a blocking read) or other
/// threads wait for this core. Polling saves the sleep and the wake-up on
/// this core, and the host's interrupt.
const SPIN_MIN_NS: u64 = 20_000;
const SPIN_MAX_NS: u64 = 1_000_000;
/// A slot's first caller polls this long.
const SPIN_FIRST_NS: u64 = 50_000;
/// Each slot's recent answer time in TSC cycles (a moving average, 0 before
/// its first call).
static ANSWER_CYCLES: [AtomicU64; ALL_SLOTS] = [const { AtomicU64::new(0) }; ALL_SLOTS];

/// The cycles slot `g`'s caller polls for now.
fn spin_cycles(g: usize) -> u64 {
    let (min, max) = (tsc::ns_to_cycles(SPIN_MIN_NS), tsc::ns_to_cycles(SPIN_MAX_NS));
    let recent = ANSWER_CYCLES[g].load(Ordering::Relaxed);
    if crate::sched::this_cpu().ready_len() > 0 || recent > max / 2 {
        return min;
    }
    if recent == 0 {
        return tsc::ns_to_cycles(SPIN_FIRST_NS);
    }
    (2 * recent).clamp(min, max)
}

/// Slot `g`'s answer took `cycles`: weighs it in (1/4 new, 3/4 old).
fn note_answer(g: usize, cycles: u64) {
    let old = ANSWER_CYCLES[g].load(Ordering::Relaxed);
    let new = if old == 0 { cycles } else { (3 * old + cycles) / 4 };
    ANSWER_CYCLES[g].store(new, Ordering::Relaxed);
}

fn mark_waiting(cpu: usize, g: usize) {
    WAITING[cpu][g / 64].fetch_or(1u64 << (g % 64), Ordering::AcqRel);
    SUMMARY[cpu][g / 64 / 64].fetch_or(1 << (g / 64 % 64), Ordering::AcqRel);
}

/// Slot `g`'s caller, which waited on CPU `cpu`, waits no more. Slot g is
/// its alone: a bit for it on the boot CPU can only be its own, taken over
/// from a CPU that left. (The summary bit stays: others may share it.)
fn unmark_waiting(cpu: usize, g: usize) {
    let bit = 1u64 << (g % 64);
    WAITING[cpu][g / 64].fetch_and(!bit, Ordering::AcqRel);
    WAITING[0][g / 64].fetch_and(!bit, Ordering::AcqRel);
}

pub fn init() {
    hal::irq::register(DONE_VECTOR, |_| wake_answered(percpu::cpu_index()));
}

/// CPU `from` has left: the boot CPU hears the answers for the calls that
/// were posted there (the host sends there once it knows), and wakes the
/// callers whose answers came meanwhile.
pub fn adopt_waiters(from: usize) {
    for (w, word) in WAITING[from].iter().enumerate() {
        let mut bits = word.swap(0, Ordering::AcqRel);
        while bits != 0 {
            mark_waiting(0, w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
    let irqs = cpu::save_and_disable_interrupts();
    wake_answered(0);
    cpu::restore_interrupts(irqs);
}

/// Wakes the callers waiting on `me` whose answer has come.
fn wake_answered(me: usize) {
    for (s, summary) in SUMMARY[me].iter().enumerate() {
        let mut words = summary.load(Ordering::Acquire);
        while words != 0 {
            let w = s * 64 + words.trailing_zeros() as usize;
            words &= words - 1;
            let mut bits = WAITING[me][w].load(Ordering::Acquire);
            while bits != 0 {
                let g = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let (area, i) = area_and_slot(g);
                if area.slot_state(i).load(Ordering::Acquire) == SLOT_DONE {
                    WAITERS[g].wake_all(true);
                }
            }
        }
    }
}

/// How often a wait in another program's slot looks whether either
/// program has ended.
const OTHER_AREA_RECHECK_NS: u64 = 10_000_000;

/// A call posted in a free slot of `parent`'s area, for the parent's
/// server to perform (a forked child asking for its own server). It takes
/// no signals and waits for the answer even if the caller is killed
/// meanwhile (the slot then goes back); EAGAIN if nothing could be posted
/// (the parent is ending, or has no free slot); EINTR if the parent ends
/// first (the slot then stays taken: a worker may still hold it).
pub fn call_in_area_of(parent: &Process, kind: u32, args: [u64; 6]) -> Result<i64, Errno> {
    if parent.is_exiting() {
        return Err(EAGAIN);
    }
    let i = parent.take_slot().ok_or(EAGAIN)?;
    let area = parent.area;
    let (g, me) = post_in_slot(area, i, parent.pid, kind, 0, args, false);
    let state = area.slot_state(i);
    let done = || state.load(Ordering::Acquire) == SLOT_DONE;
    let ended = || parent.is_exiting();
    while !done() && !ended() {
        let again = cpu::rdtsc() + tsc::ns_to_cycles(OTHER_AREA_RECHECK_NS);
        WAITERS[g].wait_until_deadline(|| done() || ended(), Some(again));
    }
    unmark_waiting(me, g);
    if !done() {
        return Err(EINTR);
    }
    let ret = area.slot_ret(i);
    state.store(SLOT_IDLE, Ordering::Release);
    parent.put_slot(i);
    Ok(ret)
}

/// PAGE_WANTED for slot `i` of `area`, whose program is `p` (None: no
/// longer there): the host's worker performing the slot's call touched a
/// page with no memory yet. It gets memory if the program's own thread
/// would get it there (the main stack grows on demand); either way the
/// host hears back, and walks the tables again.
pub fn page_wanted(area: Area, p: Option<&Process>, i: usize) {
    if i >= MAX_SLOTS {
        return;
    }
    let Some((question, va, write)) = area.fault_asked(i) else { return };
    if let Some(p) = p {
        p.resolve_fault(va, write, false);
    }
    area.fault_answered(i, question);
    kmsg::send_words_waiting(Peer::Host, KMSG_PAGE_READY, &[area.index() as u64, i as u64]);
}

/// A delegated call's raw result, and whether a signal cut it short (the
/// host interrupted the worker; an EINTR then is the signal's doing).
pub struct Answer {
    pub ret: i64,
    pub cancelled: bool,
}

/// How often a cancel is sent again while the call is not done: the
/// worker may not have been blocked yet when the last one came.
const CANCEL_AGAIN_NS: u64 = 10_000_000;

/// A call posted to the host and not yet waited for: the thread may work
/// meanwhile (fork copies memory while Linux forks), then must `wait`.
#[must_use = "a posted call must be waited for: its slot stays taken until then"]
pub struct Posted<'a> {
    u: &'a UserThread,
    /// Whose memory the worker reaches (its calls in flight hold it).
    mem: Mem<'a>,
    g: usize,
    me: usize,
    ticket: u64,
    posted_at: u64,
}

/// Posts `nr(args)` (kind `kind`) to the host without waiting for it
/// (the servers it needs are there: `delegate`).
pub fn post(u: &UserThread, kind: u32, nr: u64, args: [u64; 6]) -> Posted<'_> {
    let mem = u.process.mem();
    let ticket = mem.calls.begin(u.process.pid);
    let posted_at = cpu::rdtsc();
    let (g, me) = post_in_slot(u.process.area, u.slot, u.tid, kind, nr, args, true);
    Posted { u, mem, g, me, ticket, posted_at }
}

/// Fills slot `i` of `area` with the call, marks it posted and tells the
/// host unless a worker polls; the slot's global number and the CPU that
/// hears the answer. `spins`: the caller polls for the answer first.
fn post_in_slot(
    area: Area,
    i: usize,
    tid: u32,
    kind: u32,
    nr: u64,
    args: [u64; 6],
    spins: bool,
) -> (usize, usize) {
    let g = area.index() * MAX_SLOTS + i;
    // The host interrupts the CPU the slot names; its bits say who waits
    // there. The thread may move while it waits: the CPU it started on
    // still hears the answer, unless it leaves, and then the boot CPU
    // takes its bits (adopt_waiters) and the host sends there. Interrupts
    // stay off until the slot is posted so that CPU is this one.
    // The summary bit stays set: clearing it could race with another slot.
    let irqs = cpu::save_and_disable_interrupts();
    let me = percpu::cpu_index();
    mark_waiting(me, g);
    area.fill_slot(
        i,
        Slot {
            state: SLOT_IDLE,
            cpu: me as u32,
            kind,
            tid,
            nr,
            args,
            fault_state: area.fault_number(i),
            spinning: spins as u32,
            posted_tsc: cpu::rdtsc(),
            ..Slot::default()
        },
    );
    // SeqCst, then the poller's flag: a poller clears its flag, then looks
    // at the posted bits once more, so one of the two sees the other.
    area.slot_state(i).store(SLOT_REQUEST, Ordering::SeqCst);
    area.mark_posted(i);
    cpu::restore_interrupts(irqs);
    if !area.server_polling() {
        kmsg::send_words_waiting(Peer::Host, KMSG_CALL_POSTED, &[area.index() as u64, i as u64]);
    }
    (g, me)
}

impl Posted<'_> {
    /// The host's answer, or EINTR if the program ends first.
    pub fn wait(self) -> Result<Answer, Errno> {
        let (u, g, ticket) = (self.u, self.g, self.ticket);
        let (area, i) = (u.process.area, u.slot);
        let state = area.slot_state(i);
        let spin_until = cpu::rdtsc() + spin_cycles(g);
        while state.load(Ordering::Acquire) != SLOT_DONE && cpu::rdtsc() < spin_until {
            cpu::relax();
        }
        // From now on the answer needs the host's interrupt. SeqCst, then
        // the state (in wait_until_deadline): the host sets DONE, then
        // reads this flag, so one of the two sees the other.
        area.slot_spinning(i).store(0, Ordering::SeqCst);
        let done = || state.load(Ordering::Acquire) == SLOT_DONE;
        let mut cancelled = false;
        let mut again = None;
        loop {
            WAITERS[g].wait_until_deadline(
                || done() || u.must_leave() || (!cancelled && signal::has_deliverable(u)),
                again,
            );
            if done() || u.must_leave() {
                break;
            }
            if signal::has_deliverable(u) {
                cancelled = true;
                kmsg::send_words_waiting(
                    Peer::Host,
                    KMSG_CALL_CANCEL,
                    &[area.index() as u64, i as u64],
                );
                again = Some(cpu::rdtsc() + tsc::ns_to_cycles(CANCEL_AGAIN_NS));
            }
        }
        unmark_waiting(self.me, g);
        if !done() {
            // The worker may still be at it: its ticket stays live until the
            // program's memory goes.
            return Err(EINTR);
        }
        let seen = cpu::rdtsc();
        note_answer(g, seen.saturating_sub(self.posted_at));
        let (posted, taken, answered) = area.slot_times(i);
        u.process.call_times.add(posted, taken, answered, seen);
        let ret = area.slot_ret(i);
        state.store(SLOT_IDLE, Ordering::Release);
        self.mem.calls.end(ticket);
        Ok(Answer { ret, cancelled })
    }
}
