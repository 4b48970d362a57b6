//! The work FWQ and FTQ repeat (atoll_abi.h, "OS noise probes") and how it
//! is calibrated, defined once so that the LWK's probe and the CLI's on
//! Linux do the same work and size it the same way. Both read the TSC.

/// Runs `units` work units (each a 64-step dependent xorshift-multiply
/// chain: not affine, so the compiler cannot fold the steps into one as it
/// can a multiply-add chain); returns the chain's end. Never inlined:
/// calibration and the probe run the very same machine code (under
/// emulation two copies of one loop can differ in speed by 2x).
#[inline(never)]
pub fn noise_work(units: u64) -> u64 {
    let mut x = core::hint::black_box(1u64);
    for _ in 0..units {
        for _ in 0..64 {
            x = (x ^ (x >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
        x = core::hint::black_box(x);
    }
    x
}

/// Work units done from `start` until `clock()` is `quantum` ticks past it
/// (the clock is read every CHUNK units, so reading it costs little next to
/// the work). FTQ's sample.
pub fn noise_units_within(clock: impl Fn() -> u64, start: u64, quantum: u64) -> u64 {
    const CHUNK: u64 = 4;
    let mut done = 0;
    while clock().wrapping_sub(start) < quantum {
        noise_work(CHUNK);
        done += CHUNK;
    }
    done
}

/// Work units that take about `quantum` ticks undisturbed, timed the way
/// FWQ runs them (one call, no clock inside): after WARM_UP quanta of work
/// (an idle CPU can take milliseconds to reach its full speed, as can an
/// emulated one), the block size doubles until a block takes a quarter
/// quantum, then the fastest of five runs of that block is scaled up (a
/// detour during a run only makes it slower). FWQ's amount of work.
pub fn noise_units_for(clock: impl Fn() -> u64, quantum: u64) -> u64 {
    const WARM_UP: u64 = 20;
    noise_units_within(&clock, clock(), quantum.saturating_mul(WARM_UP));
    let time = |units: u64| {
        let start = clock();
        noise_work(units);
        clock().wrapping_sub(start).max(1)
    };
    let mut block = 16;
    while time(block) < quantum / 4 && block < 1 << 40 {
        block *= 2;
    }
    let fastest = (0..5).map(|_| time(block)).min().unwrap_or(1);
    ((quantum as u128 * block as u128 / fastest as u128) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::cell::Cell;

    #[test]
    fn the_chain_depends_on_every_unit() {
        assert_ne!(noise_work(1), noise_work(2));
        assert_eq!(noise_work(0), 1);
    }

    #[test]
    fn quanta_and_calibration() {
        // A clock that ticks once per read: 4 units per tick.
        let t = Cell::new(0u64);
        let clock = || {
            t.set(t.get() + 1);
            t.get()
        };
        assert_eq!(noise_units_within(clock, 0, 10), 9 * 4);
        // Each block "takes" one tick: the first block is a quarter quantum.
        assert_eq!(noise_units_for(clock, 4), 4 * 16);
    }
}
