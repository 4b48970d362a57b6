//! Kernel-mode programs' own calls (`atoll run --hrt`, docs/hrt.md).

use lwk_logic::errno::{SysResult, EPERM};

use super::call::Call;

/// SYS_HRT_DIRECT_CALL: where a kernel-mode program may CALL for its system
/// calls instead of SYSCALL; EPERM in ring 3, which could not run it.
pub fn direct_call(c: &mut Call) -> SysResult {
    if !c.process.kernel_mode {
        return Err(EPERM);
    }
    Ok(hal::user::direct_call_entry())
}
