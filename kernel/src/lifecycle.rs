//! The enclave's life-cycle protocol with the host: "booted", ping/pong,
//! shutdown/"stopped" and the crash report.

use atoll_abi::{
    KMSG_BOOTED, KMSG_PANIC, KMSG_PING, KMSG_PONG, KMSG_SHUTDOWN, KMSG_STOPPED, LWK_CRASHED,
    LWK_RUNNING, LWK_STOPPED,
};
use core::sync::atomic::{AtomicUsize, Ordering};

use crate::kmsg::{self, Message, Peer};
use crate::status;
use hal::{cpu, tsc};

static STOPPED_CPUS: AtomicUsize = AtomicUsize::new(0);

/// Stops a secondary CPU for good (shutdown).
const STOP_VECTOR: u8 = 0xf3;

pub fn init() {
    kmsg::register(KMSG_PING, on_ping);
    kmsg::register(KMSG_SHUTDOWN, |_| shutdown());
    hal::irq::register(STOP_VECTOR, |_| stop_this_cpu());
}

/// Every enclave CPU is up: tell the host (its `create` is waiting).
pub fn report_booted(online: usize) {
    status::set_online(online);
    status::report_memory();
    status::set_state(LWK_RUNNING);
    kmsg::send_words_waiting(Peer::Host, KMSG_BOOTED, &[online as u64]);
}

/// The LWK has crashed on this CPU; the console holds the report. Sending
/// takes no lock, so a crash anywhere can still report.
pub fn report_crash(cpu: usize) {
    status::set_panic_cpu(cpu);
    status::set_state(LWK_CRASHED);
    let _ = kmsg::send_words(Peer::Host, KMSG_PANIC, &[cpu as u64]);
}

fn on_ping(msg: &Message) {
    let _ = kmsg::send_words(msg.from, KMSG_PONG, &[msg.word(0)]);
}

fn stop_this_cpu() -> ! {
    STOPPED_CPUS.fetch_add(1, Ordering::AcqRel);
    cpu::halt_forever()
}

/// Stops every enclave CPU (the host then parks them with INIT and gives
/// them back to Linux). Runs on the first CPU, in the message interrupt.
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
    status::set_state(LWK_STOPPED);
    kmsg::send_words_waiting(Peer::Host, KMSG_STOPPED, &[]);
    cpu::halt_forever()
}
