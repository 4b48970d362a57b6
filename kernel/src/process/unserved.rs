//! Forked children whose server on Linux is not made yet, as their
//! processes count them (deferred_server.rs makes the servers): a child
//! starts without one, gets one, or ends without ever having had one.

use core::sync::atomic::Ordering;

use super::family_tree::{DEFERRED, HELD, NEVER};
use super::sigstate::SIGKILL;
use super::types::Process;

/// Whether a (non-vfork) child `parent` forks now may start without a
/// server: the parent must have one, and no delegated call in flight,
/// whose end could change what the child inherits.
pub fn may_defer(parent: &Process) -> bool {
    parent.family.server.load(Ordering::Acquire) == HELD && parent.mem().calls.idle_of(parent.pid)
}

/// A forked child starts without a server.
pub fn defer(parent: &Process, child: &Process) {
    child.family.server.store(DEFERRED, Ordering::Release);
    parent.family.unserved_children.fetch_add(1, Ordering::AcqRel);
}

/// `child`'s server is made (HELD), or none will be (DEFERRED): those
/// waiting for it go on.
pub(super) fn settle(child: &Process, state: u8) {
    child.family.server.store(state, Ordering::Release);
    if state == HELD {
        uncount(child);
    }
    child.family.server_made.wake_all(true);
}

/// The parent no longer waits to make `child`'s server.
fn uncount(child: &Process) {
    if let Some(parent) = child.family.parent() {
        parent.family.unserved_children.fetch_sub(1, Ordering::AcqRel);
    }
}

/// At `p`'s end: true if it never had a server and never will (then no
/// host file holds it: it is freed at once, and Linux hears nothing).
pub fn ended_without_server(p: &Process) -> bool {
    let never = p
        .family
        .server
        .compare_exchange(DEFERRED, NEVER, Ordering::AcqRel, Ordering::Acquire)
        .is_ok();
    if never {
        uncount(p);
    }
    never
}

/// `p` ended: its children still without a server can have none now (it
/// came from `p`'s, which ends with it): they end too.
pub fn parent_ended(p: &Process) {
    if p.family.unserved_children.load(Ordering::Acquire) == 0 {
        return;
    }
    for child in p.family.children() {
        if child.family.server.load(Ordering::Acquire) == DEFERRED {
            child.begin_exit(SIGKILL);
        }
    }
}
