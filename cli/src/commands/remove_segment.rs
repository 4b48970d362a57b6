//! `atoll remove-segment <name|segid>`: removes an XEMEM segment that was
//! kept past its owner (xemem_keep) once that owner has ended. Its owner's
//! user or root may; a live owner removes its segments itself.

use super::print_json;
use crate::device::Device;
use crate::error::{os_error, Error, Result};
use crate::segments::Segment;
use serde_json::json;

pub fn run(key: &str, json: bool) -> Result<()> {
    let dev = Device::open()?;
    let all = crate::segments::list(&dev)?;
    let segid = match find(&all.segments, key, all.truncated)? {
        Some(seg) if !seg.owner_ended => {
            return Err(Error::new(format!(
                "segment {key} is still held by its owner (pid {}): only that program removes it",
                seg.pid
            )))
        }
        Some(seg) => seg.segid,
        // Beyond what the list holds: the module checks who may.
        None => key.parse().map_err(|_| not_found(key))?,
    };
    dev.remove_segment(segid).map_err(|e| match e.raw_os_error() {
        Some(libc::EPERM) => {
            Error::new(format!("segment {key} is not yours: only its owner's user or root may remove it"))
        }
        Some(libc::ENOENT) => not_found(key),
        _ => Error::new(format!("cannot remove segment {key} ({})", os_error(&e))),
    })?;
    if json {
        print_json(&json!({ "removed": segid, "key": key }));
    } else {
        println!("segment {segid} removed; its memory goes back to its owner's kernel");
    }
    Ok(())
}

fn not_found(key: &str) -> Error {
    Error::new(format!("no segment {key} (`atoll list --segments` lists them)"))
}

/// The segment named `key`, or numbered `key`; None if the list holds
/// neither but is cut short. A name and a number that mean two segments
/// are refused rather than guessed.
fn find<'a>(segments: &'a [Segment], key: &str, truncated: bool) -> Result<Option<&'a Segment>> {
    let by_name = segments.iter().find(|s| s.name == key);
    let by_id = segments.iter().find(|s| s.segid.to_string() == key);
    match (by_name, by_id) {
        (Some(a), Some(b)) if a.segid != b.segid => Err(Error::new(format!(
            "\"{key}\" names segment {} and numbers another: remove by that segment's name, or rename",
            a.segid
        ))),
        (Some(s), _) | (None, Some(s)) => Ok(Some(s)),
        (None, None) if truncated => Ok(None),
        (None, None) => Err(not_found(key)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(segid: i64, name: &str) -> Segment {
        Segment {
            segid,
            name: name.into(),
            kernel: 0,
            pid: 1,
            size: 4096,
            uid: 0,
            mode: 0o600,
            grants: 0,
            attachments: 0,
            kept: true,
            owner_ended: true,
        }
    }

    #[test]
    fn names_and_numbers() {
        let segs = [seg(3, "sim"), seg(7, "9"), seg(9, "")];
        assert_eq!(find(&segs, "sim", false).unwrap().unwrap().segid, 3);
        assert_eq!(find(&segs, "3", false).unwrap().unwrap().segid, 3);
        assert!(find(&segs, "9", false).is_err(), "name 9 is segment 7, number 9 another");
        assert!(find(&segs, "nope", false).is_err());
        assert!(find(&segs, "12", true).unwrap().is_none(), "beyond a cut-short list");
    }
}
