//! XEMEM's segments and attachments as the module lists them, for `atoll
//! list --segments` and `atoll status`.

use serde_json::{json, Value};

use crate::device::Device;
use crate::error::{Error, Result};
use crate::format;

/// Where a segment lives or an attachment maps it: "linux" or "enclave <id>", and the pid.
fn place(kernel: u32, pid: u32) -> String {
    match kernel {
        0 => format!("linux pid {pid}"),
        id => format!("enclave {id} pid {pid}"),
    }
}

pub struct Segment {
    pub segid: i64,
    pub name: String,
    pub kernel: u32,
    pub pid: u32,
    pub size: u64,
    pub uid: u32,
    pub mode: u32,
    pub grants: u32,
    pub attachments: u32,
    /// Outlives its owner (xemem_keep).
    pub kept: bool,
    /// Kept, and its owner has ended.
    pub owner_ended: bool,
}

pub struct Attachment {
    pub id: u64,
    pub segid: i64,
    pub kernel: u32,
    pub pid: u32,
    pub offset: u64,
    pub size: u64,
    pub writable: bool,
    pub revoked: bool,
}

/// Everything on the node, as far as the module's list holds.
pub struct Segments {
    pub segments: Vec<Segment>,
    pub attachments: Vec<Attachment>,
    /// More exist than the list holds.
    pub truncated: bool,
}

pub fn list(dev: &Device) -> Result<Segments> {
    let l = dev
        .xemem_list()
        .map_err(|e| Error::new(format!("cannot list XEMEM segments ({})", crate::error::os_error(&e))))?;
    let (ns, na) = (l.segments as usize, l.attachments as usize);
    let segments = l.seg[..ns.min(l.seg.len())]
        .iter()
        .map(|s| Segment {
            segid: s.segid,
            name: atoll_abi::c_str(&s.name).into(),
            kernel: s.kernel,
            pid: s.pid,
            size: s.size,
            uid: s.uid,
            mode: s.mode,
            grants: s.grants,
            attachments: s.attachments,
            kept: s.flags & atoll_abi::XEMEM_SEG_KEPT != 0,
            owner_ended: s.flags & atoll_abi::XEMEM_SEG_OWNER_ENDED != 0,
        })
        .collect();
    let attachments = l.att[..na.min(l.att.len())]
        .iter()
        .map(|a| Attachment {
            id: a.id,
            segid: a.segid,
            kernel: a.kernel,
            pid: a.pid,
            offset: a.offset,
            size: a.size,
            writable: a.writable != 0,
            revoked: a.revoked != 0,
        })
        .collect();
    Ok(Segments { segments, attachments, truncated: ns > l.seg.len() || na > l.att.len() })
}

impl Segments {
    /// Only what involves enclave `id`: segments it owns, attachments it maps or of its segments.
    pub fn of_enclave(self, id: u32) -> Segments {
        let mine: Vec<i64> = self.segments.iter().filter(|s| s.kernel == id).map(|s| s.segid).collect();
        Segments {
            segments: self.segments.into_iter().filter(|s| s.kernel == id).collect(),
            attachments: self.attachments.into_iter().filter(|a| a.kernel == id || mine.contains(&a.segid)).collect(),
            truncated: self.truncated,
        }
    }

