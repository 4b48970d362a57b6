//! Delegated calls performed for real, on memory mapped inside the program
//! area of this test process (where the mirror would be).

use super::*;
use crate::serve::passthrough::test_area::Area;
use crate::serve::policy::MSGHDR_SIZE;
use std::os::fd::AsRawFd;

fn performer() -> Performer {
    Performer::new(vec![1000], UserCopy::new(1000).unwrap())
}

fn pipe() -> (std::fs::File, std::fs::File) {
    let (r, w) = rustix::pipe::pipe().unwrap();
    (r.into(), w.into())
}

const READ: u64 = libc::SYS_read as u64;
const WRITE: u64 = libc::SYS_write as u64;

#[test]
fn reads_and_writes_program_memory() {
    let area = Area::map(0x2000_0000_0000);
    let p = performer();
    let (r, w) = pipe();
    let msg = area.put(0, b"hello enclave");
    assert_eq!(p.perform(WRITE, [w.as_raw_fd() as u64, msg, 13, 0, 0, 0]), 13);
    assert_eq!(p.perform(READ, [r.as_raw_fd() as u64, area.base + 0x100, 64, 0, 0, 0]), 13);
    assert_eq!(area.get(0x100, 13), b"hello enclave");

    // A path in program memory.
    let path = area.put(0x200, b"/dev/null\0");
    let fd = p.perform(libc::SYS_open as u64, [path, libc::O_RDONLY as u64, 0, 0, 0, 0]);
    assert!(fd >= 0);
    assert_eq!(p.perform(libc::SYS_fstat as u64, [fd as u64, area.base + 0x400, 0, 0, 0, 0]), 0);
    assert_eq!(p.perform(libc::SYS_close as u64, [fd as u64, 0, 0, 0, 0, 0]), 0);
    let missing = area.put(0x300, b"/nonexistent/x\0");
    assert_eq!(p.perform(libc::SYS_open as u64, [missing, 0, 0, 0, 0, 0]), -(libc::ENOENT as i64));

    // The kernel's own answers come back as -errno.
    #[allow(clippy::unnecessary_cast)] // a no-op with glibc, not with musl
    let tcgets = libc::TCGETS as u64;
    let enotty = -(libc::ENOTTY as i64);
    assert_eq!(p.perform(libc::SYS_ioctl as u64, [w.as_raw_fd() as u64, tcgets, area.base, 0, 0, 0]), enotty);
    assert_eq!(p.perform(libc::SYS_close as u64, [999_999, 0, 0, 0, 0, 0]), -(libc::EBADF as i64));
}

