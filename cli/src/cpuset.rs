//! Linux CPU numbers <-> the ABI's host CPU bitmap (`[u64; HOST_CPU_WORDS]`).

use atoll_abi::HOST_CPU_WORDS;

/// CPU numbers the bitmap can hold: 0 ..= MAX_HOST_CPU - 1.
pub const MAX_HOST_CPU: u32 = (HOST_CPU_WORDS * 64) as u32;

/// The bitmap with a bit set for each CPU. Numbers >= MAX_HOST_CPU are
/// rejected earlier, by the parser.
pub fn to_bits(cpus: &[u32]) -> [u64; HOST_CPU_WORDS] {
    let mut bits = [0u64; HOST_CPU_WORDS];
    for &cpu in cpus {
        bits[cpu as usize / 64] |= 1 << (cpu % 64);
    }
    bits
}

/// The CPUs whose bit is set, in increasing order.
pub fn from_bits(bits: &[u64; HOST_CPU_WORDS]) -> Vec<u32> {
    (0..MAX_HOST_CPU).filter(|&cpu| bits[cpu as usize / 64] & (1 << (cpu % 64)) != 0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let cpus = vec![0, 1, 63, 64, 130, 255];
        let bits = to_bits(&cpus);
        assert_eq!(bits, [(1 << 63) | 3, 1, 1 << 2, 1 << 63]);
        assert_eq!(from_bits(&bits), cpus);
        assert!(from_bits(&[0; HOST_CPU_WORDS]).is_empty());
    }
}
