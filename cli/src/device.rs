//! /dev/atoll and its ioctls: the only `unsafe` code of the CLI. In the test
//! build also /dev/atoll-test, the test module's (atoll_test.ko): the message
//! checks and benchmarks.
//!
//! Every struct passed to the module comes from `atoll_abi`, whose `::new()`
//! fills in the header (magic, version, size) that the module checks.

use crate::error::{os_error, Error, Result};
use crate::sys;
use atoll_abi::{
    Adopt, Call, Chown, ConsoleRead, Create, Destroy, EnclaveInfo, Kill, NoiseDetour, NoiseReq, Ping, Programs, Resize,
    Run, Start, XememIo, XememList, IOC_ADOPT, IOC_CALL, IOC_CHOWN, IOC_CONSOLE, IOC_CREATE, IOC_DESTROY, IOC_EXEC,
    IOC_INFO, IOC_KILL, IOC_NOISE, IOC_PING, IOC_PROGRAMS, IOC_RESIZE, IOC_RUN, IOC_START, IOC_XEMEM, IOC_XEMEM_LIST,
    NOISE_MAX_LISTED,
};
#[cfg(feature = "testing")]
use atoll_abi::{KmsgBenchReq, KmsgCheckReq, KmsgMcastReq, IOC_KMSG_BENCH, IOC_KMSG_CHECK, IOC_KMSG_MCAST};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};

pub const PATH: &str = "/dev/atoll";
#[cfg(feature = "testing")]
pub const TEST_PATH: &str = "/dev/atoll-test";

pub struct Device {
    file: File,
}

