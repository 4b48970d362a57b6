//! Delegated system calls (the HobbesIO/McKernel proxy model): the calling
//! thread puts the call in its slot of the program area, tells the host
//! which slot (a CALL_POSTED message), spins briefly, then sleeps; the `atoll run` process on Linux performs it with the
//! program's memory mirrored at the same addresses, writes the result and
//! interrupts this core. Only the calling thread waits.

use atoll_abi::{
    Slot, DONE_VECTOR, KMSG_CALL_POSTED, MAX_SLOTS, SLOT_DONE, SLOT_IDLE, SLOT_REQUEST,
};
use core::sync::atomic::Ordering;

use super::{area, UserThread};
use crate::kmsg::{self, Peer};
use crate::sync::WaitQueue;
use hal::{cpu, percpu, tsc};
use lwk_logic::errno::{Errno, EINTR};

static WAITERS: [WaitQueue; MAX_SLOTS] = [const { WaitQueue::new() }; MAX_SLOTS];

/// Answers usually come within tens of microseconds; spinning that long
/// saves the sleep and the wake-up on this core.
const SPIN_NS: u64 = 50_000;

pub fn init() {
    hal::irq::register(DONE_VECTOR, |_| {
        for (i, w) in WAITERS.iter().enumerate() {
            if area::slot_state(i).load(Ordering::Acquire) == SLOT_DONE {
                w.wake_all(true);
            }
        }
    });
}

/// Has the host performed `nr(args)` (kind `kind`); returns its raw
/// result, or EINTR if the program ends first.
pub fn call(u: &UserThread, kind: u32, nr: u64, args: [u64; 6]) -> Result<i64, Errno> {
    let i = u.slot;
    area::fill_slot(
        i,
        Slot {
            state: SLOT_IDLE,
            cpu: percpu::cpu_index() as u32,
            kind,
            tid: u.tid,
            nr,
            args,
            ret: 0,
            pad0: [0; 6],
        },
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
    if state.load(Ordering::Acquire) != SLOT_DONE {
        return Err(EINTR);
    }
    let ret = area::slot_ret(i);
    state.store(SLOT_IDLE, Ordering::Release);
    Ok(ret)
}
