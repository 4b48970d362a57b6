//! NMIs count as interrupts taken by the CPU they hit, so the detour one
//! makes in a noise probe is the kernel's, wherever between the probe's
//! reads it lands.

use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use super::helpers::{last_cpu, TestResult};
use crate::{ensure, sched};
use atoll_abi::{NoiseDetour, NoiseResult};
use hal::{cpu, irq, percpu, tsc};
use lwk_logic::noise::{self, Instants};

const NMIS: usize = 10;
const APART_NS: u64 = 10_000_000;
const PROBE_NS: u64 = 200_000_000;
const THRESHOLD_NS: u64 = 1_000;

pub fn nmi_is_the_kernels_detour() -> TestResult {
    let (r, listed, sent) = sched::spawn(last_cpu(), "nmi probe", probe).join();
    ensure!(!sent.is_empty(), "no NMI sent during the probe");
    let n = sent.len() as u64;
    // At least: a host that stalls the vCPU for long may let another
    // interrupt (a timer) land in the probe too.
    ensure!(r.irqs >= n, "the probe counted {} interrupts for {n} NMIs", r.irqs);
    for (i, &at) in sent.iter().enumerate() {
        // The gap the NMI landed in (in TSC cycles from the probe's start).
        let Some(d) = listed.iter().find(|d| d.at_ns <= at && at < d.at_ns + d.len_ns) else {
            return Err(alloc::format!("NMI {i} made no detour (listed: {})", listed.len()));
        };
        ensure!(d.irqs >= 1, "NMI {i}'s detour is charged no interrupt: {d:?}");
    }
    ensure!(r.kernel_detours >= n, "{} detours were the kernel's for {n} NMIs", r.kernel_detours);
    Ok(())
}

/// A selfish-detour probe on this CPU, in TSC cycles, that sends itself an
/// NMI every APART_NS: every other one right after a TSC read, the others
/// right after a count read, the two places where reads in one fixed order
/// would charge it to the gap next to the one it made. The result, its
/// detours, and when each NMI was sent (cycles from the probe's start).
fn probe() -> (NoiseResult, Vec<NoiseDetour>, Vec<u64>) {
    let me = percpu::cpu_index();
    let apart = tsc::ns_to_cycles(APART_NS);
    let start = Cell::new(None);
    let next = Cell::new(cpu::rdtsc() + apart);
    let sent = RefCell::new(Vec::with_capacity(NMIS));
    let (duration, threshold) = (tsc::ns_to_cycles(PROBE_NS), tsc::ns_to_cycles(THRESHOLD_NS));
    // None in the probe's last APART_NS: an NMI sent after the last instant's
    // count read would land after the probe (a host that stalls the vCPU
    // can make any read the last); before that, another instant follows.
    let in_time = |now: u64| start.get().is_some_and(|s| now + apart < s + duration);
    let send_if_due = |after_tsc: bool| {
        let n = sent.borrow().len();
        let now = cpu::rdtsc();
        if n < NMIS && (n % 2 == 0) == after_tsc && now >= next.get() && in_time(now) {
            sent.borrow_mut().push(now - start.get().unwrap_or(now));
            irq::send_nmi(me);
            next.set(now + apart);
        }
    };
    let tsc_read = || {
        let now = cpu::rdtsc();
        start.set(start.get().or(Some(now)));
        send_if_due(true);
        now
    };
    let count_read = || {
        let taken = irq::taken_on(me);
        send_if_due(false);
        taken
    };
    let clock = Instants::new(tsc_read, count_read);
    let (r, listed) = noise::selfish(&clock, duration, threshold, |cycles| cycles);
    (r, listed, sent.into_inner())
}
