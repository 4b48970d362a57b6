//! The host's requests about programs (create, exec, start, kill,
//! release), each naming a program area, carried out in order by one kernel
//! thread (a program's end is ending.rs's).

use alloc::sync::Arc;
use alloc::vec::Vec;
use atoll_abi::*;
use core::sync::atomic::Ordering;
use lwk_logic::maps::{Backing, FileName};
use lwk_logic::user_pages::Access;

use super::area::{self, Area};
use super::cpu_set::Cpus;
use super::ending::{free, program_ended};
use super::programs::{occupant, Occupant, PROGRAMS};
use super::sigstate::{self, SigInfo};
use super::types::Process;
use super::{call_slots, cpus, exec, signal, thread, vdso};
use crate::kmsg::{self, Message, Peer};
use crate::mm::vm::AddressSpace;
use crate::sched;
use crate::status;
use crate::sync::Queue;
use hal::user;
use lwk_logic::errno::*;

static REQUESTS: Queue<(u16, Area, u64)> = Queue::new();

const SIGKILL: u32 = 9;

pub fn init(shared_phys: u64) {
    area::init(shared_phys);
    call_slots::init();
    sched::user::register(sched::user::CpuHooks {
        leaving: cpus::cpu_leaving,
        joined: cpus::cpu_joined,
    });
    for kind in [
        KMSG_PROC_CREATE,
        KMSG_PROC_START,
        KMSG_PROC_KILL,
        KMSG_PROC_RELEASE,
        KMSG_PROC_EXEC,
        KMSG_PAGE_WANTED,
    ] {
        kmsg::register(kind, post);
    }
    sched::spawn(0, "launcher", || loop {
        let (kind, area, arg) = REQUESTS.pop();
        handle(kind, area, arg);
    });
}

/// A host message about programs, from the message interrupt: queued for
/// the launcher thread, which may sleep. A message naming no area is
/// dropped (the host never sends one).
fn post(msg: &Message) {
    let Some(area) = Area::from_index(msg.word(0)) else {
        hal::println!("program: message {} names area {}: dropped", msg.kind, msg.word(0));
        return;
    };
    REQUESTS.push((msg.kind, area, msg.word(1)));
}

