//! /dev/atoll and its ioctls, and the mirror of a program's memory mapped
//! from it (mirror.rs): a safe interface over the module, with the `unsafe`
//! inside. In the test build also /dev/atoll-test, the test module's
//! (atoll_test.ko): the message checks and benchmarks.
//!
//! Every struct passed to the module comes from `atoll_abi`, whose `::new()`
//! fills in the header (magic, version, size) that the module checks.

pub mod mirror;

use crate::error::{os_error, Error, Result};
use crate::sys;
use atoll_abi::{
    Adopt, Call, Chown, ConsoleRead, Create, Destroy, EnclaveInfo, Kill, NoiseDetour, NoiseReq, Ping, Programs, Resize,
    Run, Start, XememIo, XememList, IOC_ADOPT, IOC_CALL, IOC_CHOWN, IOC_CONSOLE, IOC_CREATE, IOC_DESTROY, IOC_EXEC,
    IOC_INFO, IOC_KILL, IOC_NOISE, IOC_PING, IOC_PROGRAMS, IOC_RESIZE, IOC_RUN, IOC_START, IOC_XEMEM, IOC_XEMEM_LIST,
    NOISE_MAX_LISTED, XEMEM_REMOVE,
};
#[cfg(feature = "testing")]
use atoll_abi::{KmsgBenchReq, KmsgCheckReq, KmsgMcastReq, IOC_KMSG_BENCH, IOC_KMSG_CHECK, IOC_KMSG_MCAST};
use rustix::ioctl::{ioctl, Updater};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, RawFd};
use std::sync::Arc;

pub const PATH: &str = "/dev/atoll";
#[cfg(feature = "testing")]
pub const TEST_PATH: &str = "/dev/atoll-test";

/// An open /dev/atoll. Clones share the one open file (the module binds a
/// program to it), which is closed with the last of them.
#[derive(Clone)]
pub struct Device {
    file: Arc<File>,
}

/// An `atoll_abi` struct the module reads and writes in place and nothing
/// else: it holds no addresses, and any bytes the module leaves are valid.
///
/// # Safety
/// Implemented only for such structs.
unsafe trait Plain {}

macro_rules! plain {
    ($($t:ty),* $(,)?) => {$(
        // SAFETY: `repr(C)` integers and arrays of them, no addresses.
        unsafe impl Plain for $t {}
    )*};
}

plain!(Adopt, Call, Chown, Destroy, EnclaveInfo, Kill, Ping, Programs, Resize, Run, Start, XememList);
#[cfg(feature = "testing")]
plain!(KmsgBenchReq, KmsgCheckReq, KmsgMcastReq);

/// The size field of an ioctl number (Linux's _IOC_SIZE).
const fn ioc_size(ioc: u32) -> usize {
    ((ioc >> 16) & 0x3fff) as usize
}

impl Device {
    pub fn open() -> Result<Device> {
        Self::open_path(PATH, "is the atoll module loaded? (insmod atoll.ko)")
    }

    /// The test module's device, for IOC_KMSG_CHECK, _BENCH and _MCAST.
    #[cfg(feature = "testing")]
    pub fn open_test() -> Result<Device> {
        Self::open_path(TEST_PATH, "is the test module loaded? (insmod atoll_test.ko, after atoll.ko)")
    }

    fn open_path(path: &str, hint: &str) -> Result<Device> {
        match OpenOptions::new().read(true).write(true).open(path) {
            Ok(file) => Ok(Device { file: Arc::new(file) }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::new(format!("{path} not found: {hint}"))),
            Err(e) => Err(Error::new(format!("cannot open {path}: {}", os_error(&e)))),
        }
    }