    pub fn text(&self) -> String {
        if self.segments.is_empty() && self.attachments.is_empty() {
            return "no segments\n".into();
        }
        let mut rows = vec![["SEGID", "NAME", "OWNER", "SIZE", "MODE", "UID", "GRANTS", "ATTACHED", "KEPT"]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()];
        for s in &self.segments {
            rows.push(vec![
                s.segid.to_string(),
                if s.name.is_empty() { "-".into() } else { s.name.clone() },
                place(s.kernel, s.pid) + if s.owner_ended { " (ended)" } else { "" },
                size(s.size),
                format!("{:04o}", s.mode),
                s.uid.to_string(),
                s.grants.to_string(),
                s.attachments.to_string(),
                if s.kept { "yes" } else { "-" }.into(),
            ]);
        }
        let mut out = format::table(&rows);
        if !self.attachments.is_empty() {
            let mut rows = vec![["ATTACHMENT", "SEGID", "IN", "OFFSET", "SIZE", "ACCESS"]
                .iter()
                .map(|s| s.to_string())
                .collect::<Vec<_>>()];
            for a in &self.attachments {
                let access = match (a.revoked, a.writable) {
                    (true, _) => "revoked",
                    (false, true) => "rw",
                    (false, false) => "r",
                };
                rows.push(vec![
                    a.id.to_string(),
                    a.segid.to_string(),
                    place(a.kernel, a.pid),
                    a.offset.to_string(),
                    size(a.size),
                    access.into(),
                ]);
            }
            out.push_str(&format::table(&rows));
        }
        if self.truncated {
            out.push_str("(more exist than the module lists at once)\n");
        }
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "segments": self.segments.iter().map(|s| json!({
                "segid": s.segid, "name": s.name, "kernel": s.kernel, "pid": s.pid, "size": s.size,
                "uid": s.uid, "mode": s.mode, "grants": s.grants, "attachments": s.attachments,
                "kept": s.kept, "owner_ended": s.owner_ended,
            })).collect::<Vec<_>>(),
            "attachments": self.attachments.iter().map(|a| json!({
                "id": a.id, "segid": a.segid, "kernel": a.kernel, "pid": a.pid, "offset": a.offset,
                "size": a.size, "writable": a.writable, "revoked": a.revoked,
            })).collect::<Vec<_>>(),
            "truncated": self.truncated,
        })
    }
}

/// "4 KiB", "2 MiB", "1.5 GiB".
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 => format!("{} GiB", trim(b as f64 / (1u64 << 30) as f64)),
        b if b >= 1 << 20 => format!("{} MiB", trim(b as f64 / (1u64 << 20) as f64)),
        b => format!("{} KiB", trim(b as f64 / 1024.0)),
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Segments {
        Segments {
            segments: vec![
                Segment {
                    segid: 3,
                    name: "sim".into(),
                    kernel: 1,
                    pid: 104,
                    size: 2 << 20,
                    uid: 0,
                    mode: 0o600,
                    grants: 1,
                    attachments: 1,
                    kept: false,
                    owner_ended: false,
                },
                Segment {
                    segid: 4,
                    name: String::new(),
                    kernel: 0,
                    pid: 880,
                    size: 4096,
                    uid: 1000,
                    mode: 0o644,
                    grants: 0,
                    attachments: 0,
                    kept: true,
                    owner_ended: true,
                },
            ],
            attachments: vec![Attachment {
                id: 7,
                segid: 3,
                kernel: 0,
                pid: 901,
                offset: 0,
                size: 2 << 20,
                writable: true,
                revoked: false,
            }],
            truncated: false,
        }
    }

    #[test]
    fn tables() {
        assert_eq!(
            sample().text(),
            "SEGID  NAME  OWNER                  SIZE   MODE  UID   GRANTS  ATTACHED  KEPT\n\
             3      sim   enclave 1 pid 104      2 MiB  0600  0     1       1         -\n\
             4      -     linux pid 880 (ended)  4 KiB  0644  1000  0       0         yes\n\
             ATTACHMENT  SEGID  IN             OFFSET  SIZE   ACCESS\n\
             7           3      linux pid 901  0       2 MiB  rw\n"
        );
        let none = Segments { segments: vec![], attachments: vec![], truncated: false };
        assert_eq!(none.text(), "no segments\n");
    }

    #[test]
    fn one_enclave_sees_its_segments_and_who_attached_them() {
        let e1 = sample().of_enclave(1);
        assert_eq!(e1.segments.len(), 1);
        assert_eq!(e1.attachments.len(), 1, "Linux's attachment of enclave 1's segment");
        let e2 = sample().of_enclave(2);
        assert!(e2.segments.is_empty() && e2.attachments.is_empty());
        assert_eq!(size(3 << 29), "1.5 GiB");
    }
}
