//! A running program and its threads, as they are kept: `Process` (one
//! program area, its address space, cores, threads, signal state, timers,
//! family and delegated calls) and `UserThread` (what a program's thread
//! adds to a kernel thread). The parts' own state is in the leaf files;
//! what is done with it, in the files above.

use alloc::sync::Arc;
use alloc::vec::Vec;
use core::any::Any;
use core::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering};

use super::area::Area;
use super::call_times::CallTimes;
use super::cpu_set::Cpus;
use super::cputime::{CpuTime, Times};
use super::exec_state::ExecState;
use super::family_tree::Family;
use super::futex_queue::FutexTable;
use super::in_flight::InFlight;
use super::itimer::{Timer, Timers};
use super::lending::Lending;
use super::sigstate::{Actions, Pending};
use crate::mm::vm;
use crate::pipe::LocalFds;
use crate::sched::Thread;
use crate::sync::SpinLock;
use hal::user::UserCpuState;
use hal::user_space::{Root, RootCell};

/// A running program.
pub struct Process {
    pub pid: u32,
    /// Its area shared with the host (launch parameters, call slots).
    pub area: Area,
    /// The page tables its threads run on: a new one at execve, its
    /// lender's while a vfork child borrows them.
    pub(super) root: RootCell,
    pub vm: SpinLock<vm::AddressSpace>,
    /// LWK cores its threads go to.
    pub cpus: Cpus,
    /// Live threads; the process ends when the last one does.
    pub(super) threads: SpinLock<Vec<Arc<Thread>>>,
    /// Set once: the process is ending; threads leave at their next chance.
    exiting: AtomicBool,
    wait_status: AtomicU32,
    /// Cores that ran its threads (TLB shootdowns go there).
    pub ran_on: AtomicU64,
    /// vm's `removals` that every core has dropped (syscall/memory.rs).
    pub flushed_removals: AtomicU64,
    /// vm's `still_to_grow`, read without its lock (each delegated call
    /// looks): between updates under the lock the real range only shrinks,
    /// except at execve, which sets it anew.
    pub(super) stack_to_grow: [AtomicU64; 2],
    pub futexes: FutexTable,
    /// Its delegated calls in flight, and the memory unmapped while they
    /// may still write it (kept until they end).
    pub calls: InFlight,
    /// Where its delegated calls' time went (call_times.rs).
    pub call_times: CallTimes,
    /// System-call numbers already reported as unsupported (512 bits).
    reported: SpinLock<[u64; 8]>,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, from the host at start.
    pub realtime_offset_ns: AtomicI64,
    /// Delegation slots in use (bit per slot).
    slots: SpinLock<[u64; atoll_abi::MAX_SLOTS / 64]>,
    pub actions: SpinLock<Actions>,
    /// Signals sent to the process as a whole, for any of its threads.
    pub shared_pending: Pending,
    /// ITIMER_REAL (alarm, setitimer).
    pub real_timer: Arc<Timer>,
    /// timer_create's timers.
    pub timers: Timers,
    /// CPU time of its threads that have ended.
    ended_threads_time: SpinLock<Times>,
    /// Parent, children, and what a forked child starts with.
    pub family: Family<Process>,
    /// An execve in progress (`exec`).
    pub exec: ExecState,
    /// A vfork child runs on its parent's memory until it execs or ends
    /// (`vfork`).
    pub lending: Lending<Process>,
    /// Its descriptors that are ends of pipes inside the enclave.
    pub local_fds: LocalFds,
    /// Its threads run at CPL 0 (a hybrid runtime's); set at its start
    /// for good, inherited by its forked children.
    pub kernel_mode: bool,
}

/// What a user thread adds to a kernel thread.
pub struct UserThread {
    pub process: Arc<Process>,
    pub tid: u32,
    pub slot: usize,
    pub cpu_state: UserCpuState,
    /// set_tid_address / CLONE_CHILD_CLEARTID: zeroed and woken at exit.
    pub clear_child_tid: AtomicU64,
    pub robust_list: AtomicU64,
    pub signal_mask: AtomicU64,
    /// sched_setaffinity's cores (a mask); 0: all of the program's.
    pub affinity: AtomicU64,
    /// Signals sent to this thread.
    pub pending: Pending,
    /// The mask to restore once a handler runs (sigsuspend).
    pub saved_mask: SpinLock<Option<u64>>,
    /// sigaltstack: sp, flags, size.
    pub altstack: SpinLock<[u64; 3]>,
    pub cpu_time: CpuTime,
    /// Ended by another thread's execve: leaves at its next chance.
    pub killed: AtomicBool,
    /// Set once the thread has left the address space for good (exiting):
    /// switching back to it must not load the program's page tables again.
    pub left: AtomicBool,
}

