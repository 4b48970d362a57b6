//! `atoll console <enclave> [--follow]`: the LWK's console ring, raw, on stdout.

use crate::device::Device;
use crate::enclave;
use crate::error::{os_error, Error, Result};
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const CHUNK: usize = 64 * 1024;
const POLL: Duration = Duration::from_millis(100);

/// Set by SIGINT or SIGTERM while following.
static STOP: AtomicBool = AtomicBool::new(false);

pub fn run(key: &str, follow: bool) -> Result<()> {
    let dev = Device::open()?;
    let enclave = enclave::find_usable(&dev, key)?;
    if follow {
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(signal, &STOP)
                .map_err(|e| Error::new(format!("cannot catch signal {signal}: {}", os_error(&e))))?;
        }
    }
    match copy(&dev, enclave.id, &enclave.name, follow) {
        // `atoll console x | head` closing the pipe is a normal way to stop.
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        Err(Failure::Write(e)) => Err(Error::new(format!("cannot write to stdout: {}", os_error(&e)))),
        Err(Failure::Read(e)) => Err(e),
        Ok(()) => Ok(()),
    }
}

enum Failure {
    Read(Error),
    Write(io::Error),
}

/// Copies the console to stdout until caught up (or, following, until the
/// enclave is gone or a signal came).
fn copy(dev: &Device, id: u32, name: &str, follow: bool) -> std::result::Result<(), Failure> {
    let mut stdout = io::stdout().lock();
    let mut stream = Stream::default();
    let mut buf = vec![0u8; CHUNK];
    loop {
        if STOP.load(Ordering::SeqCst) {
            return Ok(());
        }
        let reply = match dev.console(id, stream.pos, &mut buf) {
            Ok(reply) => reply,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) && follow => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                return Err(Failure::Read(Error::new(format!("console failed: enclave {name} is gone"))));
            }
            Err(e) => return Err(Failure::Read(Error::new(format!("console failed: {}", os_error(&e))))),
        };
        let copied = &buf[..reply.copied as usize];
        stream.take(reply.offset, copied, &mut stdout).map_err(Failure::Write)?;
        if stream.pos >= reply.head || copied.is_empty() {
            stdout.flush().map_err(Failure::Write)?;
            if !follow {
                return Ok(());
            }
            std::thread::sleep(POLL);
        }
    }
}

/// Where we are in the console's byte stream.
#[derive(Default)]
struct Stream {
    /// Stream position of the next byte to ask for.
    pos: u64,
    /// The last byte written was not a newline.
    mid_line: bool,
}

impl Stream {
    /// Writes `bytes`, which start at stream position `offset`; if that is
    /// past `pos`, older bytes were overwritten and a note says how many.
    fn take(&mut self, offset: u64, bytes: &[u8], out: &mut impl Write) -> io::Result<()> {
        if offset > self.pos {
            let newline = if self.mid_line { "\n" } else { "" };
            writeln!(out, "{newline}[... {} bytes lost ...]", offset - self.pos)?;
            self.mid_line = false;
        }
        if let Some(&last) = bytes.last() {
            out.write_all(bytes)?;
            self.mid_line = last != b'\n';
        }
        self.pos = offset.max(self.pos) + bytes.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_and_notes_losses() {
        let mut out = Vec::new();
        let mut s = Stream::default();
        s.take(0, b"", &mut out).unwrap();
        assert_eq!(s.pos, 0);
        s.take(100, b"boot\n", &mut out).unwrap();
        assert_eq!(s.pos, 105);
        s.take(105, b"half a li", &mut out).unwrap();
        s.take(114, b"ne\n", &mut out).unwrap();
        s.take(117, b"no newline", &mut out).unwrap();
        s.take(200, b"x\n", &mut out).unwrap();
        assert_eq!(s.pos, 202);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[... 100 bytes lost ...]\nboot\nhalf a line\nno newline\n[... 73 bytes lost ...]\nx\n"
        );
    }
}
