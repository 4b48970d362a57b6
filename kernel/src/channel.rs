//! The control channel to the host module (struct atoll_channel in the
//! enclave's shared area): two one-way rings of fixed-size messages, each
//! with an IPI to say "look". The host's messages are handled in the
//! interrupt on the boot CPU, so a ping is answered whatever the LWK runs.

use atoll_abi::{
    Channel, Msg, Ring, HOST_VECTOR, LWK_CRASHED, LWK_RUNNING, LWK_STOPPED, LWK_VECTOR, MSG_BOOTED,
    MSG_PANIC, MSG_PING, MSG_PONG, MSG_PROC_CREATE, MSG_PROC_KILL, MSG_PROC_RELEASE,
    MSG_PROC_START, MSG_SHUTDOWN, MSG_STOPPED, RING_SLOTS,
};
use core::mem::{offset_of, size_of};
use core::sync::atomic::{AtomicUsize, Ordering};
use spin::Once;

use crate::sync::SpinLock;
use hal::{apic, cpu, shared::SharedRegion, tsc};

static REGION: Once<SharedRegion> = Once::new();
/// Serializes senders (any enclave CPU may send).
static SEND: SpinLock<u32> = SpinLock::new(0);
static STOPPED_CPUS: AtomicUsize = AtomicUsize::new(0);

/// Stops a secondary CPU for good (shutdown).
const STOP_VECTOR: u8 = 0xf3;

const TO_LWK: usize = offset_of!(Channel, to_lwk);
const TO_HOST: usize = offset_of!(Channel, to_host);

/// Offset of the slot a ring's free-running counter points at.
fn slot(ring: usize, counter: u32) -> usize {
    ring + offset_of!(Ring, slot) + (counter as usize % RING_SLOTS) * size_of::<Msg>()
}

fn region() -> Option<&'static SharedRegion> {
    REGION.get()
}

/// Attaches to the channel and starts listening for the host.
pub fn init(phys: u64) {
    REGION.call_once(|| SharedRegion::in_enclave_area(phys, size_of::<Channel>()));
    hal::irq::register(LWK_VECTOR, |_| on_host_message());
    hal::irq::register(STOP_VECTOR, |_| stop_this_cpu());
}

fn set_state(state: u32) {
    if let Some(r) = region() {
        r.atomic_u32(offset_of!(Channel, lwk_state)).store(state, Ordering::Release);
    }
}

pub fn notify_host() {
    if let Some(e) = crate::boot::enclave() {
        apic::send_ipi(e.host_apic_id, HOST_VECTOR);
    }
}

/// Appends a message for the host; false if the ring is full.
fn push(r: &SharedRegion, seq: &mut u32, kind: u32, arg: [u64; 3]) -> bool {
    let head = r.atomic_u32(TO_HOST + offset_of!(Ring, head));
    let tail = r.atomic_u32(TO_HOST + offset_of!(Ring, tail));
    let h = head.load(Ordering::Relaxed);
    if h.wrapping_sub(tail.load(Ordering::Acquire)) as usize >= RING_SLOTS {
        return false;
    }
    *seq = seq.wrapping_add(1);
    r.write(slot(TO_HOST, h), Msg { kind, seq: *seq, arg });
    head.store(h.wrapping_add(1), Ordering::Release);
    true
}

pub fn send(kind: u32, arg: [u64; 3]) {
    let Some(r) = region() else { return };
    let sent = push(r, &mut SEND.lock(), kind, arg);
    if !sent {
        crate::println!("channel: host ring full, message {} dropped", kind);
    }
    notify_host();
}

/// Publishes how much LWK memory is free (the host shows it).
pub fn report_memory() {
    let Some(r) = region() else { return };
    let (free, total) = hal::mem::frame_counts();
    r.atomic_u64(offset_of!(Channel, free_bytes)).store(free * 4096, Ordering::Relaxed);
    r.atomic_u64(offset_of!(Channel, total_bytes)).store(total * 4096, Ordering::Relaxed);
}

/// Every enclave CPU is up: tell the host (its `create` is waiting).
pub fn report_booted(online: usize) {
    if let Some(r) = region() {
        r.atomic_u32(offset_of!(Channel, online_cpus)).store(online as u32, Ordering::Release);
    }
    report_memory();
    set_state(LWK_RUNNING);
    send(MSG_BOOTED, [online as u64, 0, 0]);
}

/// The LWK has crashed on this CPU; the console holds the report. Never
/// waits for a lock the crashed context might hold.
pub fn report_crash(cpu: usize) {
    let Some(r) = region() else { return };
    r.atomic_u32(offset_of!(Channel, panic_cpu)).store(cpu as u32, Ordering::Relaxed);
    set_state(LWK_CRASHED);
    if let Some(mut seq) = SEND.try_lock() {
        push(r, &mut seq, MSG_PANIC, [cpu as u64, 0, 0]);
    }
    notify_host();
}

fn on_host_message() {
    let Some(r) = region() else { return };
    let head = r.atomic_u32(TO_LWK + offset_of!(Ring, head));
    let tail = r.atomic_u32(TO_LWK + offset_of!(Ring, tail));
    loop {
        let t = tail.load(Ordering::Relaxed);
        if t == head.load(Ordering::Acquire) {
            break;
        }
        let msg: Msg = r.read(slot(TO_LWK, t));
        tail.store(t.wrapping_add(1), Ordering::Release);
        match msg.kind {
            MSG_PING => send(MSG_PONG, [msg.arg[0], 0, 0]),
            MSG_SHUTDOWN => shutdown(),
            MSG_PROC_CREATE | MSG_PROC_START | MSG_PROC_KILL | MSG_PROC_RELEASE => {
                crate::process::launch::post(msg.kind, msg.arg[0])
            }
            other => crate::println!("channel: unknown message type {} from the host", other),
        }
    }
}

fn stop_this_cpu() -> ! {
    STOPPED_CPUS.fetch_add(1, Ordering::AcqRel);
    cpu::halt_forever()
}

/// Stops every enclave CPU (the host then parks them with INIT and gives
/// them back to Linux). Runs on the boot CPU, in the channel interrupt.
fn shutdown() -> ! {
    let others: alloc::vec::Vec<usize> =
        hal::smp::online_cpus().filter(|&c| c != hal::cpu_index()).collect();
    for &c in &others {
        hal::irq::send(c, STOP_VECTOR);
    }
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(100_000_000);
    while STOPPED_CPUS.load(Ordering::Acquire) < others.len() && cpu::rdtsc() < deadline {
        cpu::relax();
    }
    crate::println!(
        "Atoll LWK: shutting down ({} of {} other CPUs stopped)",
        STOPPED_CPUS.load(Ordering::Acquire),
        others.len()
    );
    set_state(LWK_STOPPED);
    send(MSG_STOPPED, [0; 3]);
    cpu::halt_forever()
}
