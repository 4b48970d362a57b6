//! The set of cores a program may use, and its round robin over them
//! (cpus.rs changes the set as the enclave grows or shrinks).

use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

pub struct Cpus {
    pub(super) mask: AtomicU64,
    next: AtomicUsize,
    /// Started on all of the enclave's cores: it gets cores added later too.
    pub whole_enclave: bool,
}

impl Cpus {
    pub fn new(list: &[usize], whole_enclave: bool) -> Self {
        let mask = list.iter().fold(0u64, |m, &c| m | 1 << c);
        Cpus { mask: AtomicU64::new(mask), next: AtomicUsize::new(0), whole_enclave }
    }

    /// A forked child's: its parent's, as they are now.
    pub fn inherit(&self) -> Self {
        Cpus {
            mask: AtomicU64::new(self.mask()),
            next: AtomicUsize::new(0),
            whole_enclave: self.whole_enclave,
        }
    }

    pub fn mask(&self) -> u64 {
        self.mask.load(Ordering::Acquire)
    }

    pub fn first(&self) -> usize {
        self.mask().trailing_zeros() as usize
    }

    /// Core for the next thread: round robin over the set.
    pub fn pick(&self) -> usize {
        let mask = self.mask();
        let k = self.next.fetch_add(1, Ordering::Relaxed) % mask.count_ones().max(1) as usize;
        nth_bit(mask, k)
    }

    /// The enclave core that is the set's `n`th (from 0), if it has one
    /// (the HRT API numbers a program's CPUs so).
    pub fn nth(&self, n: u64) -> Option<usize> {
        let mask = self.mask();
        (n < mask.count_ones().into()).then(|| nth_bit(mask, n as usize))
    }
}

fn nth_bit(mut mask: u64, n: usize) -> usize {
    for _ in 0..n {
        mask &= mask - 1;
    }
    mask.trailing_zeros() as usize
}
