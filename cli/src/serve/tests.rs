//! The worker pool against a fake module that plays the program's part: it
//! hands out calls, collects results and counts kills.

use super::*;
use std::collections::VecDeque;
use std::sync::mpsc;
use std::time::Instant;

const LONG: Duration = Duration::from_secs(10);
/// A system call number the fake performer blocks on until released.
const BLOCKING: u64 = 1_000_000;

#[derive(Default)]
struct FakeModule {
    state: Mutex<FakeState>,
    changed: Condvar,
}

#[derive(Default)]
struct FakeState {
    /// Events not yet handed out. An EXITED or CRASHED event stays, as the
    /// module keeps answering it once the program is gone.
    events: VecDeque<Call>,
    /// (slot, ret) in delivery order.
    results: Vec<(u32, i64)>,
    kills: Vec<i32>,
    /// Fail this many IOC_CALLs with EINTR, after delivering their result
    /// when `deliver_then_interrupt`, else before.
    interrupts: usize,
    deliver_then_interrupt: bool,
    /// Fail every IOC_CALL with this errno.
    broken: Option<i32>,
}

impl FakeModule {
    fn push(&self, event: Call) {
        self.state.lock().unwrap().events.push_back(event);
        self.changed.notify_all();
    }

    fn syscall(&self, slot: u32, nr: u64) {
        let mut c = Call::new();
        (c.event, c.kind, c.slot, c.nr) = (EVENT_CALL, CALL_SYSCALL, slot, nr);
        self.push(c);
    }

    fn unsupported(&self, slot: u32, nr: u64) {
        let mut c = Call::new();
        (c.event, c.kind, c.slot, c.nr) = (EVENT_CALL, CALL_UNSUPPORTED, slot, nr);
        self.push(c);
    }

    fn exit(&self, wait_status: u32) {
        let mut c = Call::new();
        (c.event, c.wait_status) = (EVENT_EXITED, wait_status);
        self.push(c);
    }

    /// Waits until `n` results have come back.
    fn results(&self, n: usize) -> Vec<(u32, i64)> {
        let state = self.state.lock().unwrap();
        let (state, timeout) = self.changed.wait_timeout_while(state, LONG, |s| s.results.len() < n).unwrap();
        assert!(!timeout.timed_out(), "only {} of {n} results came back", state.results.len());
        state.results.clone()
    }
}

impl Module for Arc<FakeModule> {
    fn call(&self, call: &mut Call) -> io::Result<()> {
        let mut s = self.state.lock().unwrap();
        if let Some(errno) = s.broken {
            return Err(io::Error::from_raw_os_error(errno));
        }
        if s.interrupts > 0 && !s.deliver_then_interrupt {
            s.interrupts -= 1;
            return Err(io::Error::from_raw_os_error(libc::EINTR));
        }
        if call.done_slot >= 0 {
            s.results.push((call.done_slot as u32, call.done_ret));
            call.done_slot = -1;
            self.changed.notify_all();
        }
        if s.interrupts > 0 {
            s.interrupts -= 1;
            return Err(io::Error::from_raw_os_error(libc::EINTR));
        }
        let mut s = self.changed.wait_while(s, |s| s.events.is_empty()).unwrap();
        let event = match s.events.front() {
            Some(e) if e.event == EVENT_CALL => s.events.pop_front().unwrap(),
            Some(e) => *e,
            None => unreachable!(),
        };
        (call.event, call.kind, call.slot, call.nr, call.wait_status) =
            (event.event, event.kind, event.slot, event.nr, event.wait_status);
        Ok(())
    }

    fn kill(&self, signal: i32) -> io::Result<()> {
        self.state.lock().unwrap().kills.push(signal);
        Ok(())
    }
}

/// Answers nr * 10; blocks on BLOCKING until `release` sends a value.
struct FakePerformer {
    release: Mutex<mpsc::Receiver<i64>>,
}

impl Perform for FakePerformer {
    fn perform(&self, nr: u64, _args: [u64; 6]) -> i64 {
        if nr == BLOCKING {
            return self.release.lock().unwrap().recv_timeout(LONG).unwrap_or(-1);
        }
        nr as i64 * 10
    }
}

/// Shared lines the server printed.
#[derive(Clone, Default)]
struct Lines(Arc<Mutex<Vec<u8>>>);

impl io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Lines {
    /// The lines in sorted order: workers print concurrently.
    fn sorted(&self) -> Vec<String> {
        let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        assert!(text.is_empty() || text.ends_with('\n'));
        lines.sort();
        lines
    }
}

/// Results in slot order: workers deliver concurrently.
fn sorted(mut results: Vec<(u32, i64)>) -> Vec<(u32, i64)> {
    results.sort();
    results
}

struct Setup {
    module: Arc<FakeModule>,
    server: Arc<Server<Arc<FakeModule>, FakePerformer>>,
    release: mpsc::Sender<i64>,
    lines: Lines,
}