#[test]
fn vectored_calls() {
    let area = Area::map(0x2000_0001_0000);
    let p = performer();
    let (r, w) = pipe();
    let a = area.put(0x1000, b"one ");
    let b = area.put(0x2000, b"two");
    let mut iov = Vec::new();
    for (base, len) in [(a, 4u64), (b, 3)] {
        iov.extend(base.to_le_bytes());
        iov.extend(len.to_le_bytes());
    }
    let iov = area.put(0, &iov);
    assert_eq!(p.perform(libc::SYS_writev as u64, [w.as_raw_fd() as u64, iov, 2, 0, 0, 0]), 7);
    assert_eq!(p.perform(READ, [r.as_raw_fd() as u64, area.base + 0x3000, 7, 0, 0, 0]), 7);
    assert_eq!(area.get(0x3000, 7), b"one two");

    // An iovec pointing outside the program area, and an array that is.
    let bad: Vec<u8> = [0x7fff_0000_0000u64, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let bad = area.put(0x100, &bad);
    assert_eq!(p.perform(libc::SYS_writev as u64, [w.as_raw_fd() as u64, bad, 1, 0, 0, 0]), -14);
    assert_eq!(p.perform(libc::SYS_readv as u64, [r.as_raw_fd() as u64, 0x1000, 1, 0, 0, 0]), -14);
    // An array in the program area but on an unmapped page.
    let unmapped = area.hole();
    assert_eq!(p.perform(libc::SYS_writev as u64, [w.as_raw_fd() as u64, unmapped, 1, 0, 0, 0]), -14);
    assert_eq!(p.perform(libc::SYS_writev as u64, [w.as_raw_fd() as u64, iov, 0, 0, 0, 0]), 0);
}

#[test]
fn refuses_before_the_kernel_sees_it() {
    let p = performer();
    let copier_fd = p.copier.fds()[0] as u64;
    assert_eq!(p.perform(libc::SYS_close as u64, [1000, 0, 0, 0, 0, 0]), -(libc::EBADF as i64));
    assert_eq!(p.perform(libc::SYS_close as u64, [copier_fd, 0, 0, 0, 0, 0]), -(libc::EBADF as i64));
    assert_eq!(p.perform(libc::SYS_getpid as u64, [0; 6]), -(libc::ENOSYS as i64));
    let null = std::fs::File::open("/dev/null").unwrap();
    let stack_var = 0u64;
    let ours = &stack_var as *const u64 as u64;
    assert_eq!(p.perform(READ, [null.as_raw_fd() as u64, ours, 8, 0, 0, 0]), -(libc::EFAULT as i64));
}

#[test]
fn pselect_signal_mask_pointer_is_checked() {
    let area = Area::map(0x2000_0002_0000);
    let p = performer();
    let (r, w) = pipe();
    let fd = r.as_raw_fd() as u64;
    let mut set = [0u8; 128];
    set[fd as usize / 8] |= 1 << (fd % 8);
    let readable = area.put(0, &set);
    let timeout = area.put(0x200, &[0u8; 16]);
    let sigset = area.put(0x300, &[0u8; 8]);
    let pair: Vec<u8> = [sigset, 8u64].iter().flat_map(|v| v.to_le_bytes()).collect();
    let pair = area.put(0x400, &pair);
    let nr = libc::SYS_pselect6 as u64;
    // Nothing to read yet, then one byte: the mask pointer in the program area is fine.
    assert_eq!(p.perform(nr, [fd + 1, readable, 0, 0, timeout, pair]), 0);
    use std::io::Write;
    (&w).write_all(b"x").unwrap();
    area.put(0, &set);
    assert_eq!(p.perform(nr, [fd + 1, readable, 0, 0, timeout, pair]), 1);
    // A mask pointer outside the program area is refused before the kernel sees it.
    let outside: Vec<u8> = [0x7fff_0000_0000u64, 8].iter().flat_map(|v| v.to_le_bytes()).collect();
    let outside = area.put(0x500, &outside);
    assert_eq!(p.perform(nr, [fd + 1, readable, 0, 0, timeout, outside]), -(libc::EFAULT as i64));
}

/// A struct msghdr in little-endian bytes: name, iov array, control.
fn msghdr(name: (u64, u32), iov: (u64, u64), control: (u64, u64)) -> Vec<u8> {
    let mut h = vec![0u8; MSGHDR_SIZE as usize];
    h[0..8].copy_from_slice(&name.0.to_le_bytes());
    h[8..12].copy_from_slice(&name.1.to_le_bytes());
    h[16..24].copy_from_slice(&iov.0.to_le_bytes());
    h[24..32].copy_from_slice(&iov.1.to_le_bytes());
    h[32..40].copy_from_slice(&control.0.to_le_bytes());
    h[40..48].copy_from_slice(&control.1.to_le_bytes());
    h
}

#[test]
fn messages_are_checked_copied_and_reported() {
    let area = Area::map(0x2000_0003_0000);
    let p = performer();
    let (sa, sb) = std::os::unix::net::UnixDatagram::pair().unwrap();
    let (a, b) = (sa.as_raw_fd() as u64, sb.as_raw_fd() as u64);
    let one = area.put(0x1000, b"scatter ");
    let two = area.put(0x2000, b"gather");
    let iov: Vec<u8> = [one, 8, two, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
    let iov = area.put(0x100, &iov);
    let send = area.put(0, &msghdr((0, 0), (iov, 2), (0, 0)));
    assert_eq!(p.perform(libc::SYS_sendmsg as u64, [a, send, 0, 0, 0, 0]), 14);

    // recvmsg into one buffer; the kernel's msg_flags and lengths come back.
    let into: Vec<u8> = [area.base + 0x3000, 64u64].iter().flat_map(|v| v.to_le_bytes()).collect();
    let into = area.put(0x200, &into);
    let mut recv = msghdr((0, 0), (into, 1), (area.base + 0x4000, 64));
    recv[48..52].copy_from_slice(&0x7777i32.to_le_bytes());
    let recv = area.put(0x400, &recv);
    assert_eq!(p.perform(libc::SYS_recvmsg as u64, [b, recv, 0, 0, 0, 0]), 14);
    assert_eq!(area.get(0x3000, 14), b"scatter gather");
    assert_eq!(area.get(0x400 + 40, 8), 0u64.to_le_bytes(), "no control data came");
    assert_eq!(area.get(0x400 + 48, 4), 0i32.to_le_bytes(), "msg_flags written back");

    // An iovec outside the program area, and one of our descriptors passed on.
    let bad: Vec<u8> = [0x7fff_0000_0000u64, 4].iter().flat_map(|v| v.to_le_bytes()).collect();
    let bad = area.put(0x600, &bad);
    let send_bad = area.put(0x700, &msghdr((0, 0), (bad, 1), (0, 0)));
    assert_eq!(p.perform(libc::SYS_sendmsg as u64, [a, send_bad, 0, 0, 0, 0]), -(libc::EFAULT as i64));
    let mut rights = vec![0u8; 24];
    rights[0..8].copy_from_slice(&20u64.to_le_bytes());
    rights[8..12].copy_from_slice(&libc::SOL_SOCKET.to_le_bytes());
    rights[12..16].copy_from_slice(&libc::SCM_RIGHTS.to_le_bytes());
    rights[16..20].copy_from_slice(&1000i32.to_le_bytes());
    let rights = area.put(0x800, &rights);
    let send_ours = area.put(0x900, &msghdr((0, 0), (iov, 2), (rights, 24)));
    assert_eq!(p.perform(libc::SYS_sendmsg as u64, [a, send_ours, 0, 0, 0, 0]), -(libc::EBADF as i64));
}