static NEXT_PID: AtomicU32 = AtomicU32::new(100);

/// A fresh thread id (process ids come from the same numbers).
pub fn new_tid() -> u32 {
    NEXT_PID.fetch_add(1, Ordering::Relaxed)
}

impl Process {
    /// A process in `area`; `parent` is the process that forked it, if any
    /// (whose mode it takes), else `kernel_mode` is the host's word.
    pub fn new(
        area: Area,
        vm: vm::AddressSpace,
        cpus: Cpus,
        parent: Option<&Arc<Process>>,
        kernel_mode: bool,
    ) -> Arc<Process> {
        let (bottom, low) = vm.still_to_grow();
        let p = Arc::new(Process {
            pid: NEXT_PID.fetch_add(1, Ordering::Relaxed),
            area,
            root: RootCell::new(vm.tables()),
            vm: SpinLock::new(vm),
            cpus,
            threads: SpinLock::new(Vec::new()),
            exiting: AtomicBool::new(false),
            wait_status: AtomicU32::new(0),
            ran_on: AtomicU64::new(0),
            flushed_removals: AtomicU64::new(0),
            stack_to_grow: [AtomicU64::new(bottom), AtomicU64::new(low)],
            futexes: FutexTable::new(),
            calls: InFlight::new(),
            call_times: CallTimes::new(),
            reported: SpinLock::new([0; 8]),
            realtime_offset_ns: AtomicI64::new(0),
            slots: SpinLock::new([0; atoll_abi::MAX_SLOTS / 64]),
            actions: SpinLock::new(Actions::new()),
            shared_pending: Pending::new(),
            real_timer: Arc::new(Timer::real()),
            timers: Timers::new(),
            ended_threads_time: SpinLock::new(Times::default()),
            family: Family::new(parent),
            exec: ExecState::new(),
            lending: Lending::new(),
            local_fds: parent.map(|p| p.local_fds.copy()).unwrap_or_default(),
            kernel_mode: parent.map_or(kernel_mode, |q| q.kernel_mode),
        });
        // A program `atoll run` starts leads its own group and session;
        // a forked one inherits its parent's.
        let (pgid, sid) = parent.map_or((p.pid, p.pid), |q| (q.family.pgid(), q.family.sid()));
        p.family.set_group(pgid, sid);
        p.area.set_kernel_mode(p.kernel_mode);
        p
    }

    /// Whether `caller` may reach into this process (its memory, its
    /// signals): a ring-3 program may not reach a kernel-mode one, which
    /// would be running its own code at CPL 0 (whoever may run it there
    /// the host decided; docs/hrt.md).
    pub fn reachable_by(&self, caller: &Process) -> bool {
        !self.kernel_mode || caller.kernel_mode
    }

    /// The page tables' physical address, for the host.
    pub fn root(&self) -> u64 {
        self.root.get().phys()
    }

    /// The page tables its threads run on.
    pub fn tables(&self) -> Root {
        self.root.get()
    }

    /// Takes `vm`'s part of the stack still to grow (under its lock).
    pub fn note_stack(&self, vm: &vm::AddressSpace) {
        let (bottom, low) = vm.still_to_grow();
        self.stack_to_grow[0].store(bottom, Ordering::Release);
        self.stack_to_grow[1].store(low, Ordering::Release);
    }

    pub fn is_exiting(&self) -> bool {
        self.exiting.load(Ordering::Acquire)
    }

    /// Ends the process with `status` (a wait(2) status) unless it is
    /// already ending; every thread leaves at its next chance.
    pub fn begin_exit(&self, status: u32) {
        if self.exiting.swap(true, Ordering::AcqRel) {
            return;
        }
        self.wait_status.store(status, Ordering::Release);
        self.real_timer.stop();
        self.timers.stop_all();
        let threads: Vec<Arc<Thread>> = self.threads.lock().clone();
        for t in &threads {
            // Blocked threads wake and see `exiting`; running ones leave on
            // their way back to user mode.
            crate::sched::kick(t);
        }
    }

    pub fn wait_status(&self) -> u32 {
        self.wait_status.load(Ordering::Acquire)
    }

    /// Core for the next thread: round robin over the program's cores.
    pub(super) fn pick_cpu(&self) -> usize {
        self.cpus.pick()
    }

    /// Its live threads, as they are now.
    pub fn threads_now(&self) -> Vec<Arc<Thread>> {
        self.threads.lock().clone()
    }

