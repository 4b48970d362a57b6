//! The host's requests about programs (create, start, kill, release),
//! carried out in order by one kernel thread, and the program's end.

use alloc::collections::VecDeque;
use alloc::sync::Arc;
use alloc::vec::Vec;
use atoll_abi::*;
use core::sync::atomic::Ordering;
use lwk_logic::user_pages::Access;

use super::{area, thread, vm::AddressSpace, Process};
use crate::kmsg::{self, Message, Peer};
use crate::sched;
use crate::status;
use crate::sync::{SpinLock, WaitQueue};
use hal::user;
use lwk_logic::errno::*;

static REQUESTS: SpinLock<VecDeque<(u16, u64)>> = SpinLock::new(VecDeque::new());
static ARRIVED: WaitQueue = WaitQueue::new();
static CURRENT: SpinLock<Option<Arc<Process>>> = SpinLock::new(None);
/// (released by the host, every thread ended) of the current program.
static LIFE: SpinLock<(bool, bool)> = SpinLock::new((false, false));

const SIGKILL: u32 = 9;

pub fn init(shared_phys: u64) {
    area::init(shared_phys);
    super::delegate::init();
    for kind in [KMSG_PROC_CREATE, KMSG_PROC_START, KMSG_PROC_KILL, KMSG_PROC_RELEASE] {
        kmsg::register(kind, post);
    }
    sched::spawn(0, "launcher", || loop {
        ARRIVED.wait_until(|| !REQUESTS.lock().is_empty());
        let next = REQUESTS.lock().pop_front();
        if let Some((kind, arg)) = next {
            handle(kind, arg);
        }
    });
}

/// A host message about programs, from the message interrupt: queued for
/// the launcher thread, which may sleep.
fn post(msg: &Message) {
    REQUESTS.lock().push_back((msg.kind, msg.word(0)));
    ARRIVED.wake_one(true);
}

fn handle(kind: u16, arg: u64) {
    match kind {
        KMSG_PROC_CREATE => {
            let (result, pid) = match create() {
                Ok(pid) => (0, pid),
                Err(e) => {
                    area::set_state(PROC_FREE);
                    (e.to_return(), 0)
                }
            };
            kmsg::send_words_waiting(Peer::Host, KMSG_PROC_CREATED, &[result, pid.into()]);
        }
        KMSG_PROC_START => start(),
        KMSG_PROC_KILL => kill(arg as u32),
        KMSG_PROC_RELEASE => release(),
        _ => {}
    }
}

fn access(prot: u32) -> Access {
    Access {
        read: prot & PROT_READ != 0,
        write: prot & PROT_WRITE != 0,
        exec: prot & PROT_EXEC != 0,
    }
}

fn create() -> Result<u32, Errno> {
    if CURRENT.lock().is_some() {
        crate::println!("program: refused: a program is still in the enclave");
        return Err(EBUSY);
    }
    let req = area::create_request();
    let online: Vec<usize> = hal::smp::online_cpus().collect();
    let want = if req.cpu_count == 0 { online.len() } else { req.cpu_count as usize };
    if want > online.len()
        || !req.brk_start.is_multiple_of(4096)
        || req.brk_start < USER_START
        || req.brk_start >= USER_END
    {
        return Err(EINVAL);
    }
    let mut vm = AddressSpace::new(req.brk_start)?;
    for r in &req.regions {
        if let Err(e) = vm.map_fixed(r.start, r.size, access(r.prot)) {
            crate::println!(
                "program: cannot map {:#x}+{:#x}: error {}",
                r.start,
                r.size,
                -i64::from(e.number())
            );
            vm.release();
            return Err(e);
        }
    }
    let p = Process::new(vm, online[..want].to_vec());
    area::set_created(p.pid, p.root);
    area::set_state(PROC_LOADED);
    *LIFE.lock() = (false, false);
    let pid = p.pid;
    *CURRENT.lock() = Some(p);
    status::report_memory();
    Ok(pid)
}

fn current() -> Option<Arc<Process>> {
    CURRENT.lock().clone()
}

fn start() {
    let Some(p) = current() else { return };
    if area::state() != PROC_LOADED {
        return;
    }
    let (entry, sp, realtime) = area::start_request();
    p.realtime_offset_ns.store(realtime as i64 - Process::monotonic_ns() as i64, Ordering::Relaxed);
    area::set_state(PROC_RUNNING);
    let pid = p.pid;
    if thread::spawn_user_thread(&p, user::initial_frame(entry, sp), 0, 0, pid).is_err() {
        p.begin_exit(SIGKILL);
        program_ended(&p);
    }
}

fn kill(signal: u32) {
    let Some(p) = current() else { return };
    p.begin_exit(signal);
    if area::state() == PROC_LOADED {
        program_ended(&p);
    }
}

fn release() {
    let Some(p) = current() else { return };
    let ended = {
        let mut life = LIFE.lock();
        life.0 = true;
        life.1
    };
    if ended || area::state() == PROC_LOADED {
        free(&p);
    } else {
        p.begin_exit(SIGKILL);
    }
}

/// The program's last thread has ended (or it never started): report its
/// status; its memory goes once the host has let go of it too.
pub fn program_ended(p: &Arc<Process>) {
    let released = {
        let mut life = LIFE.lock();
        life.1 = true;
        life.0
    };
    area::set_exited(p.wait_status());
    kmsg::send_words_waiting(Peer::Host, KMSG_PROC_EXIT, &[p.wait_status() as u64, p.pid as u64]);
    if released {
        free(p);
    }
}

fn free(p: &Arc<Process>) {
    {
        let mut cur = CURRENT.lock();
        if !cur.as_ref().is_some_and(|c| Arc::ptr_eq(c, p)) {
            return;
        }
        *cur = None;
    }
    // Every thread left these page tables on its way out; this core too.
    hal::paging::switch_root(hal::paging::kernel_root());
    p.vm.lock().release();
    area::set_state(PROC_FREE);
    status::report_memory();
    kmsg::send_words_waiting(Peer::Host, KMSG_PROC_FREED, &[p.pid as u64]);
}
