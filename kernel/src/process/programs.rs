//! The enclave's programs, by program area: each area's occupant from
//! create to free, which every part looks programs up in (launch.rs fills
//! it, ending.rs empties it).

use alloc::sync::Arc;
use alloc::vec::Vec;
use atoll_abi::{MAX_PROGRAMS, PROC_LOADED};

use super::area::Area;
use super::types::Process;
use crate::status;
use crate::sync::SpinLock;

/// A program area's occupant, from create to free.
pub(super) struct Occupant {
    pub(super) process: Arc<Process>,
    /// The host has let go of its memory (RELEASE).
    pub(super) released: bool,
    /// Every thread has ended (or it never started).
    pub(super) ended: bool,
}

pub(super) static PROGRAMS: SpinLock<[Option<Occupant>; MAX_PROGRAMS]> =
    SpinLock::new([const { None }; MAX_PROGRAMS]);

/// Every program of the enclave, as they are now.
pub fn all_processes() -> Vec<Arc<Process>> {
    PROGRAMS.lock().iter().flatten().map(|o| o.process.clone()).collect()
}

/// Every program in the enclave.
pub fn all() -> Vec<Arc<Process>> {
    PROGRAMS.lock().iter().flatten().map(|o| o.process.clone()).collect()
}

/// The program with LWK pid `pid`, if it is in this enclave.
pub fn find(pid: u32) -> Option<Arc<Process>> {
    PROGRAMS.lock().iter().flatten().find(|o| o.process.pid == pid).map(|o| o.process.clone())
}

/// The program in `area`, if any.
pub fn occupant(area: Area) -> Option<Arc<Process>> {
    PROGRAMS.lock()[area.index()].as_ref().map(|o| o.process.clone())
}

/// A child the LWK forked into its own (claimed) area: LOADED, waiting
/// for the host to adopt and start it.
pub fn adopt(child: &Arc<Process>) {
    let area = child.area;
    area.set_created(child.pid, child.root(), child.cpu_mask());
    area.clear_host_pid();
    // A call an earlier occupant left posted is not this child's.
    area.clear_slots();
    child.report_usage();
    PROGRAMS.lock()[area.index()] =
        Some(Occupant { process: child.clone(), released: false, ended: false });
    area.set_state(PROC_LOADED);
    status::report_memory();
}

/// Whether a host file still holds `child` (its server has not let go).
pub fn still_held(child: &Arc<Process>) -> bool {
    PROGRAMS.lock()[child.area.index()]
        .as_ref()
        .is_some_and(|o| Arc::ptr_eq(&o.process, child) && !o.released)
}
