//! The work FWQ and FTQ repeat (atoll_abi.h, "OS noise probes"), defined
//! once so that the LWK's probe and the CLI's on Linux do the same work.

/// Runs `units` work units (each a 64-step dependent multiply-add chain
/// the compiler cannot fold away); returns the chain's end.
pub fn noise_work(units: u64) -> u64 {
    let mut x = core::hint::black_box(1u64);
    for _ in 0..units {
        for _ in 0..64 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        }
        x = core::hint::black_box(x);
    }
    x
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_chain_depends_on_every_unit() {
        assert_ne!(super::noise_work(1), super::noise_work(2));
        assert_eq!(super::noise_work(0), 1);
    }
}
