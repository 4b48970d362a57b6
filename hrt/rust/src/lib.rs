//! Atoll's hybrid-runtime API for Rust (docs/hrt.md): the same calls as
//! the C header `atoll/hrt.h`, whose library this crate links, with owned
//! types: a `JoinHandle` per thread, a `Mutex` whose guard unlocks, a
//! `Condvar` that waits on that guard, an `IrqRegion` that restores on drop.
//! A program using it runs at CPL 0 (`atoll run --hrt`) or in ring 3 in any
//! enclave; outside an enclave the calls fail with ENOSYS.
//!
//! API threads are the runtime's threads, not std's: they have thread-local
//! storage of their own but no libc thread state, so code on them must not
//! allocate (Rust's allocator is libc's malloc), print, or use `std::thread`.

mod sys;

use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};

/// An errno value from the API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

fn check(r: i32) -> Result<(), Errno> {
    if r == 0 {
        Ok(())
    } else {
        Err(Errno(r))
    }
}

/// Some(true) at CPL 0, Some(false) in ring 3, None outside an enclave.
pub fn kernel_mode() -> Option<bool> {
    // SAFETY: no arguments; the library finds its mode once.
    match unsafe { sys::hrt_kernel_mode() } {
        1 => Some(true),
        0 => Some(false),
        _ => None,
    }
}

/// How many CPUs the program has (numbered from 0).
pub fn ncpus() -> usize {
    // SAFETY: no arguments.
    unsafe { sys::hrt_ncpus() }.max(0) as usize
}

/// The CPU the calling thread runs on.
pub fn this_cpu() -> usize {
    // SAFETY: no arguments.
    unsafe { sys::hrt_this_cpu() }.max(0) as usize
}

/// A call into the LWK that does nothing.
pub fn null_call() -> i64 {
    // SAFETY: no arguments.
    unsafe { sys::hrt_null() }
}

/// What a new thread runs and where its result goes: made by the creator,
/// freed by the joiner, so that the thread itself allocates nothing.
struct Packet<F, T> {
    f: Option<F>,
    result: Option<T>,
}

extern "C" fn run_packet<F: FnOnce() -> T, T>(arg: *mut c_void) -> *mut c_void {
    // SAFETY: arg is the Packet spawn_on leaked for this thread, which only
    // this thread touches until join has seen it end.
    let p = unsafe { &mut *(arg as *mut Packet<F, T>) };
    if let Some(f) = p.f.take() {
        p.result = Some(f());
    }
    arg
}

/// A thread bound to a CPU; `join` waits for it and gives its result.
pub struct JoinHandle<F, T> {
    thread: sys::hrt_thread_t,
    packet: *mut Packet<F, T>,
}

/// Runs `f` on a new API thread bound to `cpu` (None: the program's next
/// CPU). `f` must not allocate or print (see the crate's note).
pub fn spawn_on<F, T>(cpu: Option<usize>, f: F) -> Result<JoinHandle<F, T>, Errno>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let packet = Box::into_raw(Box::new(Packet { f: Some(f), result: None }));
    let mut thread: sys::hrt_thread_t = std::ptr::null_mut();
    let cpu = cpu.map_or(sys::HRT_ANY_CPU, |c| c as i32);
    // SAFETY: run_packet::<F, T> matches the packet's type; the packet
    // lives until join (or is freed here if no thread took it).
    let r = unsafe {
        sys::hrt_thread_create(&mut thread, cpu, Some(run_packet::<F, T>), packet as *mut c_void)
    };
    if r != 0 {
        // SAFETY: no thread was made: the packet is still only ours.
        drop(unsafe { Box::from_raw(packet) });
        return Err(Errno(r));
    }
    Ok(JoinHandle { thread, packet })
}

impl<F, T> JoinHandle<F, T> {
    /// Waits for the thread's end and gives its result.
    pub fn join(self) -> T {
        // SAFETY: the handle is joined once (join takes self).
        let r = unsafe { sys::hrt_thread_join(self.thread, std::ptr::null_mut()) };
        assert_eq!(r, 0, "hrt_thread_join of a thread of ours failed");
        // SAFETY: the thread has ended: the packet is ours again.
        let mut packet = unsafe { Box::from_raw(self.packet) };
        packet.result.take().expect("the thread ran its closure")
    }
}

// SAFETY: the handle only names the thread and its packet, whose closure and
// result are Send.
unsafe impl<F: Send, T: Send> Send for JoinHandle<F, T> {}

/// A mutex whose waiters sleep in the LWK and are woken with an IPI.
pub struct Mutex<T> {
    raw: UnsafeCell<sys::hrt_mutex_t>,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only through a guard, one at a time.
unsafe impl<T: Send> Sync for Mutex<T> {}
// SAFETY: as for Sync.
unsafe impl<T: Send> Send for Mutex<T> {}

pub struct MutexGuard<'a, T> {
    mutex: &'a Mutex<T>,
    _not_send: PhantomData<*const ()>,
}

