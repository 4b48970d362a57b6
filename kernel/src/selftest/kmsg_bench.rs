//! Message round trips, timed (test image; ATOLL_KMSG_BENCH_* in
//! atoll_abi.h). Each mode is measured against its baseline between the
//! same two CPUs: a cache line bounced back and forth (the floor for
//! polling), a bare IPI and one back (the floor for messages with
//! interrupts), then a 64-byte message each way with interrupts (taking
//! turns with the bare IPI), and with both sides polling, and a one-slot
//! message (Popcorn's 64-byte message: its head and 48 bytes fill one
//! cache line) with both sides polling.
//! This LWK answers when the other side times (Linux, or another LWK), and
//! times when Linux asks it to (BENCH_RUN, to a peer).

use alloc::vec::Vec;
use atoll_abi::{BENCH_IPI, BENCH_KMSG_POLL, BENCH_LINE, BENCH_SLOT_POLL};
use atoll_abi::{BENCH_REPLY, BENCH_VECTOR, KMSG_HEAD_DATA};
use atoll_abi::{KMSG_BENCH_DONE, KMSG_BENCH_ECHO, KMSG_BENCH_READY, KMSG_BENCH_RESPOND};
use atoll_abi::{KMSG_BENCH_RESULT, KMSG_BENCH_RUN, KMSG_BENCH_SINK};
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use lwk_logic::errno::{Errno, EINVAL, ETIMEDOUT};
use lwk_logic::stats::summarize;

use super::kmsg_path;
use crate::kmsg::{self, Message, Peer};
use crate::sched;
use crate::sync::{SpinLock, WaitQueue};
use hal::println;
use hal::{apic, cpu, tsc};

/// How long one side waits for the other before giving up.
const PATIENCE_NS: u64 = 2_000_000_000;

/// The responder's partner for bare IPIs: (APIC id, vector), 0 when none.
static IPI_PARTNER: AtomicU64 = AtomicU64::new(0);
/// Bare IPIs this LWK got back as the timing side.
static IPIS_BACK: AtomicU64 = AtomicU64::new(0);
/// The last echo answered to us, the last READY, and the polling stop.
static LAST_ECHO: AtomicU64 = AtomicU64::new(u64::MAX);
static READY: AtomicU64 = AtomicU64::new(0);
static DONE: AtomicBool = AtomicBool::new(false);
/// Work for the bench thread: (kind, peer or mode, rounds, line).
static WORK: SpinLock<Option<(u16, Peer, u64, u64)>> = SpinLock::new(None);
static ARRIVED: WaitQueue = WaitQueue::new();

pub fn init() {
    kmsg::register(KMSG_BENCH_ECHO, on_echo);
    // The stream: received (copied out of the ring) and dropped.
    kmsg::register(KMSG_BENCH_SINK, |_| {});
    kmsg::register(KMSG_BENCH_READY, |m| READY.store(m.word(0), Ordering::Release));
    kmsg::register(KMSG_BENCH_DONE, |_| DONE.store(true, Ordering::Release));
    kmsg::register(KMSG_BENCH_RESPOND, on_respond);
    kmsg::register(KMSG_BENCH_RUN, |m| {
        post(KMSG_BENCH_RUN, Peer::Enclave(m.word(0) as u32), m.word(1), 0)
    });
    hal::irq::register(BENCH_VECTOR, |_| match IPI_PARTNER.load(Ordering::Acquire) {
        0 => {
            IPIS_BACK.fetch_add(1, Ordering::AcqRel);
        }
        partner => apic::send_ipi(partner as u32, (partner >> 32) as u8),
    });
    sched::spawn(0, "kmsg-bench", || loop {
        ARRIVED.wait_until(|| WORK.lock().is_some());
        let work = WORK.lock().take();
        match work {
            Some((KMSG_BENCH_RUN, peer, rounds, _)) => run_all(peer, rounds),
            Some((_, from, mode, rounds)) => respond(from, mode, rounds),
            None => {}
        }
    });
}

