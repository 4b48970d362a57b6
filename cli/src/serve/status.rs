//! The program's end as `atoll run` reports it: its wait(2) status turned
//! into this process's exit status and, for a signal, the line a shell
//! prints ("Segmentation fault").

/// Exit status when the LWK crashed under the program, or `atoll run`
/// itself failed once the program was set up (like env and timeout: 125).
pub const FAILED: u8 = 125;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub exit_code: u8,
    /// A line for stderr, if there is something to say.
    pub message: Option<String>,
}

/// Exited with a code: that code. Killed by a signal: 128 + the signal and
/// its name, as a shell shows it (never "core dumped": nothing dumps core).
pub fn outcome(wait_status: u32) -> Outcome {
    let signal = (wait_status & 0x7f) as i32;
    match signal {
        0 => Outcome { exit_code: ((wait_status >> 8) & 0xff) as u8, message: None },
        0x7f => Outcome {
            exit_code: FAILED,
            message: Some(format!("atoll run: the program reported a stop, not an end (wait status {wait_status:#x})")),
        },
        _ => Outcome { exit_code: 128 + signal as u8, message: Some(signal_name(signal)) },
    }
}

/// What glibc's strsignal says for Linux's signal numbers.
pub fn signal_name(signal: i32) -> String {
    const NAMES: [&str; 32] = [
        "Unknown signal 0",
        "Hangup",
        "Interrupt",
        "Quit",
        "Illegal instruction",
        "Trace/breakpoint trap",
        "Aborted",
        "Bus error",
        "Floating point exception",
        "Killed",
        "User defined signal 1",
        "Segmentation fault",
        "User defined signal 2",
        "Broken pipe",
        "Alarm clock",
        "Terminated",
        "Stack fault",
        "Child exited",
        "Continued",
        "Stopped (signal)",
        "Stopped",
        "Stopped (tty input)",
        "Stopped (tty output)",
        "Urgent I/O condition",
        "CPU time limit exceeded",
        "File size limit exceeded",
        "Virtual timer expired",
        "Profiling timer expired",
        "Window changed",
        "I/O possible",
        "Power failure",
        "Bad system call",
    ];
    match signal {
        0..=31 => NAMES[signal as usize].to_string(),
        34..=64 => format!("Real-time signal {}", signal - 34),
        _ => format!("Unknown signal {signal}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: u32) -> u32 {
        code << 8
    }

    #[test]
    fn exit_codes() {
        assert_eq!(outcome(exited(0)), Outcome { exit_code: 0, message: None });
        assert_eq!(outcome(exited(3)), Outcome { exit_code: 3, message: None });
        assert_eq!(outcome(exited(255)), Outcome { exit_code: 255, message: None });
    }

    #[test]
    fn signals_like_a_shell() {
        for (signal, code, text) in [
            (libc::SIGSEGV, 139, "Segmentation fault"),
            (libc::SIGFPE, 136, "Floating point exception"),
            (libc::SIGILL, 132, "Illegal instruction"),
            (libc::SIGBUS, 135, "Bus error"),
            (libc::SIGSYS, 159, "Bad system call"),
            (libc::SIGABRT, 134, "Aborted"),
            (libc::SIGKILL, 137, "Killed"),
            (libc::SIGTERM, 143, "Terminated"),
            (libc::SIGINT, 130, "Interrupt"),
            (libc::SIGHUP, 129, "Hangup"),
            (libc::SIGPIPE, 141, "Broken pipe"),
        ] {
            let o = outcome(signal as u32);
            assert_eq!((o.exit_code, o.message.as_deref()), (code, Some(text)));
        }
        // The core-dump bit changes nothing.
        assert_eq!(outcome(0x80 | libc::SIGSEGV as u32).message.as_deref(), Some("Segmentation fault"));
        assert_eq!(outcome(0x80 | libc::SIGSEGV as u32).exit_code, 139);
        assert_eq!(signal_name(34), "Real-time signal 0");
        assert_eq!(signal_name(64), "Real-time signal 30");
        assert_eq!(signal_name(32), "Unknown signal 32");
    }

    #[test]
    fn a_stop_is_not_an_end() {
        let o = outcome(0x137f);
        assert_eq!(o.exit_code, FAILED);
        assert!(o.message.unwrap().contains("0x137f"));
    }
}
