//! Fresh program memory for what the LWK and `atoll run` hand each other
//! (a delegated call reads and writes only the program's memory): mapped
//! for one exchange, unmapped after.

use lwk_logic::errno::Errno;
use lwk_logic::user_pages::Access;

use super::call::Call;
use super::mapping::{retire, settle};
use crate::mm::vm;

/// Runs `f` with `len` bytes of fresh memory mapped in the program, for
/// what the LWK and `atoll run` hand each other, unmapped after.
pub fn with_scratch<R>(
    c: &Call,
    len: u64,
    f: impl FnOnce(&Call, u64) -> Result<R, Errno>,
) -> Result<R, Errno> {
    let rw = Access { read: true, write: true, exec: false };
    let mut freed = vm::Freed::new();
    let at = c.mem().vm.lock().mmap(0, len, rw, vm::MapHow::default(), &mut freed);
    settle(c, freed);
    let at = at?;
    let r = f(c, at);
    let mut freed = vm::Freed::new();
    c.mem().vm.lock().unmap(at, len, &mut freed);
    retire(c, freed);
    r
}
