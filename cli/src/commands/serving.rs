//! Serving a program until it ends, for `atoll run` and for the `atoll
//! run` of a forked child (forked.rs): its workers started, signals passed
//! on, and the exit status made of how it ended.

use super::exec;
use crate::device::Device;
use crate::error::{os_error, Error, Result};
use crate::serve::messages::Messages;
use crate::serve::passthrough::usercopy::UserCopy;
use crate::serve::perform::Performer;
use crate::serve::status::{self, FAILED};
use crate::serve::{signals, End, Server};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

/// How often the main thread looks for SIGINT, SIGTERM and SIGHUP: soon
/// enough for a user's Ctrl-C, seldom enough that an idle `atoll run`
/// hardly wakes (at 20 ms it took 21 ticks of CPU in 2 s on the debug
/// kernel, its workers asleep).
const SIGNAL_POLL: Duration = Duration::from_millis(200);

/// Starts the program (`start` on the device) and the workers serving it.
pub fn serve(
    dev: Device,
    enclave_id: u32,
    messages: Messages,
    copier: UserCopy,
    strict: bool,
    start: impl FnOnce(&Device) -> std::io::Result<()>,
) -> Result<Arc<Server<Device, Performer>>> {
    let reserved = [dev.fd().as_raw_fd()].into_iter().chain(messages.fd()).collect();
    let performer = Performer::new(reserved, copier).with_device(dev.clone(), enclave_id);
    exec::prepare();
    signals::catch().map_err(|e| failed(format!("cannot catch signals: {}", os_error(&e))))?;
    start(&dev).map_err(|e| failed(format!("start failed: {}", os_error(&e))))?;
    let server = Server::new(dev, performer, messages, strict);
    // Without a worker the program cannot make a single call; exiting
    // closes /dev/atoll, which ends it.
    server.start().map_err(|e| failed(format!("cannot start a thread: {}", os_error(&e))))?;
    Ok(server)
}

/// Serves until the program ends, passing on SIGINT, SIGTERM and SIGHUP;
/// the exit status for `atoll run`. `say_how` prints how a program ended
/// by a signal ("Terminated"), as a shell would; a forked child's end is
/// its parent program's business.
pub fn serve_until_end(server: &Server<Device, Performer>, enclave: &str, say_how: bool) -> u8 {
    let end = loop {
        if let Some(end) = server.wait(SIGNAL_POLL) {
            break end;
        }
        if let Some(signal) = signals::take() {
            if let Err(e) = server.kill(signal) {
                server.messages().line(&format!("atoll run: cannot pass signal {signal} on: {}", os_error(&e)));
            }
        }
    };
    let (code, message) = conclusion(&end, enclave);
    if let Some(message) = message.filter(|_| say_how || !matches!(end, End::Exited(_))) {
        server.messages().line(&message);
    }
    code
}

pub fn failed(message: String) -> Error {
    Error::new(message).with_status(FAILED)
}

/// The exit status for how serving ended, and the line to print, if any.
fn conclusion(end: &End, enclave: &str) -> (u8, Option<String>) {
    match end {
        End::Exited(wait_status) => {
            let outcome = status::outcome(*wait_status);
            (outcome.exit_code, outcome.message)
        }
        End::Crashed => {
            (FAILED, Some(format!("atoll run: the enclave's LWK crashed; `atoll console {enclave}` shows why")))
        }
        End::Failed(why) => (FAILED, Some(format!("atoll run: {why}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conclusions() {
        assert_eq!(conclusion(&End::Exited(3 << 8), "web"), (3, None));
        assert_eq!(conclusion(&End::Exited(11), "web"), (139, Some("Segmentation fault".into())));
        assert_eq!(conclusion(&End::Exited(2), "web"), (130, Some("Interrupt".into())));
        assert_eq!(
            conclusion(&End::Crashed, "web"),
            (125, Some("atoll run: the enclave's LWK crashed; `atoll console web` shows why".into()))
        );
        assert_eq!(conclusion(&End::Failed("x".into()), "web"), (125, Some("atoll run: x".into())));
    }
}
