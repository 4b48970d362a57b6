//! SIGINT, SIGTERM and SIGHUP while a program runs: the first one is passed
//! on to the program (IOC_KILL by the caller), and `atoll run` waits for it
//! to end; a second one ends `atoll run` at once, with 128 + its number.
//! That is safe: the module frees the program when /dev/atoll is closed.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::flag;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

static HUP: AtomicBool = AtomicBool::new(false);
static INT: AtomicBool = AtomicBool::new(false);
static TERM: AtomicBool = AtomicBool::new(false);
/// Set by the first signal: the next one exits.
static ARMED: AtomicBool = AtomicBool::new(false);

const CAUGHT: [(i32, &AtomicBool); 3] = [(SIGHUP, &HUP), (SIGINT, &INT), (SIGTERM, &TERM)];

/// Catches the three signals from now on, and lets the module interrupt a
/// worker's blocking call when a signal comes for the program's thread
/// that made it (atoll_abi::CANCEL_SIGNAL).
pub fn catch() -> io::Result<()> {
    crate::sys::interrupt_on(atoll_abi::CANCEL_SIGNAL)?;
    for (signal, seen) in CAUGHT {
        // The shutdown goes first, so that it sees ARMED as it was before
        // this signal.
        flag::register_conditional_shutdown(signal, 128 + signal, &ARMED)?;
        flag::register(signal, seen)?;
        flag::register(signal, &ARMED)?;
    }
    Ok(())
}

/// A signal that came since the last call, if any.
pub fn take() -> Option<i32> {
    CAUGHT.iter().find(|(_, seen)| seen.swap(false, Ordering::SeqCst)).map(|&(signal, _)| signal)
}
