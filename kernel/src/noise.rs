//! OS noise probes (`atoll noise`; atoll_abi.h, "OS noise probes").
//! Selfish detour: spin reading the TSC and record every gap between two
//! reads longer than a threshold, with the interrupts this CPU took during
//! it, so each detour is the kernel's (an interrupt) or not (the hardware
//! or the hypervisor took the CPU). FWQ and FTQ (as LLNL's and Sandia's
//! benchmarks): fixed work per sample, or fixed time per sample. The loops
//! and their attribution are lwk_logic::noise; this file feeds them this
//! CPU's TSC and interrupt count. The host's requests arrive in the
//! message interrupt; the probe runs in a kernel thread on the asked CPU,
//! which it holds for the probe's duration.

use alloc::vec::Vec;
use atoll_abi::noise_bytes::{NOISE_DETOUR_BYTES, NOISE_RESULT_BYTES};
use atoll_abi::{
    noise_units_for, noise_units_within, noise_work, NoiseDetour, NoiseResult, NoiseRun,
    KMSG_NOISE_DONE, KMSG_NOISE_RUN, NOISE_FTQ, NOISE_FWQ, NOISE_SELFISH,
};
use hal::{cpu, tsc};
use lwk_logic::errno::EINVAL;
use lwk_logic::noise::{self, Instants};

use crate::kmsg::{self, Message, Peer, SendError};
use crate::sched::{self, hotplug};
use crate::sync::Queue;

/// Longest probe the host may ask for.
const MAX_DURATION_NS: u64 = 600 * 1_000_000_000;

static REQUESTS: Queue<NoiseRun> = Queue::new();

pub fn init() {
    kmsg::register(KMSG_NOISE_RUN, post);
    sched::spawn(0, "noise", || loop {
        let run = REQUESTS.pop();
        report(&run, serve(&run));
    });
}

fn post(msg: &Message) {
    match NoiseRun::from_bytes(msg.data) {
        Some(run) if msg.from == Peer::Host => REQUESTS.push(run),
        _ => hal::println!("noise: malformed request from {:?} refused", msg.from),
    }
}

/// Runs the probe on its CPU and waits for it.
fn serve(run: &NoiseRun) -> Result<(NoiseResult, Vec<NoiseDetour>), i32> {
    let cpu = run.cpu as usize;
    let valid = [NOISE_SELFISH, NOISE_FWQ, NOISE_FTQ].contains(&run.probe)
        && cpu < hal::MAX_CPUS
        && hotplug::active_cpus().any(|c| c == cpu)
        && run.duration_ns > 0
        && run.duration_ns <= MAX_DURATION_NS;
    if !valid {
        return Err(EINVAL.to_return() as i32);
    }
    let (duration, threshold, probe) = (run.duration_ns, run.threshold_ns, run.probe);
    if probe != NOISE_SELFISH && threshold == 0 {
        return Err(EINVAL.to_return() as i32);
    }
    Ok(sched::spawn(cpu, "noise probe", move || match probe {
        NOISE_FWQ => fixed_work(duration, threshold),
        NOISE_FTQ => fixed_time(duration, threshold),
        _ => selfish(duration, threshold),
    })
    .join())
}

/// This CPU's TSC, read at instants whose interrupt count (NMIs included)
/// is exact (lwk_logic::noise::Instants says why that takes a re-read).
fn clock() -> Instants<impl Fn() -> u64, impl Fn() -> u64> {
    let me = hal::cpu_index();
    Instants::new(cpu::rdtsc, move || hal::irq::taken_on(me))
}

/// FWQ: the same work, quantum after quantum; each listed entry is one
/// quantum and how long it took.
pub fn fixed_work(duration_ns: u64, quantum_ns: u64) -> (NoiseResult, Vec<NoiseDetour>) {
    let units = noise_units_for(cpu::rdtsc, tsc::ns_to_cycles(quantum_ns));
    let clock = clock();
    let sample = |start| {
        noise_work(units);
        tsc::cycles_to_ns(clock.tsc() - start)
    };
    on_this_cpu(noise::sampled(&clock, tsc::ns_to_cycles(duration_ns), tsc::cycles_to_ns, sample))
}

/// FTQ: quanta of fixed length; each listed entry is one quantum and the
/// work units done in it.
pub fn fixed_time(duration_ns: u64, quantum_ns: u64) -> (NoiseResult, Vec<NoiseDetour>) {
    let quantum = tsc::ns_to_cycles(quantum_ns);
    let clock = clock();
    let sample = |start| noise_units_within(|| clock.tsc(), start, quantum);
    on_this_cpu(noise::sampled(&clock, tsc::ns_to_cycles(duration_ns), tsc::cycles_to_ns, sample))
}

/// The selfish-detour loop on this CPU.
pub fn selfish(duration_ns: u64, threshold_ns: u64) -> (NoiseResult, Vec<NoiseDetour>) {
    let (duration, threshold) = (tsc::ns_to_cycles(duration_ns), tsc::ns_to_cycles(threshold_ns));
    on_this_cpu(noise::selfish(&clock(), duration, threshold, tsc::cycles_to_ns))
}

fn on_this_cpu((r, listed): (NoiseResult, Vec<NoiseDetour>)) -> (NoiseResult, Vec<NoiseDetour>) {
    (NoiseResult { cpu: hal::cpu_index() as u32, ..r }, listed)
}

/// NOISE_DONE: the result, then its listed detours.
fn report(run: &NoiseRun, outcome: Result<(NoiseResult, Vec<NoiseDetour>), i32>) {
    let (mut r, listed) =
        outcome.unwrap_or_else(|error| (NoiseResult { error, ..Default::default() }, Vec::new()));
    r.cookie = run.cookie;
    let mut bytes = Vec::with_capacity(NOISE_RESULT_BYTES + listed.len() * NOISE_DETOUR_BYTES);
    bytes.extend_from_slice(&r.to_bytes());
    for d in &listed {
        bytes.extend_from_slice(&d.to_bytes());
    }
    let deadline = cpu::rdtsc() + tsc::ns_to_cycles(1_000_000_000);
    loop {
        match kmsg::send(Peer::Host, KMSG_NOISE_DONE, &bytes) {
            Err(SendError::Full) if cpu::rdtsc() < deadline => sched::sleep_ns(100_000),
            Ok(()) => return,
            Err(e) => return hal::println!("noise: result not sent: {e:?}"),
        }
    }
}
