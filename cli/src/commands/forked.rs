//! The `atoll run` of a forked child. When a program forks, the LWK makes
//! the child process and asks the parent's `atoll run` (CALL_FORK); a
//! worker forks this process, and the copy adopts the child
//! (ATOLL_IOC_ADOPT), which lets the LWK start it, then maps its memory
//! and serves it as `atoll run` serves any program. Being a fork, it has
//! the parent's descriptors, which are the child's: its delegated calls
//! see what the program inherited, as on Linux.

use super::serving::{failed, serve, serve_until_end};
use crate::device::mirror::Mirror;
use crate::device::Device;
use crate::error::{os_error, Result};
use crate::serve::descriptors::RESERVED_FD;
use crate::serve::messages::Messages;
use crate::serve::passthrough::usercopy::UserCopy;
use crate::serve::FORK;
use crate::sys::{self, Forked};
use atoll_abi::{c_str, Adopt};
use std::io::{Read, Write};
use std::os::fd::{OwnedFd, RawFd};
use std::sync::OnceLock;

/// What a forked `atoll run` needs from the one that started the program.
pub struct Context {
    pub enclave_id: u32,
    pub enclave_name: String,
    pub strict: bool,
    /// The parent's own descriptors: /dev/atoll (bound to the parent's
    /// program), the copy of stderr, the copier's pipe.
    pub device_fd: RawFd,
    pub messages_fd: Option<RawFd>,
    pub copier_fds: [RawFd; 2],
}

static CONTEXT: OnceLock<Context> = OnceLock::new();

/// Lets the program fork from now on.
pub fn prepare(context: Context) -> Result<()> {
    sys::reap_children_automatically()
        .map_err(|e| failed(format!("cannot have Linux reap children: {}", os_error(&e))))?;
    let _ = CONTEXT.set(context);
    let _ = FORK.set(fork_server);
    Ok(())
}

/// CALL_FORK in a worker: forks this process for the child in `area`;
/// its Linux pid once it serves the child, or -errno. `kept`: the
/// descriptors kept for the parent's write-back, which the copy closes.
fn fork_server(area: u32, pid: u32, token: u64, kept: &[RawFd]) -> i64 {
    let Some(context) = CONTEXT.get() else { return -(libc::ENOSYS as i64) };
    let (ready_read, ready_write) = match sys::pipe() {
        Ok(p) => p,
        Err(e) => return -(e.raw_os_error().unwrap_or(libc::EAGAIN) as i64),
    };
    match sys::fork() {
        Err(e) => -(e.raw_os_error().unwrap_or(libc::EAGAIN) as i64),
        Ok(Forked::Child) => {
            drop(ready_read);
            sys::exit_now(serve_child(context, (area, pid, token), kept, ready_write))
        }
        Ok(Forked::Parent(child)) => {
            drop(ready_write);
            // One byte once the child is adopted; nothing if that failed.
            let mut byte = [0u8; 1];
            match std::fs::File::from(ready_read).read(&mut byte) {
                Ok(1) => child.into(),
                _ => -(libc::EAGAIN as i64),
            }
        }
    }
}

/// Which child to adopt: its area, LWK pid and the module's token.
type Child = (u32, u32, u64);

/// The forked process: serves the child until it ends; the exit status.
fn serve_child(context: &Context, child: Child, kept: &[RawFd], ready: OwnedFd) -> i32 {
    // The parent's program is not ours: its /dev/atoll file, copier and
    // kept descriptors (the parent writes the mappings back) go.
    for fd in [context.device_fd].into_iter().chain(context.copier_fds).chain(kept.iter().copied()) {
        sys::close(fd);
    }
    // The parent's copy of stderr was inherited: this process takes it over.
    let messages = match context.messages_fd {
        Some(fd) => Messages::on_fd(sys::take_inherited(fd)),
        None => Messages::stderr_copy(RESERVED_FD),
    };
    match adopt_and_serve(context, child, messages, ready) {
        Ok(code) => code.into(),
        Err(e) => {
            // The parent's stderr is ours too: say why, then give up.
            let _ = writeln!(std::io::stderr(), "atoll run (forked child {}): {e}", child.1);
            e.status().into()
        }
    }
}

fn adopt_and_serve(context: &Context, child: Child, messages: Messages, ready: OwnedFd) -> Result<u8> {
    let dev = Device::open()?.move_above(RESERVED_FD);
    let mut req = Adopt::new();
    (req.id, req.area, req.pid, req.token) = (context.enclave_id, child.0, child.1, child.2);
    dev.adopt(&mut req)
        .map_err(|e| failed(format!("cannot adopt the child: {} ({})", c_str(&req.error), os_error(&e))))?;
    // Its parent's fork returns now, and the LWK starts the child: its calls
    // wait in their slots until the workers below take them. (Setting them
    // up took most of a fork's time. If that fails, this process ends, and
    // with it the child.)
    let _ = std::fs::File::from(ready).write_all(b"1");
    let mirror = Mirror::map(dev.fd())?;
    let copier = UserCopy::new(RESERVED_FD).map_err(|e| failed(format!("cannot make a pipe: {}", os_error(&e))))?;
    let server = serve(dev, context.enclave_id, messages, copier, context.strict, |_| Ok(()))?;
    let code = serve_until_end(&server, &context.enclave_name, false);
    drop(mirror);
    Ok(code)
}
