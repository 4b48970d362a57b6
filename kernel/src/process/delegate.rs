//! Delegated system calls (the HobbesIO/McKernel proxy model): the calling
//! thread puts the call in its slot of the program area, tells the host
//! which slot (a CALL_POSTED message), spins briefly, then sleeps; the
//! `atoll run` process on Linux performs it with the program's memory
//! mirrored at the same addresses, writes the result and interrupts this
//! core. Only the calling thread waits.

use atoll_abi::{
    Slot, DONE_VECTOR, KMSG_CALL_POSTED, MAX_SLOTS, SLOT_DONE, SLOT_IDLE, SLOT_REQUEST,
};
use core::sync::atomic::{AtomicU64, Ordering};

use super::{area, UserThread};
use crate::kmsg::{self, Peer};
use crate::sync::WaitQueue;
use hal::{cpu, percpu, tsc, MAX_CPUS};
use lwk_logic::errno::{Errno, EINTR};

static WAITERS: [WaitQueue; MAX_SLOTS] = [const { WaitQueue::new() }; MAX_SLOTS];

/// Per CPU, a bit per slot whose caller waits there: the host's "done"
/// interrupt goes to that CPU, which then looks at those slots alone (a
/// scan of all 128 was most of the LWK's work per delegated call).
const _: () = assert!(MAX_SLOTS.is_multiple_of(64));
static WAITING: [[AtomicU64; MAX_SLOTS / 64]; MAX_CPUS] =
    [const { [const { AtomicU64::new(0) }; MAX_SLOTS / 64] }; MAX_CPUS];

/// Answers usually come within tens of microseconds; spinning that long
/// saves the sleep and the wake-up on this core.
const SPIN_NS: u64 = 50_000;

pub fn init() {
    hal::irq::register(DONE_VECTOR, |_| {
        for (w, word) in WAITING[percpu::cpu_index()].iter().enumerate() {
            let mut bits = word.load(Ordering::Acquire);
            while bits != 0 {
                let i = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if area::slot_state(i).load(Ordering::Acquire) == SLOT_DONE {
                    WAITERS[i].wake_all(true);
                }
            }
        }
    });
}

/// Has the host performed `nr(args)` (kind `kind`); returns its raw
/// result, or EINTR if the program ends first.
pub fn call(u: &UserThread, kind: u32, nr: u64, args: [u64; 6]) -> Result<i64, Errno> {
    let i = u.slot;
    // Threads stay on their CPU while they wait, so the bit stays right.
    let me = percpu::cpu_index();
    let (word, bit) = (&WAITING[me][i / 64], 1u64 << (i % 64));
    word.fetch_or(bit, Ordering::AcqRel);
    area::fill_slot(
        i,
        Slot { state: SLOT_IDLE, cpu: me as u32, kind, tid: u.tid, nr, args, ret: 0, pad0: [0; 6] },
    );
    let state = area::slot_state(i);
    state.store(SLOT_REQUEST, Ordering::Release);
    kmsg::send_words_waiting(Peer::Host, KMSG_CALL_POSTED, &[i as u64]);

    let spin_until = cpu::rdtsc() + tsc::ns_to_cycles(SPIN_NS);
    while state.load(Ordering::Acquire) != SLOT_DONE && cpu::rdtsc() < spin_until {
        cpu::relax();
    }
    let p = &u.process;
    WAITERS[i].wait_until(|| state.load(Ordering::Acquire) == SLOT_DONE || p.is_exiting());
    word.fetch_and(!bit, Ordering::AcqRel);
    if state.load(Ordering::Acquire) != SLOT_DONE {
        return Err(EINTR);
    }
    let ret = area::slot_ret(i);
    state.store(SLOT_IDLE, Ordering::Release);
    Ok(ret)
}