    /// True the first time `nr` is reported.
    pub fn first_report(&self, nr: u64) -> bool {
        let i = (nr as usize).min(511);
        let mut r = self.reported.lock();
        let first = r[i / 64] & (1 << (i % 64)) == 0;
        r[i / 64] |= 1 << (i % 64);
        first
    }

    pub(super) fn take_slot(&self) -> Option<usize> {
        let mut s = self.slots.lock();
        let i = (0..atoll_abi::MAX_SLOTS).find(|&i| s[i / 64] & (1 << (i % 64)) == 0)?;
        s[i / 64] |= 1 << (i % 64);
        Some(i)
    }

    pub(super) fn put_slot(&self, i: usize) {
        self.slots.lock()[i / 64] &= !(1 << (i % 64));
    }

    pub fn thread_count(&self) -> usize {
        self.threads.lock().len()
    }

    /// The host's mirror of its memory must drop what it cached.
    pub fn note_unmapped(&self) {
        self.area.bump_map_generation();
    }

    /// True if `vm` (its address space, locked) took translations away
    /// that some core or the mirror may still hold.
    pub fn shootdown_pending(&self, vm: &vm::AddressSpace) -> bool {
        vm.removals() > self.flushed_removals.load(Ordering::Acquire)
    }

    /// `atoll status`'s thread count alone, when threads come and go (the
    /// memory figure sums every mapping: not on each thread's way).
    pub fn report_threads(&self, count: usize) {
        self.area.set_threads(count as u32);
    }

    /// Tells the host (for `atoll status`) its threads and memory now.
    pub fn report_usage(&self) {
        let mem = {
            let vm = self.vm.lock();
            self.note_stack(&vm);
            vm.mapped_bytes()
        };
        self.area.set_usage(self.thread_count() as u32, mem);
    }

    /// CPU time of all its threads, ended ones included; the calling
    /// thread's up to now.
    pub fn cpu_times(&self) -> Times {
        let me = crate::sched::current();
        let live = self.threads.lock().iter().fold(Times::default(), |sum, t| {
            let running_here = Arc::ptr_eq(t, &me);
            sum.add(
                UserThread::of(t).map_or_else(Default::default, |u| u.cpu_time.times(running_here)),
            )
        });
        live.add(*self.ended_threads_time.lock())
    }

    /// A thread ends: its time stays the process's.
    pub(super) fn keep_time(&self, t: Times) {
        let mut ended = self.ended_threads_time.lock();
        *ended = ended.add(t);
    }

    /// execve: caught signals go back to their default action.
    pub fn reset_actions_for_exec(&self) {
        const SIG_IGN: u64 = 1;
        for a in self.actions.lock().0.iter_mut() {
            if a[0] != SIG_IGN {
                *a = [0; 4];
            }
        }
    }

    /// Its cores as a bit mask.
    pub fn cpu_mask(&self) -> u64 {
        self.cpus.mask()
    }

    /// CLOCK_MONOTONIC in ns: the TSC since the LWK booted.
    pub fn monotonic_ns() -> u64 {
        hal::tsc::monotonic_ns()
    }

    pub fn realtime_ns(&self) -> i64 {
        Self::monotonic_ns() as i64 + self.realtime_offset_ns.load(Ordering::Relaxed)
    }
}

impl UserThread {
    /// execve by this thread: its state as a new program's first thread
    /// (the signal mask and pending signals stay).
    pub fn reset_for_exec(&self) {
        self.cpu_state.reset();
        *self.altstack.lock() = [0; 3];
        self.clear_child_tid.store(0, Ordering::Relaxed);
        self.robust_list.store(0, Ordering::Relaxed);
    }

    /// The user part of `t`, when it is a program's thread.
    #[inline]
    pub fn of(t: &Thread) -> Option<&UserThread> {
        let part: &dyn Any = t.user.as_deref()?;
        part.downcast_ref()
    }

    /// Its thread stops running on this core (interrupts off).
    pub fn leave_cpu(&self) {
        self.cpu_state.switch_out();
        self.cpu_time.switch_out();
    }

    /// Its thread runs on this core next (interrupts off): loads its CPU
    /// state and, unless it has left it, its address space (false then).
    pub fn enter_cpu(&self) -> bool {
        self.cpu_state.switch_in();
        self.cpu_time.switch_in();
        if self.left.load(Ordering::Acquire) {
            return false;
        }
        self.process.tables().load();
        self.process.ran_on.fetch_or(1 << hal::cpu_index(), Ordering::Relaxed);
        true
    }

    /// The thread should leave: its program ends or another thread execs.
    pub fn must_leave(&self) -> bool {
        self.process.is_exiting() || self.killed.load(Ordering::Acquire)
    }
}
