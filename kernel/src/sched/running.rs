//! Which thread runs on each core: hal's switcher keeps it, and switches
//! between threads. The switcher calls back into the scheduler through the
//! `Task` impl (switch.rs), so this file needs nothing above it.

use alloc::sync::Arc;
use hal::task::Switcher;
use spin::Once;

use super::thread::ThreadId;
use super::user::Thread;

/// Each core's running thread, and the switch between threads.
static SWITCHER: Once<Switcher<Thread>> = Once::new();

pub(super) fn switcher() -> &'static Switcher<Thread> {
    SWITCHER.call_once(Switcher::claim)
}

pub fn current() -> Arc<Thread> {
    switcher().running()
}

/// Runs `f` with the thread running here, without a lock or a reference
/// count (the system-call fast path).
pub fn with_current<R>(f: impl FnOnce(&Thread) -> R) -> R {
    switcher().with_running(f)
}

/// Runs `f` with the current thread's id and name, for fault reports:
/// never blocks or allocates, and works before the scheduler does.
pub fn describe_current<R>(f: impl FnOnce(ThreadId, &str) -> R) -> R {
    let mut f = Some(f);
    let described = SWITCHER
        .get()
        .and_then(|s| s.try_with_running(|t| f.take().map(|f| f(t.id, &t.name))))
        .flatten();
    match (described, f) {
        (Some(r), _) => r,
        (None, Some(f)) => f(0, "boot"),
        (None, None) => unreachable!("the description ran but gave nothing"),
    }
}