fn setup(strict: bool) -> Setup {
    let module = Arc::new(FakeModule::default());
    let (release, receiver) = mpsc::channel();
    let lines = Lines::default();
    let performer = FakePerformer { release: Mutex::new(receiver) };
    let server = Server::new(Arc::clone(&module), performer, Messages::to(lines.clone()), strict);
    server.start().unwrap();
    Setup { module, server, release, lines }
}

#[test]
fn serves_calls_until_the_program_exits() {
    let s = setup(false);
    s.module.syscall(0, 1);
    s.module.syscall(3, 2);
    assert_eq!(sorted(s.module.results(2)), [(0, 10), (3, 20)]);
    s.module.exit(7 << 8);
    assert_eq!(s.server.wait(LONG), Some(End::Exited(7 << 8)));
}

#[test]
fn a_blocked_call_holds_up_no_other() {
    let s = setup(false);
    s.module.syscall(0, BLOCKING);
    s.module.syscall(1, 5);
    // Slot 1 is answered while slot 0 still blocks its worker.
    assert_eq!(s.module.results(1), [(1, 50)]);
    s.release.send(42).unwrap();
    assert_eq!(s.module.results(2), [(1, 50), (0, 42)]);

    // Several blocked at once: each gets a worker, and one more waits.
    for slot in 0..5 {
        s.module.syscall(slot, BLOCKING);
    }
    s.module.syscall(9, 9);
    assert_eq!(s.module.results(3)[2], (9, 90));
    assert!(s.server.workers() >= 6, "{} workers", s.server.workers());
    for v in 0..5 {
        s.release.send(v).unwrap();
    }
    let results = s.module.results(8);
    let mut answered: Vec<u32> = results[3..].iter().map(|r| r.0).collect();
    answered.sort();
    assert_eq!(answered, [0, 1, 2, 3, 4]);
    assert!(s.server.workers() <= MAX_WORKERS);
}

#[test]
fn retries_after_a_signal_without_delivering_twice() {
    for deliver_then_interrupt in [false, true] {
        let s = setup(false);
        {
            let mut state = s.module.state.lock().unwrap();
            state.interrupts = 3;
            state.deliver_then_interrupt = deliver_then_interrupt;
        }
        s.module.syscall(0, 1);
        s.module.syscall(1, 2);
        s.module.syscall(2, 3);
        s.module.exit(0);
        assert_eq!(s.server.wait(LONG), Some(End::Exited(0)));
        let results = sorted(s.module.results(3));
        assert_eq!(results, [(0, 10), (1, 20), (2, 30)], "deliver_then_interrupt {deliver_then_interrupt}");
    }
}

#[test]
fn reports_each_unsupported_call_once() {
    let s = setup(false);
    s.module.unsupported(0, 39);
    s.module.unsupported(1, 39);
    s.module.unsupported(2, 99_999);
    let enosys = -(libc::ENOSYS as i64);
    assert_eq!(sorted(s.module.results(3)), [(0, enosys), (1, enosys), (2, enosys)]);
    assert_eq!(
        s.lines.sorted(),
        [
            "atoll run: system call 39 (getpid) is not supported in the enclave: it returned ENOSYS",
            "atoll run: system call 99999 is not supported in the enclave: it returned ENOSYS",
        ]
    );
    assert!(s.module.state.lock().unwrap().kills.is_empty());
}

#[test]
fn strict_ends_the_program() {
    let s = setup(true);
    s.module.unsupported(4, 56);
    s.module.unsupported(5, 57);
    assert_eq!(s.module.results(2).len(), 2);
    assert_eq!(s.module.state.lock().unwrap().kills, [libc::SIGSYS]);
    assert_eq!(
        s.lines.sorted(),
        [
            "atoll run: system call 56 (clone) is not supported in the enclave: ending the program (--strict)",
            "atoll run: system call 57 (fork) is not supported in the enclave: ending the program (--strict)",
        ]
    );
    s.module.exit(libc::SIGSYS as u32);
    assert_eq!(s.server.wait(LONG), Some(End::Exited(31)));
}

#[test]
fn crashes_and_failures_end_serving() {
    let s = setup(false);
    let mut crash = Call::new();
    crash.event = EVENT_CRASHED;
    s.module.push(crash);
    assert_eq!(s.server.wait(LONG), Some(End::Crashed));

    let s = setup(false);
    s.module.state.lock().unwrap().broken = Some(libc::ENODEV);
    s.module.syscall(0, 1); // wakes nobody: the next IOC_CALL fails at once
    match s.server.wait(LONG) {
        Some(End::Failed(why)) => assert!(why.contains("No such device"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn wait_times_out_while_the_program_runs() {
    let s = setup(false);
    let started = Instant::now();
    assert_eq!(s.server.wait(Duration::from_millis(50)), None);
    assert!(started.elapsed() >= Duration::from_millis(50));
    s.server.kill(libc::SIGINT).unwrap();
    assert_eq!(s.module.state.lock().unwrap().kills, [libc::SIGINT]);
}