fn post(kind: u16, peer: Peer, a: u64, b: u64) {
    *WORK.lock() = Some((kind, peer, a, b));
    ARRIVED.wake_one(true);
}

fn on_echo(msg: &Message) {
    kmsg_path::handler_entered();
    let round = msg.word(0);
    if round & BENCH_REPLY != 0 {
        LAST_ECHO.store(round & !BENCH_REPLY, Ordering::Release);
    } else {
        // As long as the echo was.
        let mut answer = [0u8; 64];
        answer[..8].copy_from_slice(&(round | BENCH_REPLY).to_le_bytes());
        let len = msg.data.len().clamp(8, answer.len());
        let _ = kmsg_path::timed_send(|| msg.reply(KMSG_BENCH_ECHO, &answer[..len]));
    }
}

/// The other side will time `mode`: (mode, rounds, partner APIC id, reply vector).
fn on_respond(msg: &Message) {
    let (mode, rounds) = (msg.word(0), msg.word(1));
    if mode == BENCH_IPI {
        // Answered in the interrupt itself, no thread.
        IPI_PARTNER.store(msg.word(2) | msg.word(3) << 32, Ordering::Release);
        let _ = msg.reply_words(KMSG_BENCH_READY, &[mode]);
    } else {
        IPI_PARTNER.store(0, Ordering::Release);
        post(KMSG_BENCH_RESPOND, msg.from, mode, rounds);
    }
}

/// Answers in a thread: bounces the line, or polls for echoes.
fn respond(from: Peer, mode: u64, rounds: u64) {
    let Some(region) = kmsg::bench_line(from) else { return };
    let line = region.atomic_u64(0);
    DONE.store(false, Ordering::Release);
    if polled(mode) {
        kmsg::set_polling(from, true);
    }
    let _ = kmsg::send_words(from, KMSG_BENCH_READY, &[mode]);
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(PATIENCE_NS) * (1 + rounds / 1000);
    match mode {
        BENCH_LINE => {
            for r in 0..rounds {
                while line.load(Ordering::Acquire) != 2 * r + 1 && cpu::rdtsc() < deadline {
                    cpu::relax();
                }
                line.store(2 * r + 2, Ordering::Release);
            }
        }
        BENCH_KMSG_POLL | BENCH_SLOT_POLL => {
            let Some(link) = kmsg::Poller::new(from) else { return };
            kmsg_path::reset();
            while !DONE.load(Ordering::Acquire) && cpu::rdtsc() < deadline {
                // Polls only once the message is whole, so the count never
                // includes the sender's writing it (under -icount, the other
                // vCPU's turn); a poll that raced the writing read 3818.
                if !link.waiting() {
                    continue;
                }
                let t0 = cpu::rdtsc();
                link.poll();
                kmsg_path::polled(t0);
            }
            kmsg::set_polling(from, false);
            if mode == BENCH_SLOT_POLL {
                kmsg_path::report();
            }
        }
        _ => {}
    }
}

/// Times every mode with enclave `peer`, group by group (some take turns
/// round by round: atoll_abi::bench_groups), and reports each to Linux.
fn run_all(peer: Peer, rounds: u64) {
    let rounds = rounds.clamp(1, 100_000);
    for (group, n) in atoll_abi::bench_groups() {
        let modes = &group[..n];
        let figures = time_modes(peer, modes, rounds);
        for (i, &mode) in modes.iter().enumerate() {
            let words = match &figures {
                Ok(f) => [mode, f[i].0, f[i].1, f[i].2, 0],
                Err(e) => [mode, 0, 0, 0, e.to_return()],
            };
            kmsg::send_words_waiting(Peer::Host, KMSG_BENCH_RESULT, &words);
        }
    }
}

