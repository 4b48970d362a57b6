//! `atoll remove-segment <name|segid>`: removes an XEMEM segment that was
//! kept past its owner (xemem_keep) once that owner has ended. Its owner's
//! user or root may; a live owner removes its segments itself.

use super::print_json;
use crate::device::Device;
use crate::error::{os_error, Error, Result};
use atoll_abi::{XememIo, XEMEM_REMOVE};
use serde_json::json;

pub fn run(key: &str, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let all = crate::segments::list(&dev)?;
    let seg = all
        .segments
        .iter()
        .find(|s| s.name == key || s.segid.to_string() == key)
        .ok_or_else(|| Error::new(format!("no segment {key} (`atoll list --segments` lists them)")))?;
    if !seg.owner_ended {
        return Err(Error::new(format!(
            "segment {key} is still held by its owner (pid {}): only that program removes it",
            seg.pid
        )));
    }
    let mut io = XememIo::new();
    io.op = XEMEM_REMOVE;
    io.segid = seg.segid;
    dev.xemem(&mut io).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) => {
            Error::new(format!("segment {key} is user {}'s: only that user or root may remove it", seg.uid))
        }
        _ => Error::new(format!("cannot remove segment {key} ({})", os_error(&e))),
    })?;
    if json {
        print_json(&json!({ "removed": seg.segid, "name": seg.name }));
    } else {
        println!("segment {} removed; its memory goes back to its owner's kernel", seg.segid);
    }
    Ok(())
}
