//! Memory and CPUs the host adds to this running LWK or takes back
//! (`atoll add` / `atoll remove`; atoll_abi.h, "Resizing a running
//! enclave"). The host's commands arrive in the message interrupt and are
//! carried out on a thread of their own, which may wait for every CPU's
//! TLB flush, a new CPU to come up or a leaving one to park.

use atoll_abi::{
    KMSG_CPU_ADD, KMSG_CPU_ADDED, KMSG_CPU_REMOVE, KMSG_CPU_REMOVED, KMSG_MEM_ADD, KMSG_MEM_ADDED,
    KMSG_MEM_REMOVE, KMSG_MEM_REMOVED,
};
use hal::blocks::{self, AddBlockError};
use lwk_logic::errno::{Errno, EBUSY, EEXIST, EINVAL, EIO, ENOMEM};
use lwk_logic::frames::RemoveError;

use crate::kmsg::{self, Message, Peer};
use crate::sync::Queue;
use crate::{sched, status, tlb};
use hal::println;

static COMMANDS: Queue<(u16, [u64; 4])> = Queue::new();

/// How long a leaving CPU may take to park: its running thread must
/// reach a point where it can be switched out.
const PARK_TIMEOUT_NS: u64 = 2_000_000_000;

pub fn init() {
    for kind in [KMSG_MEM_ADD, KMSG_MEM_REMOVE, KMSG_CPU_ADD, KMSG_CPU_REMOVE] {
        kmsg::register(kind, post);
    }
    sched::spawn(0, "resize", || loop {
        match COMMANDS.pop() {
            (KMSG_MEM_ADD, [phys, len, ..]) => answer(KMSG_MEM_ADDED, phys, add(phys, len)),
            (KMSG_MEM_REMOVE, [phys, len, ..]) => answer(KMSG_MEM_REMOVED, phys, remove(phys, len)),
            (KMSG_CPU_ADD, [index, apic_id, tramp, cr3]) => {
                answer(KMSG_CPU_ADDED, index, add_cpu(index, apic_id, tramp, cr3))
            }
            (KMSG_CPU_REMOVE, [index, ..]) => answer(KMSG_CPU_REMOVED, index, remove_cpu(index)),
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
    COMMANDS.push((msg.kind, [msg.word(0), msg.word(1), msg.word(2), msg.word(3)]));
}

fn answer(kind: u16, phys: u64, result: Result<(), Errno>) {
    let result = result.err().map_or(0, Errno::to_return);
    kmsg::send_words_waiting(Peer::Host, kind, &[phys, result]);
}

/// Failure injection (test image): `refuse_resize=<n>` refuses the n-th
/// block the host adds, as an LWK out of resources would.
/// (`refuse_resize=<n>` counts blocks, `refuse_cpu=<n>` CPUs.)
#[cfg(feature = "testing")]
fn refused_by_test(what: &str) -> bool {
    use core::sync::atomic::{AtomicU64, Ordering};
    static BLOCKS: AtomicU64 = AtomicU64::new(0);
    static CPUS: AtomicU64 = AtomicU64::new(0);
    let counter = if what == "refuse_cpu" { &CPUS } else { &BLOCKS };
    let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
    crate::boot::cmdline().value_u64(what) == Some(n)
}

#[cfg(not(feature = "testing"))]
fn refused_by_test(_what: &str) -> bool {
    false
}

fn add(phys: u64, len: u64) -> Result<(), Errno> {
    if refused_by_test("refuse_resize") {
        println!("resize: refusing the block at {phys:#x} (refuse_resize)");
        return Err(ENOMEM);
    }
    blocks::add_block(phys, len).map_err(|e| {
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
    blocks::remove_block(phys, len).map_err(|e| match e {
        RemoveError::InUse => EBUSY,
        RemoveError::NoSuchRegion => EINVAL,
    })?;
    // No CPU may keep a translation of memory Linux takes back.
    tlb::flush_everywhere();
    status::report_memory();
    Ok(())
}

/// Starts a CPU the host took from Linux, at the index the host chose,
/// through the trampoline page the host lends for it (as at boot); then
/// programs started on the whole enclave spread onto it.
fn add_cpu(index: u64, apic_id: u64, tramp: u64, cr3: u64) -> Result<(), Errno> {
    let index = index as usize;
    let valid = index > 0 && index < hal::MAX_CPUS && !hal::smp::is_online(index);
    if !valid
        || tramp >= 1 << 20
        || !tramp.is_multiple_of(4096)
        || cr3 >= 1 << 32
        || apic_id > u32::MAX as u64
    {
        println!("resize: CPU {index} (APIC id {apic_id}) refused: bad index or trampoline");
        return Err(EINVAL);
    }
    if refused_by_test("refuse_cpu") {
        println!("resize: refusing CPU {index} (refuse_cpu)");
        return Err(EBUSY);
    }
    let trampoline = hal::boot::Trampoline { phys: tramp, cr3 };
    if !hal::smp::start_cpu(trampoline, index, apic_id as u32) {
        println!("resize: CPU {index} (APIC id {apic_id}) did not come up");
        return Err(EIO);
    }
    crate::process::cpu_joined(index);
    status::set_online(hal::smp::online_count());
    Ok(())
}

/// Moves every thread off CPU `index` and parks it; refused for the boot
/// CPU (it hears the host) and for one that does not park in time.
fn remove_cpu(index: u64) -> Result<(), Errno> {
    let index = index as usize; // take_down refuses the boot CPU and any not online
    sched::hotplug::take_down(index, PARK_TIMEOUT_NS).inspect_err(|e| {
        println!("resize: CPU {index} did not leave: {e:?}");
    })?;
    crate::process::call_slots::adopt_waiters(index);
    status::set_online(hal::smp::online_count());
    Ok(())
}