fn wait_for(done: impl Fn() -> bool) -> Result<(), Errno> {
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(PATIENCE_NS);
    while !done() {
        if cpu::rdtsc() > deadline {
            return Err(ETIMEDOUT);
        }
        cpu::relax();
    }
    Ok(())
}

/// (median, min, 90th percentile) in ns of `rounds` round trips of each
/// of `modes`, taking turns round by round; the responder is set up for
/// the first.
fn time_modes(peer: Peer, modes: &[u64], rounds: u64) -> Result<Vec<(u64, u64, u64)>, Errno> {
    let mode = modes[0];
    let region = kmsg::bench_line(peer).ok_or(EINVAL)?;
    let line = region.atomic_u64(0);
    line.store(0, Ordering::Release);
    READY.store(0, Ordering::Release);
    LAST_ECHO.store(u64::MAX, Ordering::Release);
    let me = u64::from(apic::id());
    kmsg::send_words(peer, KMSG_BENCH_RESPOND, &[mode, rounds, me, u64::from(BENCH_VECTOR)])
        .map_err(|_| EINVAL)?;
    wait_for(|| READY.load(Ordering::Acquire) == mode)?;
    if polled(mode) {
        kmsg::set_polling(peer, true);
    }
    let notify = kmsg::notify_of(peer).ok_or(EINVAL)?;
    let link = kmsg::Poller::new(peer).ok_or(EINVAL)?;
    let mut times: Vec<Vec<u64>> =
        modes.iter().map(|_| Vec::with_capacity(rounds as usize)).collect();
    let mut result = Ok(());
    for r in 0..rounds * modes.len() as u64 {
        let turn = (r % modes.len() as u64) as usize;
        let t0 = cpu::rdtsc();
        let answered = match modes[turn] {
            BENCH_LINE => {
                line.store(2 * r + 1, Ordering::Release);
                wait_for(|| line.load(Ordering::Acquire) == 2 * r + 2)
            }
            BENCH_IPI => {
                let before = IPIS_BACK.load(Ordering::Acquire);
                apic::send_ipi(notify, BENCH_VECTOR);
                wait_for(|| IPIS_BACK.load(Ordering::Acquire) != before)
            }
            m => echo(&link, r, m),
        };
        if let Err(e) = answered {
            result = Err(e);
            break;
        }
        times[turn].push(tsc::cycles_to_ns(cpu::rdtsc() - t0));
    }
    if polled(mode) {
        kmsg::set_polling(peer, false);
        let _ = kmsg::send_words(peer, KMSG_BENCH_DONE, &[]);
    }
    result?;
    let mut figures = Vec::new();
    for (m, t) in modes.iter().zip(times.iter_mut()) {
        let s = summarize(t);
        let p90 = t[(t.len() * 9 / 10).min(t.len() - 1)];
        println!(
            "kmsg-bench: mode {m}: median {} ns, min {} ns over {} rounds",
            s.median, s.min, s.n
        );
        figures.push((s.median, s.min, p90));
    }
    Ok(figures)
}

fn polled(mode: u64) -> bool {
    mode == BENCH_KMSG_POLL || mode == BENCH_SLOT_POLL
}

/// One message each way on `link` (64 bytes, or one slot's 48); polling
/// it, or waiting for the interrupt.
fn echo(link: &kmsg::Poller, round: u64, mode: u64) -> Result<(), Errno> {
    let poll = polled(mode);
    let len = if mode == BENCH_SLOT_POLL { KMSG_HEAD_DATA } else { 64 };
    let mut m = [0u8; 64];
    m[..8].copy_from_slice(&round.to_le_bytes());
    link.send(KMSG_BENCH_ECHO, &m[..len]).map_err(|_| EINVAL)?;
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(PATIENCE_NS);
    while LAST_ECHO.load(Ordering::Acquire) != round {
        if cpu::rdtsc() > deadline {
            return Err(ETIMEDOUT);
        }
        if poll {
            link.poll();
        } else {
            cpu::relax();
        }
    }
    Ok(())
}