/// An ioctl's return value as a Result: -1 means errno tells why.
fn check(rc: libc::c_int) -> io::Result<()> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
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
            Ok(file) => Ok(Device { file }),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Error::new(format!("{path} not found: {hint}"))),
            Err(e) => Err(Error::new(format!("cannot open {path}: {}", os_error(&e)))),
        }
    }

    /// The same device on the lowest free descriptor >= `min_fd` (close-on-exec),
    /// out of the way of the descriptor numbers a program uses; where the
    /// limit on open files forbids that, it stays where it is.
    pub fn move_above(self, min_fd: RawFd) -> Device {
        match sys::dup_above(self.file.as_fd(), min_fd) {
            Ok(fd) => Device { file: File::from(fd) },
            Err(_) => self,
        }
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// IOC_CREATE with `image` (the flat LWK image) as the image to load.
    /// On failure the module may have left a reason in `req.error`.
    pub fn create(&self, req: &mut Create, image: &[u8]) -> io::Result<()> {
        req.image_ptr = image.as_ptr() as u64;
        req.image_size = image.len() as u64;
        // SAFETY: `req` is a live, exclusively borrowed `Create`, the type
        // whose size IOC_CREATE encodes, so the module reads and writes only
        // inside it. The one pointer in it, image_ptr/image_size, was just
        // set from `image`, which stays borrowed (and unchanged) until the
        // call returns; the module only reads from it.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_CREATE as _, req as *mut Create) })
    }

    /// IOC_INFO for the index-th enclave; None past the last one (ENOENT).
    pub fn info(&self, index: u32) -> io::Result<Option<EnclaveInfo>> {
        Device::info_on(self.file.as_raw_fd(), index)
    }

    /// IOC_INFO on descriptor `fd`.
    pub fn info_on(fd: RawFd, index: u32) -> io::Result<Option<EnclaveInfo>> {
        let mut req = EnclaveInfo::new();
        req.index = index;
        // SAFETY: `req` is a live local `EnclaveInfo`, the type whose size
        // IOC_INFO encodes; it holds no pointers, so the module touches only
        // those bytes. A bad `fd` fails.
        match check(unsafe { libc::ioctl(fd, IOC_INFO as _, &mut req as *mut EnclaveInfo) }) {
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
        // SAFETY: `req` is a live local `ConsoleRead`, the type whose size
        // IOC_CONSOLE encodes. Its pointer, buf_ptr/buf_len, describes `buf`,
        // which is exclusively borrowed until the call returns, so the module
        // may write up to buf_len bytes there; any byte values are valid u8.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_CONSOLE as _, &mut req as *mut ConsoleRead) })?;
        req.copied = req.copied.min(buf.len() as u64);
        Ok(req)
    }

    /// IOC_PROGRAMS: the programs in enclave `id`.
    pub fn programs(&self, id: u32) -> io::Result<Box<Programs>> {
        Device::programs_on(self.file.as_raw_fd(), id)
    }

    /// IOC_PROGRAMS on descriptor `fd`.
    pub fn programs_on(fd: RawFd, id: u32) -> io::Result<Box<Programs>> {
        let mut req = Box::new(Programs::new());
        req.id = id;
        // SAFETY: `req` is a live, exclusively owned `Programs`, the type
        // whose size IOC_PROGRAMS encodes; it holds no pointers. A bad
        // `fd` fails.
        check(unsafe { libc::ioctl(fd, IOC_PROGRAMS as _, &mut *req as *mut Programs) })?;
        Ok(req)
    }

    /// IOC_CHOWN: who may use an enclave.
    pub fn chown(&self, req: &mut Chown) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `Chown`, the type
        // whose size IOC_CHOWN encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_CHOWN as _, req as *mut Chown) })
    }

    /// IOC_RESIZE: memory added to or taken back from a running enclave.
    pub fn resize(&self, req: &mut Resize) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `Resize`, the type
        // whose size IOC_RESIZE encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_RESIZE as _, req as *mut Resize) })
    }

    /// IOC_NOISE: a noise probe on one of an enclave's CPUs; the listed
    /// detours go into `detours`, which has room for NOISE_MAX_LISTED.
    pub fn noise(&self, req: &mut NoiseReq, detours: &mut [NoiseDetour]) -> io::Result<()> {
        assert!(detours.len() >= NOISE_MAX_LISTED, "room for every listed detour");
        req.detours_ptr = detours.as_mut_ptr() as u64;
        // SAFETY: `req` is a live, exclusively borrowed `NoiseReq`, the type
        // whose size IOC_NOISE encodes; its one pointer is to `detours`,
        // exclusively borrowed, with room for the NOISE_MAX_LISTED plain
        // structs the module may write there before the call returns.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_NOISE as _, req as *mut NoiseReq) })
    }

    /// IOC_XEMEM: one XEMEM call of this process (the CLI removes kept segments).
    pub fn xemem(&self, io: &mut XememIo) -> io::Result<()> {
        // SAFETY: `io` is a live, exclusively borrowed `XememIo`, the type
        // whose size IOC_XEMEM encodes; its vaddr is only used by ATTACH,
        // which the CLI does not send.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_XEMEM as _, io as *mut XememIo) })
    }

    /// IOC_XEMEM_LIST: the node's XEMEM segments and attachments.
    pub fn xemem_list(&self) -> io::Result<Box<XememList>> {
        let mut req = Box::new(XememList::new());
        // SAFETY: `req` is a live, exclusively owned `XememList`, the type
        // whose size IOC_XEMEM_LIST encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_XEMEM_LIST as _, &mut *req as *mut XememList) })?;
        Ok(req)
    }

    /// IOC_PING: one round trip to enclave `id`'s LWK, from Linux (`from_id`
    /// 0) or from enclave `from_id`'s LWK; returns its time in ns.
    pub fn ping(&self, id: u32, from_id: u32) -> io::Result<u64> {
        let mut req = Ping::new();
        req.id = id;
        req.from_id = from_id;
        // SAFETY: `req` is a live local `Ping`, the type whose size IOC_PING
        // encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_PING as _, &mut req as *mut Ping) })?;
        Ok(req.rtt_ns)
    }

    /// IOC_KMSG_CHECK: floods both message rings of enclave `req.id`. On
    /// failure the module may have left a reason in `req.error`.
    #[cfg(feature = "testing")]
    pub fn kmsg_check(&self, req: &mut KmsgCheckReq) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `KmsgCheckReq`, the
        // type whose size IOC_KMSG_CHECK encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_KMSG_CHECK as _, req as *mut KmsgCheckReq) })
    }

    /// IOC_KMSG_BENCH: times message round trips with enclave `req.id`. On
    /// failure the module may have left a reason in `req.error`.
    #[cfg(feature = "testing")]
    pub fn kmsg_bench(&self, req: &mut KmsgBenchReq) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `KmsgBenchReq`, the
        // type whose size IOC_KMSG_BENCH encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_KMSG_BENCH as _, req as *mut KmsgBenchReq) })
    }

    /// IOC_KMSG_MCAST: multicast to the enclaves in `req.ids`, then unicasts.
    /// On failure the module may have left a reason in `req.error`.
    #[cfg(feature = "testing")]
    pub fn kmsg_mcast(&self, req: &mut KmsgMcastReq) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `KmsgMcastReq`, the
        // type whose size IOC_KMSG_MCAST encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_KMSG_MCAST as _, req as *mut KmsgMcastReq) })
    }

    /// IOC_DESTROY. On failure the module may have left a reason in `req.error`.
    pub fn destroy(&self, req: &mut Destroy) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `Destroy`, the type
        // whose size IOC_DESTROY encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_DESTROY as _, req as *mut Destroy) })
    }

    /// IOC_RUN: creates the program's address space. On failure the module
    /// may have left a reason in `req.error`.
    pub fn run(&self, req: &mut Run) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `Run`, the type whose
        // size IOC_RUN encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_RUN as _, req as *mut Run) })
    }

    /// IOC_ADOPT: binds this file to the child the LWK forked into `area`
    /// of enclave `id`. On failure the module may have left a reason in
    /// `req.error`.
    pub fn adopt(&self, req: &mut Adopt) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `Adopt`, the type
        // whose size IOC_ADOPT encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_ADOPT as _, req as *mut Adopt) })
    }

    /// IOC_EXEC on descriptor `fd` (this process's /dev/atoll): the LWK
    /// builds an execve's new image, described like a RUN's.
    pub fn exec_on(fd: RawFd, req: &mut Run) -> io::Result<()> {
        // SAFETY: `req` is a live, exclusively borrowed `Run`, the type whose
        // size IOC_EXEC encodes; it holds no pointers. A bad `fd` fails.
        check(unsafe { libc::ioctl(fd, IOC_EXEC as _, req as *mut Run) })
    }

    /// IOC_START on descriptor `fd`: the execve's new image runs.
    pub fn start_on(fd: RawFd, entry: u64, stack_pointer: u64) -> io::Result<()> {
        let mut req = Start::new();
        req.entry = entry;
        req.stack_pointer = stack_pointer;
        // SAFETY: as in `start`.
        check(unsafe { libc::ioctl(fd, IOC_START as _, &mut req as *mut Start) })
    }

    /// IOC_START: starts the loaded program's main thread.
    pub fn start(&self, entry: u64, stack_pointer: u64) -> io::Result<()> {
        let mut req = Start::new();
        req.entry = entry;
        req.stack_pointer = stack_pointer;
        // SAFETY: `req` is a live local `Start`, the type whose size IOC_START
        // encodes; its addresses are the program's, which the module does
        // not dereference in this process.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_START as _, &mut req as *mut Start) })
    }

    /// IOC_CALL: delivers `call.done_ret` to `call.done_slot` (if >= 0), then
    /// waits for the next event. Fails with EINTR when a signal came first;
    /// the caller retries with the same `call`.
    pub fn call(&self, call: &mut Call) -> io::Result<()> {
        // SAFETY: `call` is a live, exclusively borrowed `Call`, the type
        // whose size IOC_CALL encodes; it holds no pointers (`args` are the
        // program's values, which the module only copies).
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_CALL as _, call as *mut Call) })
    }

    /// IOC_KILL: ends the program as if by `signal`.
    pub fn kill(&self, signal: i32) -> io::Result<()> {
        let mut req = Kill::new();
        req.signal = signal as u32;
        // SAFETY: `req` is a live local `Kill`, the type whose size IOC_KILL
        // encodes; it holds no pointers.
        check(unsafe { libc::ioctl(self.file.as_raw_fd(), IOC_KILL as _, &mut req as *mut Kill) })
    }
}
