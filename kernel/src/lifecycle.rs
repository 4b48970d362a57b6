//! The enclave's life-cycle protocol with the host: "booted", ping/pong
//! (also to and from other enclaves, which the host asks for with
//! PEER_PING), shutdown/"stopped" and the crash report.

use atoll_abi::{
    KMSG_BOOTED, KMSG_PANIC, KMSG_PEER_PING, KMSG_PEER_PONG, KMSG_PING, KMSG_PONG, KMSG_SHUTDOWN,
    KMSG_STOPPED, LWK_CRASHED, LWK_RUNNING, LWK_STOPPED, STOP_VECTOR,
};
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use lwk_logic::errno::EINVAL;

use crate::kmsg::{self, Message, Peer};
use crate::status;
use hal::{cpu, tsc};

static STOPPED_CPUS: AtomicUsize = AtomicUsize::new(0);

/// The host's ping to a peer in flight: its cookie and when it left (TSC).
static PEER_PING: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

pub fn init() {
    kmsg::register(KMSG_PING, on_ping);
    kmsg::register(KMSG_PONG, on_pong);
    kmsg::register(KMSG_PEER_PING, on_peer_ping);
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
    let _ = msg.reply_words(KMSG_PONG, &[msg.word(0)]);
}

/// The host asks for a round trip to another enclave: (peer id, cookie).
fn on_peer_ping(msg: &Message) {
    if msg.from != Peer::Host {
        return;
    }
    let (peer, cookie) = (msg.word(0) as u32, msg.word(1));
    PEER_PING[0].store(cookie, Ordering::Relaxed);
    PEER_PING[1].store(cpu::rdtsc(), Ordering::Release);
    if let Err(e) = kmsg::send_words(Peer::Enclave(peer), KMSG_PING, &[cookie]) {
        hal::println!("kmsg: ping to enclave {peer} not sent: {e:?}");
        let _ = kmsg::send_words(Peer::Host, KMSG_PEER_PONG, &[cookie, EINVAL.to_return()]);
    }
}

/// A peer's answer to the host's ping: the round trip goes to the host.
fn on_pong(msg: &Message) {
    let sent = PEER_PING[1].load(Ordering::Acquire);
    if msg.from == Peer::Host || msg.word(0) != PEER_PING[0].load(Ordering::Relaxed) {
        return;
    }
    let rtt = tsc::cycles_to_ns(cpu::rdtsc().saturating_sub(sent));
    let _ = kmsg::send_words(Peer::Host, KMSG_PEER_PONG, &[msg.word(0), rtt]);
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
    hal::println!(
        "Atoll LWK: shutting down ({} of {} other CPUs stopped)",
        STOPPED_CPUS.load(Ordering::Acquire),
        others.len()
    );
    status::set_state(LWK_STOPPED);
    kmsg::send_words_waiting(Peer::Host, KMSG_STOPPED, &[]);
    cpu::halt_forever()
}