impl<T> Mutex<T> {
    pub const fn new(value: T) -> Self {
        Mutex { raw: UnsafeCell::new(sys::hrt_mutex_t { state: 0 }), value: UnsafeCell::new(value) }
    }

    pub fn lock(&self) -> MutexGuard<'_, T> {
        // SAFETY: the raw mutex lives as long as self.
        unsafe { sys::hrt_mutex_lock(self.raw.get()) };
        MutexGuard { mutex: self, _not_send: PhantomData }
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.mutex.value.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *self.mutex.value.get() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        // SAFETY: the guard holds the lock.
        unsafe { sys::hrt_mutex_unlock(self.mutex.raw.get()) };
    }
}

/// A condition variable whose signal kicks the waiter's CPU.
pub struct Condvar {
    raw: UnsafeCell<sys::hrt_cond_t>,
}

// SAFETY: the API's condvar is made to be shared between threads.
unsafe impl Sync for Condvar {}
// SAFETY: as for Sync.
unsafe impl Send for Condvar {}

impl Condvar {
    pub const fn new() -> Self {
        Condvar { raw: UnsafeCell::new(sys::hrt_cond_t { seq: 0, waiters: 0 }) }
    }

    /// Releases the guard's lock, waits for a signal, takes the lock again.
    pub fn wait<'a, T>(&self, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        // SAFETY: the guard holds its mutex's lock, which the call gives up
        // and takes again before returning; the guard stays valid.
        unsafe { sys::hrt_cond_wait(self.raw.get(), guard.mutex.raw.get()) };
        guard
    }

    pub fn notify_one(&self) {
        // SAFETY: the raw condvar lives as long as self.
        unsafe { sys::hrt_cond_signal(self.raw.get()) };
    }

    pub fn notify_all(&self) {
        // SAFETY: as above.
        unsafe { sys::hrt_cond_broadcast(self.raw.get()) };
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

/// `n` threads meet: each waits until all have come.
pub struct Barrier {
    raw: UnsafeCell<sys::hrt_barrier_t>,
}

// SAFETY: the API's barrier is made to be shared between threads.
unsafe impl Sync for Barrier {}
// SAFETY: as for Sync.
unsafe impl Send for Barrier {}

impl Barrier {
    pub fn new(n: u32) -> Self {
        let b = Barrier {
            raw: UnsafeCell::new(sys::hrt_barrier_t { arrived: 0, total: 0, generation: 0 }),
        };
        // SAFETY: the barrier is new and not shared yet.
        unsafe { sys::hrt_barrier_init(b.raw.get(), n) };
        b
    }

    /// True in the last thread to come.
    pub fn wait(&self) -> bool {
        // SAFETY: the raw barrier lives as long as self.
        unsafe { sys::hrt_barrier_wait(self.raw.get()) != 0 }
    }
}

/// An interrupt-off region (CLI at CPL 0; no preemption in ring 3, 10 ms at
/// most), ended when dropped. Regions nest.
pub struct IrqRegion {
    saved: std::os::raw::c_ulong,
    _not_send: PhantomData<*const ()>,
}

impl IrqRegion {
    pub fn enter() -> Self {
        // SAFETY: no arguments.
        IrqRegion { saved: unsafe { sys::hrt_irq_save() }, _not_send: PhantomData }
    }
}

impl Drop for IrqRegion {
    fn drop(&mut self) {
        // SAFETY: restores what this region's save returned, innermost first.
        unsafe { sys::hrt_irq_restore(self.saved) };
    }
}

/// Nemo's Active Messages.
pub mod am {
    use super::{check, sys, Errno};
    use std::ffi::c_void;

    /// A handler: (action, argument), on the receiving CPU, which must not
    /// block, allocate or print.
    pub type Handler = fn(u32, u64);

    extern "C" fn trampoline(action: i32, arg: u64, ctx: *mut c_void) {
        // SAFETY: ctx is the Handler register() gave the library.
        let handler: Handler = unsafe { std::mem::transmute::<*mut c_void, Handler>(ctx) };
        handler(action as u32, arg);
    }

    /// Registers `handler` for `action` on CPU `cpu` (None: on every CPU).
    pub fn register(cpu: Option<usize>, action: u32, handler: Handler) -> Result<(), Errno> {
        let cpu = cpu.map_or(sys::HRT_ANY_CPU, |c| c as i32);
        // SAFETY: the trampoline turns ctx back into the fn pointer given.
        check(unsafe {
            sys::hrt_am_register(cpu, action as i32, Some(trampoline), handler as *mut c_void)
        })
    }

    /// Sends (action, arg) to CPU `cpu`; Err(EAGAIN) when its queue is full.
    pub fn send(cpu: usize, action: u32, arg: u64) -> Result<(), Errno> {
        // SAFETY: plain values.
        check(unsafe { sys::hrt_am_send(cpu as i32, action as i32, arg) })
    }

    /// Sends (action, arg) to every CPU with a handler for it.
    pub fn broadcast(action: u32, arg: u64) -> Result<(), Errno> {
        // SAFETY: plain values.
        check(unsafe { sys::hrt_am_broadcast(action as i32, arg) })
    }
}
