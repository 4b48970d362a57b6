//! Messages between programs, this LWK's side (atoll_abi.h, "Messages
//! between programs"): its ports, filled by KMSG_USER messages from Linux
//! and from other enclaves' LWKs (and by its own programs), emptied by the
//! msg_recv system call. A port holds MSG_QUEUE messages; more are dropped
//! and counted, so a flood cannot exhaust the kernel's memory. Programs of
//! another enclave are heard, and sent to, only while the host says both
//! enclaves have one owner (`kmsg::programs_talk`).

use alloc::collections::VecDeque;
use alloc::vec::Vec;
use atoll_abi::{MsgFrom, UserMsg, KMSG_USER, MSG_MAX, MSG_PORTS, MSG_QUEUE};
use core::mem::size_of;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::kmsg::{self, Message, Peer, SendError};
use crate::sync::{SpinLock, WaitQueue};
use lwk_logic::errno::{Errno, EACCES, EAGAIN, EINTR, EINVAL, ENODEV, ETIMEDOUT};

pub struct Received {
    pub from: MsgFrom,
    pub data: Vec<u8>,
}

static QUEUES: [SpinLock<VecDeque<Received>>; MSG_PORTS] =
    [const { SpinLock::new(VecDeque::new()) }; MSG_PORTS];
static WAITERS: [WaitQueue; MSG_PORTS] = [const { WaitQueue::new() }; MSG_PORTS];
static DROPPED: AtomicU64 = AtomicU64::new(0);

pub fn init() {
    kmsg::register(KMSG_USER, on_user);
}

/// This kernel's id as the other kernels name it.
fn me() -> u32 {
    crate::boot::enclave().map_or(0, |e| e.id)
}

fn deliver(port: usize, from: MsgFrom, data: &[u8]) -> Result<(), Errno> {
    let mut q = QUEUES[port].lock();
    if q.len() >= MSG_QUEUE {
        return Err(EAGAIN);
    }
    q.push_back(Received { from, data: data.to_vec() });
    drop(q);
    WAITERS[port].wake_all(true);
    Ok(())
}

/// From another kernel: checked, then queued; the sender is who the link says.
fn on_user(msg: &Message) {
    let Some((h, data)) = parse(msg.data) else {
        hal::println!("usermsg: a malformed program message from {:?}; dropped", msg.from);
        return;
    };
    if kmsg::programs_talk(msg.from) != Some(true) {
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let kernel = match msg.from {
        Peer::Host => 0,
        Peer::Enclave(id) => id,
    };
    let from = MsgFrom { kernel, port: h.src_port.into() };
    if deliver(h.dest_port.into(), from, data).is_err() {
        DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

fn parse(bytes: &[u8]) -> Option<(UserMsg, &[u8])> {
    let (head, data) = bytes.split_at_checked(size_of::<UserMsg>())?;
    let h = UserMsg {
        dest_port: u16::from_le_bytes([head[0], head[1]]),
        src_port: u16::from_le_bytes([head[2], head[3]]),
        len: u32::from_le_bytes([head[4], head[5], head[6], head[7]]),
        area: u32::from_le_bytes([head[8], head[9], head[10], head[11]]),
        pad0: 0,
    };
    let fits = h.len as usize == data.len() && data.len() <= MSG_MAX;
    (fits && usize::from(h.dest_port) < MSG_PORTS && usize::from(h.src_port) < MSG_PORTS)
        .then_some((h, data))
}

/// Sends `data` to (kernel, port) from `src_port` of this kernel, for the
/// program in `area` (Linux delivers to the ports of that program's user).
pub fn send(kernel: u32, port: u16, src_port: u16, area: u32, data: &[u8]) -> Result<(), Errno> {
    let valid = usize::from(port) < MSG_PORTS && usize::from(src_port) < MSG_PORTS;
    if !valid || data.len() > MSG_MAX {
        return Err(EINVAL);
    }
    if kernel == me() {
        return deliver(port.into(), MsgFrom { kernel, port: src_port.into() }, data);
    }
    let to = if kernel == 0 { Peer::Host } else { Peer::Enclave(kernel) };
    if kmsg::programs_talk(to) == Some(false) {
        return Err(EACCES); // another owner's enclave
    }
    let h = UserMsg { dest_port: port, src_port, len: data.len() as u32, area, pad0: 0 };
    let mut payload = Vec::with_capacity(size_of::<UserMsg>() + data.len());
    payload.extend_from_slice(&h.dest_port.to_le_bytes());
    payload.extend_from_slice(&h.src_port.to_le_bytes());
    payload.extend_from_slice(&h.len.to_le_bytes());
    payload.extend_from_slice(&h.area.to_le_bytes());
    payload.extend_from_slice(&h.pad0.to_le_bytes());
    payload.extend_from_slice(data);
    kmsg::send(to, KMSG_USER, &payload).map_err(|e| match e {
        SendError::Full => EAGAIN,
        SendError::Invalid => ENODEV, // no such kernel, or no rings to it
    })
}

/// The next message on `port`, waiting until `deadline` (TSC, None: for
/// ever) or until `stop()` says the program is ending.
pub fn recv(
    port: usize,
    deadline: Option<u64>,
    stop: impl Fn() -> bool,
) -> Result<Received, Errno> {
    let q = QUEUES.get(port).ok_or(EINVAL)?;
    let ready = || !q.lock().is_empty() || stop();
    let arrived = WAITERS[port].wait_until_deadline(ready, deadline);
    match q.lock().pop_front() {
        Some(m) => Ok(m),
        None if !arrived => Err(ETIMEDOUT),
        None => Err(EINTR),
    }
}
