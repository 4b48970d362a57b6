//! Memory the host adds to this running LWK or takes back (`atoll add` /
//! `atoll remove --mem`; atoll_abi.h, "Resizing a running enclave"). The
//! host's commands arrive in the message interrupt and are carried out on
//! a thread of their own, which may wait for every CPU's TLB flush.

use atoll_abi::{KMSG_MEM_ADD, KMSG_MEM_ADDED, KMSG_MEM_REMOVE, KMSG_MEM_REMOVED};
use hal::mem::{self, AddBlockError};
use lwk_logic::errno::{Errno, EBUSY, EEXIST, EINVAL, ENOMEM};
use lwk_logic::frames::RemoveError;

use crate::kmsg::{self, Message, Peer};
use crate::sync::Queue;
use crate::{println, sched, status, tlb};

static COMMANDS: Queue<(u16, u64, u64)> = Queue::new();

pub fn init() {
    kmsg::register(KMSG_MEM_ADD, post);
    kmsg::register(KMSG_MEM_REMOVE, post);
    sched::spawn(0, "resize", || loop {
        match COMMANDS.pop() {
            (KMSG_MEM_ADD, phys, len) => answer(KMSG_MEM_ADDED, phys, add(phys, len)),
            (KMSG_MEM_REMOVE, phys, len) => answer(KMSG_MEM_REMOVED, phys, remove(phys, len)),
            _ => {}
        }
    });
}

/// From the host, in the message interrupt: for the resize thread.
fn post(msg: &Message) {
    if msg.from != Peer::Host {
        println!("resize: command {} from {:?} refused", msg.kind, msg.from);
        return;
    }
    COMMANDS.push((msg.kind, msg.word(0), msg.word(1)));
}

fn answer(kind: u16, phys: u64, result: Result<(), Errno>) {
    let result = result.err().map_or(0, Errno::to_return);
    kmsg::send_words_waiting(Peer::Host, kind, &[phys, result]);
}

/// Failure injection (test image): `refuse_resize=<n>` refuses the n-th
/// block the host adds, as an LWK out of resources would.
#[cfg(feature = "testing")]
fn refused_by_test() -> bool {
    use core::sync::atomic::{AtomicU64, Ordering};
    static ADDS: AtomicU64 = AtomicU64::new(0);
    let n = ADDS.fetch_add(1, Ordering::Relaxed) + 1;
    crate::boot::cmdline().value_u64("refuse_resize") == Some(n)
}

#[cfg(not(feature = "testing"))]
fn refused_by_test() -> bool {
    false
}

fn add(phys: u64, len: u64) -> Result<(), Errno> {
    if refused_by_test() {
        println!("resize: refusing the block at {phys:#x} (refuse_resize)");
        return Err(ENOMEM);
    }
    mem::add_block(phys, len).map_err(|e| {
        println!("resize: block at {phys:#x} ({} MiB) not added: {e:?}", len >> 20);
        match e {
            AddBlockError::Map(hal::lent::LendError::NoMemory) => ENOMEM,
            AddBlockError::Map(hal::lent::LendError::Overlaps) => EEXIST,
            _ => EINVAL,
        }
    })?;
    status::report_memory();
    Ok(())
}

fn remove(phys: u64, len: u64) -> Result<(), Errno> {
    mem::remove_block(phys, len).map_err(|e| match e {
        RemoveError::InUse => EBUSY,
        RemoveError::NoSuchRegion => EINVAL,
    })?;
    // No CPU may keep a translation of memory Linux takes back.
    tlb::flush_everywhere();
    status::report_memory();
    Ok(())
}