    /// The same device on the lowest free descriptor >= `min_fd` (close-on-exec),
    /// out of the way of the descriptor numbers a program uses; where the
    /// limit on open files forbids that, it stays where it is.
    pub fn move_above(self, min_fd: RawFd) -> Device {
        match sys::dup_above(self.file.as_fd(), min_fd) {
            Ok(fd) => Device { file: Arc::new(File::from(fd)) },
            Err(_) => self,
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// ioctl `IOC` with `req`, which the module reads and writes in place.
    ///
    /// # Safety
    /// Every address in `req` is one the module may use as `IOC` says.
    unsafe fn ioctl<const IOC: u32, T>(&self, req: &mut T) -> io::Result<()> {
        const { assert!(ioc_size(IOC) == size_of::<T>(), "the ioctl's size is its struct's") };
        // SAFETY: `req` is exclusively borrowed and as large as IOC says, so
        // the module touches only its bytes there; the addresses in it are
        // the caller's to vouch for.
        Ok(unsafe { ioctl(&*self.file, Updater::<IOC, T>::new(req)) }?)
    }

    /// ioctl `IOC` with a struct that holds no addresses.
    fn plain<const IOC: u32, T: Plain>(&self, req: &mut T) -> io::Result<()> {
        // SAFETY: a Plain struct holds no addresses.
        unsafe { self.ioctl::<IOC, T>(req) }
    }

    /// IOC_CREATE with `image` (the flat LWK image) as the image to load.
    /// On failure the module may have left a reason in `req.error`.
    pub fn create(&self, req: &mut Create, image: &[u8]) -> io::Result<()> {
        req.image_ptr = image.as_ptr() as u64;
        req.image_size = image.len() as u64;
        // SAFETY: the one address in `req`, image_ptr/image_size, was just
        // set from `image`, which stays borrowed (and unchanged) until the
        // call returns; the module only reads from it.
        unsafe { self.ioctl::<IOC_CREATE, _>(req) }
    }

    /// IOC_INFO for the index-th enclave; None past the last one (ENOENT).
    pub fn info(&self, index: u32) -> io::Result<Option<EnclaveInfo>> {
        let mut req = EnclaveInfo::new();
        req.index = index;
        match self.plain::<IOC_INFO, _>(&mut req) {
            Ok(()) => Ok(Some(req)),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// IOC_CONSOLE: copies console bytes of enclave `id` from stream
    /// position `offset` into `buf`. The answer's `copied` is at most
    /// `buf.len()`; its `offset` is where the copied bytes start.
    pub fn console(&self, id: u32, offset: u64, buf: &mut [u8]) -> io::Result<ConsoleRead> {
        let mut req = ConsoleRead::new();
        req.id = id;
        req.offset = offset;
        req.buf_ptr = buf.as_mut_ptr() as u64;
        req.buf_len = buf.len() as u64;
        // SAFETY: the one address in `req`, buf_ptr/buf_len, describes `buf`,
        // which is exclusively borrowed until the call returns, so the module
        // may write up to buf_len bytes there; any byte values are valid u8.
        unsafe { self.ioctl::<IOC_CONSOLE, _>(&mut req) }?;
        req.copied = req.copied.min(buf.len() as u64);
        Ok(req)
    }

    /// IOC_PROGRAMS: the programs in enclave `id`.
    pub fn programs(&self, id: u32) -> io::Result<Box<Programs>> {
        let mut req = Box::new(Programs::new());
        req.id = id;
        self.plain::<IOC_PROGRAMS, _>(&mut *req)?;
        Ok(req)
    }

    /// IOC_CHOWN: who may use an enclave.
    pub fn chown(&self, req: &mut Chown) -> io::Result<()> {
        self.plain::<IOC_CHOWN, _>(req)
    }

    /// IOC_RESIZE: memory added to or taken back from a running enclave.
    pub fn resize(&self, req: &mut Resize) -> io::Result<()> {
        self.plain::<IOC_RESIZE, _>(req)
    }

    /// IOC_NOISE: a noise probe on one of an enclave's CPUs; the listed
    /// detours go into `detours`, which has room for NOISE_MAX_LISTED.
    pub fn noise(&self, req: &mut NoiseReq, detours: &mut [NoiseDetour]) -> io::Result<()> {
        assert!(detours.len() >= NOISE_MAX_LISTED, "room for every listed detour");
        req.detours_ptr = detours.as_mut_ptr() as u64;
        // SAFETY: the one address in `req` is that of `detours`, exclusively
        // borrowed, with room for the NOISE_MAX_LISTED plain structs the
        // module may write there before the call returns.
        unsafe { self.ioctl::<IOC_NOISE, _>(req) }
    }

    /// IOC_XEMEM's XEMEM_REMOVE: removes segment `segid` (one kept past its
    /// owner).
    pub fn remove_segment(&self, segid: i64) -> io::Result<()> {
        let mut io = XememIo::new();
        io.op = XEMEM_REMOVE;
        io.segid = segid;
        // SAFETY: `io`'s one address, vaddr, is used only by XEMEM_ATTACH
        // (which maps there); REMOVE leaves it alone.
        unsafe { self.ioctl::<IOC_XEMEM, _>(&mut io) }
    }

    /// IOC_XEMEM_LIST: the node's XEMEM segments and attachments.
    pub fn xemem_list(&self) -> io::Result<Box<XememList>> {
        let mut req = Box::new(XememList::new());
        self.plain::<IOC_XEMEM_LIST, _>(&mut *req)?;
        Ok(req)
    }

    /// IOC_PING: one round trip to enclave `id`'s LWK, from Linux (`from_id`
    /// 0) or from enclave `from_id`'s LWK; returns its time in ns.
    pub fn ping(&self, id: u32, from_id: u32) -> io::Result<u64> {
        let mut req = Ping::new();
        req.id = id;
        req.from_id = from_id;
        self.plain::<IOC_PING, _>(&mut req)?;
        Ok(req.rtt_ns)
    }

    /// IOC_KMSG_CHECK: floods both message rings of enclave `req.id`. On
    /// failure the module may have left a reason in `req.error`.
    #[cfg(feature = "testing")]
    pub fn kmsg_check(&self, req: &mut KmsgCheckReq) -> io::Result<()> {
        self.plain::<IOC_KMSG_CHECK, _>(req)
    }

    /// IOC_KMSG_BENCH: times message round trips with enclave `req.id`. On
    /// failure the module may have left a reason in `req.error`.
    #[cfg(feature = "testing")]
    pub fn kmsg_bench(&self, req: &mut KmsgBenchReq) -> io::Result<()> {
        self.plain::<IOC_KMSG_BENCH, _>(req)
    }

    /// IOC_KMSG_MCAST: multicast to the enclaves in `req.ids`, then unicasts.
    /// On failure the module may have left a reason in `req.error`.
    #[cfg(feature = "testing")]
    pub fn kmsg_mcast(&self, req: &mut KmsgMcastReq) -> io::Result<()> {
        self.plain::<IOC_KMSG_MCAST, _>(req)
    }

    /// IOC_DESTROY. On failure the module may have left a reason in `req.error`.
    pub fn destroy(&self, req: &mut Destroy) -> io::Result<()> {
        self.plain::<IOC_DESTROY, _>(req)
    }

    /// IOC_RUN: creates the program's address space. On failure the module
    /// may have left a reason in `req.error`.
    pub fn run(&self, req: &mut Run) -> io::Result<()> {
        self.plain::<IOC_RUN, _>(req)
    }

    /// IOC_ADOPT: binds this file to the child the LWK forked into `area`
    /// of enclave `id`. On failure the module may have left a reason in
    /// `req.error`.
    pub fn adopt(&self, req: &mut Adopt) -> io::Result<()> {
        self.plain::<IOC_ADOPT, _>(req)
    }

    /// IOC_EXEC: the LWK builds an execve's new image for the program bound
    /// to this file, described like a RUN's.
    pub fn exec(&self, req: &mut Run) -> io::Result<()> {
        self.plain::<IOC_EXEC, _>(req)
    }

    /// IOC_START: starts the loaded program's main thread (or an execve's
    /// new image). The addresses are the program's, which the module does
    /// not use in this process.
    pub fn start(&self, entry: u64, stack_pointer: u64) -> io::Result<()> {
        let mut req = Start::new();
        req.entry = entry;
        req.stack_pointer = stack_pointer;
        self.plain::<IOC_START, _>(&mut req)
    }

    /// IOC_CALL: delivers `call.done_ret` to `call.done_slot` (if >= 0), then
    /// waits for the next event. Fails with EINTR when a signal came first;
    /// the caller retries with the same `call`. (`args` are the program's
    /// values, which the module only copies.)
    pub fn call(&self, call: &mut Call) -> io::Result<()> {
        self.plain::<IOC_CALL, _>(call)
    }

    /// IOC_KILL: ends the program as if by `signal`.
    pub fn kill(&self, signal: i32) -> io::Result<()> {
        let mut req = Kill::new();
        req.signal = signal as u32;
        self.plain::<IOC_KILL, _>(&mut req)
    }
}
