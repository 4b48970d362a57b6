//! The Rust crate at work, with every count checked, as
//! tests/programs/hrt_api.c does in C: a thread on every CPU, fork/join 16
//! deep, a condvar passing a token among threads, Active Messages to every
//! CPU and broadcasts, a barrier, nested interrupt-off regions (messages still
//! arrive after them). One line per
//! part; exit status 0 if all passed, 2 outside an enclave.
use std::sync::atomic::{AtomicU64, Ordering};

use atoll_hrt::{am, spawn_on, Barrier, Condvar, IrqRegion, Mutex};

const DEPTH: usize = 16;
const ROUNDS: u64 = 100;
const MESSAGES: u64 = 300;

static GOT: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];
static WRONG_CPU: AtomicU64 = AtomicU64::new(0);
static BROADCASTS: [AtomicU64; 64] = [const { AtomicU64::new(0) }; 64];

fn level(depth: usize, n: usize) -> usize {
    if atoll_hrt::this_cpu() != depth % n {
        WRONG_CPU.fetch_add(1, Ordering::Relaxed);
    }
    if depth == DEPTH {
        return depth;
    }
    let child = spawn_on(Some((depth + 1) % n), move || level(depth + 1, n)).expect("spawn");
    depth + child.join()
}

fn on_message(_action: u32, _arg: u64) {
    let cpu = atoll_hrt::this_cpu();
    GOT[cpu].fetch_add(1, Ordering::Relaxed);
}

fn on_broadcast(_action: u32, _arg: u64) {
    BROADCASTS[atoll_hrt::this_cpu()].fetch_add(1, Ordering::Relaxed);
}

fn settle(counts: &[AtomicU64], want: u64) -> u64 {
    for _ in 0..60_000 {
        let total: u64 = counts.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        if total >= want {
            return total;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
}

fn report(ok: bool, what: &str, failures: &mut u32) {
    println!("rust {what} {}", if ok { "ok" } else { "FAILED" });
    if !ok {
        *failures += 1;
    }
}

fn main() {
    let Some(kernel) = atoll_hrt::kernel_mode() else {
        println!("rust hrt: not in an Atoll enclave");
        std::process::exit(2);
    };
    let n = atoll_hrt::ncpus().min(64);
    let mut failures = 0;
    println!("rust hrt: {} mode, {n} cpus", if kernel { "kernel" } else { "user" });

    let handles: Vec<_> =
        (0..n).map(|c| spawn_on(Some(c), atoll_hrt::this_cpu).expect("spawn")).collect();
    let ran: Vec<usize> = handles.into_iter().map(|h| h.join()).collect();
    report(ran == (0..n).collect::<Vec<_>>(), "threads on every cpu:", &mut failures);

    let sum = spawn_on(Some(0), move || level(0, n)).expect("spawn").join();
    report(
        sum == DEPTH * (DEPTH + 1) / 2 && WRONG_CPU.load(Ordering::Relaxed) == 0,
        "fork/join:",
        &mut failures,
    );

    // A token passed around 2n+1 threads: each waits for its turn.
    static TURN: Mutex<(u64, u64)> = Mutex::new((0, 0)); // (turn, passes)
    static CHANGED: Condvar = Condvar::new();
    let holders = (2 * n + 1) as u64;
    let handles: Vec<_> = (0..holders)
        .map(|me| {
            spawn_on(Some(me as usize % n), move || {
                for _ in 0..ROUNDS {
                    let mut g = TURN.lock();
                    while g.0 % holders != me {
                        g = CHANGED.wait(g);
                    }
                    g.0 += 1;
                    g.1 += 1;
                    CHANGED.notify_all();
                }
            })
            .expect("spawn")
        })
        .collect();
    handles.into_iter().for_each(|h| h.join());
    report(TURN.lock().1 == holders * ROUNDS, "condvar token ring:", &mut failures);

    let barrier: &'static Barrier = Box::leak(Box::new(Barrier::new(n as u32)));
    let handles: Vec<_> =
        (0..n).map(|c| spawn_on(Some(c), move || barrier.wait()).expect("spawn")).collect();
    let last = handles.into_iter().map(|h| h.join()).filter(|&l| l).count();
    report(last == 1, "barrier:", &mut failures);

    am::register(None, 1, on_message).expect("register");
    am::register(None, 2, on_broadcast).expect("register");
    for _ in 0..MESSAGES {
        for c in 0..n {
            while am::send(c, 1, 7).is_err() {}
        }
    }
    let got = settle(&GOT, MESSAGES * n as u64);
    let each = GOT[..n].iter().all(|c| c.load(Ordering::Relaxed) == MESSAGES);
    report(got == MESSAGES * n as u64 && each, "active messages:", &mut failures);
    for b in 0..MESSAGES {
        while am::broadcast(2, b).is_err() {}
    }
    settle(&BROADCASTS, MESSAGES * n as u64);
    std::thread::sleep(std::time::Duration::from_millis(100));
    let once = BROADCASTS[..n].iter().all(|c| c.load(Ordering::Relaxed) == MESSAGES);
    report(once, "broadcast exactly once per cpu:", &mut failures);

    // Interrupts off and back on around a count: it must still be right after.
    let before = GOT[0].load(Ordering::Relaxed);
    {
        let _outer = IrqRegion::enter();
        let _inner = IrqRegion::enter();
        GOT[0].fetch_add(1, Ordering::Relaxed);
    }
    while am::send(0, 1, 7).is_err() {}
    settle(&GOT[..1], before + 2);
    report(
        GOT[0].load(Ordering::Relaxed) == before + 2,
        "messages after interrupt-off regions:",
        &mut failures,
    );
    println!("rust hrt: {failures} failures");
    std::process::exit(if failures == 0 { 0 } else { 1 });
}
