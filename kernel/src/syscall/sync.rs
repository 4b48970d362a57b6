//! futex: wait, wake, requeue, wake_op and the bitset variants.

use lwk_logic::errno::*;

use super::call::Call;
use super::time::{deadline_after, deadline_at, read_timespec};

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_REQUEUE: u64 = 3;
const FUTEX_CMP_REQUEUE: u64 = 4;
const FUTEX_WAKE_OP: u64 = 5;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
const FUTEX_PRIVATE: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;

pub fn futex(c: &mut Call) -> SysResult {
    let [uaddr, op, val, timeout, uaddr2, val3] = c.args;
    let cmd = op & !(FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME);
    let p = c.process;
    // Keyed by address in the memory the caller runs on (a vfork child's
    // lender's), as Linux keys private futexes by address space.
    let m = c.mem();
    let t = &m.futexes;
    match cmd {
        FUTEX_WAIT | FUTEX_WAIT_BITSET => {
            let deadline = if timeout == 0 {
                None
            } else {
                let ts = read_timespec(p, timeout)?;
                // FUTEX_WAIT times out after a span; the bitset variant at
                // a point on the monotonic (or realtime) clock.
                Some(if cmd == FUTEX_WAIT {
                    deadline_after(ts)
                } else {
                    deadline_at(p, ts, op & FUTEX_CLOCK_REALTIME != 0)
                })
            };
            let bitset = if cmd == FUTEX_WAIT { u32::MAX } else { val3 as u32 };
            t.wait(p, uaddr, val as u32, deadline, bitset)
        }
        FUTEX_WAKE => t.wake(p, uaddr, val as u32, u32::MAX),
        FUTEX_WAKE_BITSET => t.wake(p, uaddr, val as u32, val3 as u32),
        FUTEX_REQUEUE => t.requeue(p, uaddr, val as u32, uaddr2, timeout as u32, None),
        FUTEX_CMP_REQUEUE => {
            t.requeue(p, uaddr, val as u32, uaddr2, timeout as u32, Some(val3 as u32))
        }
        FUTEX_WAKE_OP => t.wake_op(p, uaddr, val as u32, uaddr2, timeout as u32, val3 as u32),
        _ => Err(ENOSYS),
    }
}
