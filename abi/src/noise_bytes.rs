//! The noise probe's structs as message bytes (atoll_abi.h, "OS noise
//! probes"), field by field in their C layout.

use crate::bytes::{Reader, Writer};
use crate::{NoiseDetour, NoiseResult, NoiseRun};

pub const NOISE_RUN_BYTES: usize = core::mem::size_of::<NoiseRun>();
pub const NOISE_RESULT_BYTES: usize = core::mem::size_of::<NoiseResult>();
pub const NOISE_DETOUR_BYTES: usize = core::mem::size_of::<NoiseDetour>();

impl NoiseRun {
    pub fn to_bytes(&self) -> [u8; NOISE_RUN_BYTES] {
        let mut out = [0u8; NOISE_RUN_BYTES];
        let mut w = Writer { out: &mut out, at: 0 };
        w.put(&self.cookie.to_le_bytes());
        w.put(&self.cpu.to_le_bytes());
        w.put(&self.probe.to_le_bytes());
        w.put(&self.duration_ns.to_le_bytes());
        w.put(&self.threshold_ns.to_le_bytes());
        out
    }

    /// None unless `bytes` is exactly one NoiseRun.
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        if bytes.len() != NOISE_RUN_BYTES {
            return None;
        }
        let mut r = Reader { bytes, at: 0 };
        Some(NoiseRun {
            cookie: r.u64(),
            cpu: r.u32(),
            probe: r.u32(),
            duration_ns: r.u64(),
            threshold_ns: r.u64(),
        })
    }
}

impl NoiseResult {
    pub fn to_bytes(&self) -> [u8; NOISE_RESULT_BYTES] {
        let mut out = [0u8; NOISE_RESULT_BYTES];
        let mut w = Writer { out: &mut out, at: 0 };
        w.put(&self.cookie.to_le_bytes());
        w.put(&self.error.to_le_bytes());
        w.put(&self.cpu.to_le_bytes());
        for v in [self.duration_ns, self.loops, self.detours, self.total_ns, self.max_ns, self.irqs]
        {
            w.put(&v.to_le_bytes());
        }
        for v in [self.kernel_detours, self.kernel_ns, self.kernel_max_ns] {
            w.put(&v.to_le_bytes());
        }
        w.put(&self.listed.to_le_bytes());
        w.put(&self.pad0.to_le_bytes());
        out
    }
}

impl NoiseDetour {
    pub fn to_bytes(&self) -> [u8; NOISE_DETOUR_BYTES] {
        let mut out = [0u8; NOISE_DETOUR_BYTES];
        let mut w = Writer { out: &mut out, at: 0 };
        for v in [self.at_ns, self.len_ns, self.irqs] {
            w.put(&v.to_le_bytes());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_round_trip_and_length_check() {
        let run =
            NoiseRun { cookie: 7, cpu: 3, probe: 1, duration_ns: 1 << 40, threshold_ns: 2000 };
        let bytes = run.to_bytes();
        let back = NoiseRun::from_bytes(&bytes).expect("one NoiseRun");
        assert_eq!(
            (back.cookie, back.cpu, back.probe, back.duration_ns, back.threshold_ns),
            (7, 3, 1, 1 << 40, 2000)
        );
        assert!(NoiseRun::from_bytes(&bytes[1..]).is_none());
    }

    #[test]
    fn result_fields_sit_at_their_c_offsets() {
        let r = NoiseResult {
            cookie: 1,
            error: -22,
            cpu: 2,
            listed: 9,
            kernel_max_ns: 5,
            ..Default::default()
        };
        let b = r.to_bytes();
        let at = |off: usize| u64::from_le_bytes(b[off..off + 8].try_into().unwrap());
        assert_eq!(at(core::mem::offset_of!(NoiseResult, cookie)), 1);
        let off = core::mem::offset_of!(NoiseResult, error);
        assert_eq!(i32::from_le_bytes(b[off..off + 4].try_into().unwrap()), -22);
        let off = core::mem::offset_of!(NoiseResult, cpu);
        assert_eq!(u32::from_le_bytes(b[off..off + 4].try_into().unwrap()), 2);
        assert_eq!(at(core::mem::offset_of!(NoiseResult, kernel_max_ns)), 5);
        let off = core::mem::offset_of!(NoiseResult, listed);
        assert_eq!(u32::from_le_bytes(b[off..off + 4].try_into().unwrap()), 9);
    }
}