fn handle(kind: u16, area: Area, arg: u64) {
    match kind {
        KMSG_PROC_CREATE => {
            let (result, pid) = match create(area) {
                Ok(pid) => (0, pid),
                Err(e) => {
                    area.set_state(PROC_FREE);
                    (e.to_return(), 0)
                }
            };
            let words = [area.index() as u64, result, pid.into()];
            kmsg::send_words_waiting(Peer::Host, KMSG_PROC_CREATED, &words);
        }
        KMSG_PROC_START => start(area),
        KMSG_PROC_EXEC => {
            let (result, root) = match exec_image(area) {
                Ok(root) => (0, root),
                Err(e) => (e.to_return(), 0),
            };
            kmsg::send_words_waiting(
                Peer::Host,
                KMSG_PROC_EXECED,
                &[area.index() as u64, result, root],
            );
        }
        KMSG_PROC_KILL => kill(area, arg as u32),
        KMSG_PROC_RELEASE => release(area),
        KMSG_PAGE_WANTED => {
            let slot = usize::try_from(arg).unwrap_or(usize::MAX);
            call_slots::page_wanted(area, occupant(area).as_deref(), slot);
        }
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

/// What region `r` maps, for /proc/<pid>/maps (None: anonymous memory),
/// with the program's and its loader's `names` (none if not named).
fn backing(r: &Region, names: &[Option<Arc<FileName>>; 2]) -> Option<Backing> {
    if r.flags & REGION_STACK != 0 {
        return Some(Backing::Stack);
    }
    let which = if r.flags & REGION_LOADER != 0 {
        1
    } else if r.flags & REGION_PROGRAM != 0 {
        0
    } else {
        return None;
    };
    let name = names[which].clone()?;
    Some(Backing::File { name, offset: r.offset })
}

/// A file's name from the area, if it has one.
fn named(f: &atoll_abi::FileName) -> Option<Arc<FileName>> {
    let len = f.path.iter().position(|&b| b == 0).unwrap_or(f.path.len());
    (len > 0).then(|| Arc::new(FileName { dev: f.dev, ino: f.ino, path: f.path[..len].to_vec() }))
}

/// The address space the area's regions describe.
fn build(area: Area) -> Result<AddressSpace, Errno> {
    let req = area.create_request();
    if !req.brk_start.is_multiple_of(4096)
        || req.brk_start < USER_START
        || req.brk_start >= USER_END
    {
        return Err(EINVAL);
    }
    let mut vm = AddressSpace::new(req.brk_start)?;
    let names = req.files.each_ref().map(named);
    for r in &req.regions {
        let mapped = if r.flags & REGION_ON_DEMAND != 0 {
            vm.map_on_demand(r.start, r.size, access(r.prot))
        } else {
            vm.map_fixed(r.start, r.size, access(r.prot))
        };
        if let Some(backing) = backing(r, &names) {
            vm.label(r.start, r.start + r.size, false, &backing);
        }
        if let Err(e) = mapped {
            hal::println!(
                "program: cannot map {:#x}+{:#x}: error {}",
                r.start,
                r.size,
                -i64::from(e.number())
            );
            vm.release();
            return Err(e);
        }
    }
    if let Err(e) = vdso::map(&mut vm) {
        hal::println!("program: cannot map the vDSO: error {}", -i64::from(e.number()));
        vm.release();
        return Err(e);
    }
    Ok(vm)
}

/// An execve's new image, in place of the program's; its root.
fn exec_image(area: Area) -> Result<u64, Errno> {
    let p = occupant(area).ok_or(ESRCH)?;
    if !p.exec.is_pending() {
        return Err(EINVAL);
    }
    let mut vm = build(area)?;
    vdso::set_realtime_offset(&mut vm, p.realtime_offset_ns.load(Ordering::Relaxed));
    let root = vm.tables().phys();
    exec::swap_in(&p, vm);
    area.set_created(p.pid, root, p.cpu_mask());
    p.report_usage();
    area.set_state(PROC_LOADED);
    status::report_memory();
    Ok(root)
}

fn create(area: Area) -> Result<u32, Errno> {
    area.set_created_tsc(hal::cpu::rdtsc());
    if area.state() != PROC_CREATING || occupant(area).is_some() {
        hal::println!("program: refused: area {} is not being created", area.index());
        return Err(EBUSY);
    }
    let req = area.create_request();
    let online: Vec<usize> = sched::hotplug::active_cpus().collect();
    let cpus = if req.cpu_mask != 0 {
        // These cores, each of which must be online.
        let chosen: Vec<usize> =
            online.iter().copied().filter(|&c| c < 64 && req.cpu_mask & 1 << c != 0).collect();
        if chosen.len() != req.cpu_mask.count_ones() as usize {
            return Err(EINVAL);
        }
        chosen
    } else {
        let want = if req.cpu_count == 0 { online.len() } else { req.cpu_count as usize };
        if want > online.len() {
            return Err(EINVAL);
        }
        spread(&online, want)
    };
    let whole_enclave = req.cpu_mask == 0 && req.cpu_count == 0;
    let vm = build(area)?;
    let p = Process::new(area, vm, Cpus::new(&cpus, whole_enclave), None, req.kernel_mode);
    area.set_created(p.pid, p.root(), p.cpu_mask());
    p.report_usage();
    area.set_state(PROC_LOADED);
    let pid = p.pid;
    PROGRAMS.lock()[area.index()] = Some(Occupant { process: p, released: false, ended: false });
    status::report_memory();
    Ok(pid)
}

/// `want` of the enclave's cores for a new program: the least used first,
/// so that programs asking for fewer than all spread over the enclave.
fn spread(online: &[usize], want: usize) -> Vec<usize> {
    let mut load = [0usize; hal::MAX_CPUS];
    for o in PROGRAMS.lock().iter().flatten() {
        let mask = o.process.cpu_mask();
        for (c, l) in load.iter_mut().enumerate() {
            *l += (mask >> c & 1) as usize;
        }
    }
    let mut cpus = online.to_vec();
    cpus.sort_by_key(|&c| load[c]);
    cpus.truncate(want);
    cpus.sort_unstable();
    cpus
}

fn start(area: Area) {
    let Some(p) = occupant(area) else { return };
    if area.state() != PROC_LOADED {
        return;
    }
    if p.exec.take_start() {
        // The exec'ing thread goes on into the new image itself.
        area.set_state(PROC_RUNNING);
        return;
    }
    if p.family.fork_start.lock().is_some() {
        // A forked child: its parent starts it (`start_forked`).
        return;
    }
    let (entry, sp, realtime) = area.start_request();
    let offset = realtime as i64 - Process::monotonic_ns() as i64;
    p.realtime_offset_ns.store(offset, Ordering::Relaxed);
    vdso::set_realtime_offset(&mut p.vm.lock(), offset);
    area.set_state(PROC_RUNNING);
    let frame = user::initial_frame(entry, sp);
    if thread::spawn_user_thread(&p, frame, 0, 0, p.pid, 0, [0; 3]).is_err() {
        p.begin_exit(SIGKILL);
        program_ended(&p);
    }
}

/// Starts a forked child once its `atoll run` has adopted it, so that it
/// never runs unless the fork succeeded: it goes on from the fork with its
/// own first thread. False if that `atoll run` let go of it first (which
/// freed it).
pub fn start_forked(child: &Arc<Process>) -> bool {
    {
        // As `release` decides, under the same lock.
        let programs = PROGRAMS.lock();
        let held = programs[child.area.index()]
            .as_ref()
            .is_some_and(|o| Arc::ptr_eq(&o.process, child) && !o.released);
        if !held || child.area.state() != PROC_LOADED {
            return false;
        }
        child.area.set_state(PROC_RUNNING);
    }
    let Some(f) = child.family.fork_start.lock().take() else { return true };
    let (frame, fs, clear, mask) = (f.frame, f.fs_base, f.clear_child_tid, f.signal_mask);
    // Before it can end (on another core).
    child.family.ran.store(true, Ordering::Release);
    if thread::spawn_user_thread(child, frame, fs, clear, child.pid, mask, f.altstack).is_err() {
        child.family.ran.store(false, Ordering::Release);
        child.begin_exit(SIGKILL);
        program_ended(child);
    }
    true
}

/// A signal from Linux (`atoll run` passing on SIGINT, SIGTERM, SIGHUP;
/// SIGKILL when it must end): the program may handle it, as on Linux.
fn kill(area: Area, sig: u32) {
    let Some(p) = occupant(area) else { return };
    if area.state() == PROC_LOADED || sig == sigstate::SIGKILL || !(1..=64).contains(&sig) {
        p.begin_exit(sig.clamp(1, 64));
        if area.state() == PROC_LOADED {
            program_ended(&p);
        }
        return;
    }
    signal::send_to_process(&p, SigInfo::user(sig, sigstate::SI_USER, 0));
}

fn release(area: Area) {
    let Some(p) = occupant(area) else { return };
    let free_now = {
        let mut programs = PROGRAMS.lock();
        let Some(o) = programs[area.index()].as_mut() else { return };
        o.released = true;
        o.ended || area.state() == PROC_LOADED
    };
    if free_now {
        free(&p);
    } else {
        p.begin_exit(SIGKILL);
    }
}
