//! Whether the LWK runs as a co-kernel (in an enclave, beside Linux) or
//! standalone: set once, at the first instruction of boot.

use core::sync::atomic::{AtomicBool, Ordering};

static COKERNEL: AtomicBool = AtomicBool::new(false);

/// True from the first instruction of a co-kernel boot: the machine's serial
/// port, PIT and QEMU devices belong to Linux then.
pub fn is_cokernel() -> bool {
    COKERNEL.load(Ordering::Relaxed)
}

pub(crate) fn set_cokernel() {
    COKERNEL.store(true, Ordering::Relaxed);
}
