//! What /proc/<pid>/maps shows of a program's address space: each mapping
//! in address order with its access, whether it is shared, and what it
//! maps (a file from an offset, the heap, the stack, ...). The LWK keeps
//! it beside the page tables as mmap, mprotect, munmap and the rest change
//! them, and prints it in Linux's format, because runtimes read it (glibc's
//! pthread_getattr_np finds the main stack there).

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;
use core::fmt::Write;

use crate::user_pages::Access;

/// A mapped file as Linux names it.
#[derive(Debug, PartialEq, Eq)]
pub struct FileName {
    /// stat's st_dev (the C library's encoding).
    pub dev: u64,
    /// stat's st_ino.
    pub ino: u64,
    /// Its path (readlink of its descriptor).
    pub path: Vec<u8>,
}

/// What a mapping maps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Backing {
    /// Anonymous memory.
    Anonymous,
    /// The heap (brk).
    Heap,
    /// The main stack.
    Stack,
    /// The vDSO's image.
    Vdso,
    /// The vDSO's data.
    Vvar,
    /// An XEMEM attachment.
    Xemem,
    /// System V shared memory segment `id` with `key`.
    SysV {
        /// shmget's key.
        key: i32,
        /// The segment's id.
        id: u32,
    },
    /// A file's bytes from `offset` on at the mapping's start.
    File {
        /// Which file.
        name: Arc<FileName>,
        /// Where in it.
        offset: u64,
    },
}

/// One mapping, [its start, end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Its end (exclusive).
    pub end: u64,
    /// What it allows.
    pub access: Access,
    /// MAP_SHARED.
    pub shared: bool,
    /// What it maps.
    pub backing: Backing,
}

/// A program's mappings, start -> mapping, never overlapping.
#[derive(Clone, Debug, Default)]
pub struct Maps {
    mappings: BTreeMap<u64, Mapping>,
}

impl Backing {
    /// The same backing from `by` bytes further on.
    pub fn advanced(&self, by: u64) -> Backing {
        match self {
            Backing::File { name, offset } => {
                Backing::File { name: name.clone(), offset: offset + by }
            }
            other => other.clone(),
        }
    }
}

impl Maps {
    /// An empty address space.
    pub fn new() -> Maps {
        Maps::default()
    }

    /// [start, end) maps `backing` now, with `access`, in place of whatever
    /// was there.
    pub fn set(&mut self, start: u64, end: u64, access: Access, shared: bool, backing: Backing) {
        if start >= end {
            return;
        }
        self.remove(start, end);
        self.mappings.insert(start, Mapping { end, access, shared, backing });
        self.merge_around(start, end);
    }

    /// Nothing is mapped in [start, end) any more.
    pub fn remove(&mut self, start: u64, end: u64) {
        self.split_at(start);
        self.split_at(end);
        let inside: Vec<u64> = self.mappings.range(start..end).map(|(&s, _)| s).collect();
        for s in inside {
            self.mappings.remove(&s);
        }
    }

    /// The mappings in [start, end) allow `access` now.
    pub fn protect(&mut self, start: u64, end: u64, access: Access) {
        self.change(start, end, |m, _| m.access = access);
    }

    /// The mappings in [start, end) map `backing` (from its start), keeping
    /// their access.
    pub fn label(&mut self, start: u64, end: u64, shared: bool, backing: &Backing) {
        self.change(start, end, |m, at| {
            m.shared = shared;
            m.backing = backing.advanced(at - start);
        });
    }

    /// The mapping that holds `va`: its start and itself.
    pub fn at(&self, va: u64) -> Option<(u64, &Mapping)> {
        let (&s, m) = self.mappings.range(..=va).next_back()?;
        (m.end > va).then_some((s, m))
    }

    /// How many mappings there are.
    pub fn len(&self) -> usize {
        self.mappings.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.mappings.is_empty()
    }

    /// Whether a change to [start, end) would cut a mapping in two (an edge
    /// falls inside one).
    pub fn cuts(&self, start: u64, end: u64) -> bool {
        let inside = |at: u64| self.at(at).is_some_and(|(s, _)| s != at);
        inside(start) || inside(end)
    }

    /// Every mapping, in address order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, &Mapping)> {
        self.mappings.iter().map(|(&s, m)| (s, m))
    }

    /// The list as /proc/<pid>/maps shows it, its whole lines up to `limit`
    /// bytes.
    pub fn text(&self, limit: usize) -> String {
        let mut out = String::new();
        for (start, m) in self.iter() {
            let before = out.len();
            line(&mut out, start, m);
            if out.len() > limit {
                out.truncate(before);
                break;
            }
        }
        out
    }

    /// Applies `f` to each mapping in [start, end) (cut at its edges), with
    /// the mapping's start, then merges what became alike.
    fn change(&mut self, start: u64, end: u64, mut f: impl FnMut(&mut Mapping, u64)) {
        if start >= end {
            return;
        }
        self.split_at(start);
        self.split_at(end);
        for (&s, m) in self.mappings.range_mut(start..end) {
            f(m, s);
        }
        self.merge_around(start, end);
    }

    /// The mapping that holds `at` inside it becomes two, at `at`.
    fn split_at(&mut self, at: u64) {
        let Some((&s, m)) = self.mappings.range(..at).next_back() else { return };
        if m.end <= at {
            return;
        }
        let right = Mapping { backing: m.backing.advanced(at - s), ..m.clone() };
        if let Some(left) = self.mappings.get_mut(&s) {
            left.end = at;
        }
        self.mappings.insert(at, right);
    }

    /// Joins neighbours in and around [start, end) that continue each other,
    /// as Linux merges its areas.
    fn merge_around(&mut self, start: u64, end: u64) {
        let first = self.mappings.range(..start).next_back().map_or(start, |(&s, _)| s);
        let starts: Vec<u64> = self.mappings.range(first..=end).map(|(&s, _)| s).collect();
        let mut held = None::<u64>;
        for s in starts {
            let joins = held.and_then(|h| {
                let left = self.mappings.get(&h)?;
                let right = self.mappings.get(&s)?;
                continues(h, left, s, right).then_some(h)
            });
            match joins {
                Some(h) => {
                    let Some(right) = self.mappings.remove(&s) else { continue };
                    if let Some(left) = self.mappings.get_mut(&h) {
                        left.end = right.end;
                    }
                }
                None => held = Some(s),
            }
        }
    }
}

/// `right` (at `rs`) goes on where `left` (at `ls`) ends, alike in all.
fn continues(ls: u64, left: &Mapping, rs: u64, right: &Mapping) -> bool {
    if left.end != rs || left.access != right.access || left.shared != right.shared {
        return false;
    }
    match (&left.backing, &right.backing) {
        (Backing::Anonymous, Backing::Anonymous)
        | (Backing::Heap, Backing::Heap)
        | (Backing::Stack, Backing::Stack) => true,
        (Backing::File { name: a, offset: x }, Backing::File { name: b, offset: y }) => {
            a == b && *y == x + (rs - ls)
        }
        _ => false,
    }
}

/// Linux's major and minor numbers of a st_dev (glibc's encoding).
fn major_minor(dev: u64) -> (u64, u64) {
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    (major, minor)
}

/// One line of /proc/<pid>/maps: the name, if any, starts in column 74.
fn line(out: &mut String, start: u64, m: &Mapping) {
    let flag = |on: bool, c: char| if on { c } else { '-' };
    let (offset, dev, ino, name): (u64, u64, u64, Option<&[u8]>) = match &m.backing {
        Backing::File { name, offset } => (*offset, name.dev, name.ino, Some(&name.path)),
        Backing::SysV { id, .. } => (0, 0, u64::from(*id), None),
        _ => (0, 0, 0, None),
    };
    let (major, minor) = major_minor(dev);
    let at = out.len();
    let _ = write!(
        out,
        "{start:08x}-{:08x} {}{}{}{} {offset:08x} {major:02x}:{minor:02x} {ino} ",
        m.end,
        flag(m.access.read, 'r'),
        flag(m.access.write, 'w'),
        flag(m.access.exec, 'x'),
        if m.shared { 's' } else { 'p' },
    );
    let label = match (&m.backing, name) {
        // A newline in a name is written as Linux writes it, so each
        // mapping stays one line.
        (_, Some(path)) => Some(String::from_utf8_lossy(path).replace('\n', "\\012")),
        (Backing::Heap, _) => Some("[heap]".into()),
        (Backing::Stack, _) => Some("[stack]".into()),
        (Backing::Vdso, _) => Some("[vdso]".into()),
        (Backing::Vvar, _) => Some("[vvar]".into()),
        (Backing::Xemem, _) => Some("[xemem]".into()),
        (Backing::SysV { key, .. }, _) => {
            Some(alloc::format!("/SYSV{:08x} (deleted)", *key as u32))
        }
        (Backing::Anonymous, _) if m.shared => Some("/dev/zero (deleted)".into()),
        _ => None,
    };
    if let Some(label) = label {
        while out.len() - at < 72 {
            out.push(' ');
        }
        out.push(' ');
        out.push_str(&label);
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    const RW: Access = Access { read: true, write: true, exec: false };
    const R: Access = Access { read: true, write: false, exec: false };
    const RX: Access = Access { read: true, write: false, exec: true };

    fn file(path: &str) -> Arc<FileName> {
        Arc::new(FileName { dev: 0xfe00, ino: 247026, path: path.as_bytes().to_vec() })
    }

    fn starts(maps: &Maps) -> Vec<(u64, u64)> {
        maps.iter().map(|(s, m)| (s, m.end)).collect()
    }

    #[test]
    fn prints_as_linux_does() {
        let mut maps = Maps::new();
        let cat = Backing::File { name: file("/usr/bin/cat"), offset: 0x2000 };
        maps.set(0x5581c87af000, 0x5581c87b4000, RX, false, cat);
        maps.set(0x7ffd0000, 0x7ffd2000, RW, false, Backing::Stack);
        maps.set(0x10000, 0x11000, RW, false, Backing::Anonymous);
        assert_eq!(
            maps.text(usize::MAX),
            "00010000-00011000 rw-p 00000000 00:00 0 \n\
             7ffd0000-7ffd2000 rw-p 00000000 00:00 0                                  [stack]\n\
             5581c87af000-5581c87b4000 r-xp 00002000 fe:00 247026                     /usr/bin/cat\n"
        );
    }

    #[test]
    fn protect_splits_and_merges_back() {
        let mut maps = Maps::new();
        maps.set(0x1000, 0x5000, RW, false, Backing::Anonymous);
        maps.protect(0x2000, 0x3000, R);
        assert_eq!(starts(&maps), [(0x1000, 0x2000), (0x2000, 0x3000), (0x3000, 0x5000)]);
        assert_eq!(maps.at(0x2800).map(|(s, m)| (s, m.access)), Some((0x2000, R)));
        maps.protect(0x2000, 0x3000, RW);
        assert_eq!(starts(&maps), [(0x1000, 0x5000)]);
        assert!(maps.cuts(0x2000, 0x3000) && maps.cuts(0x1000, 0x3000));
        assert!(!maps.cuts(0x1000, 0x5000) && !maps.cuts(0x6000, 0x7000));
    }

    #[test]
    fn a_newline_in_a_name_is_escaped_as_linux_does() {
        let mut maps = Maps::new();
        maps.set(0x10000, 0x11000, R, false, Backing::File { name: file("/tmp/a\nb"), offset: 0 });
        let text = maps.text(usize::MAX);
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(text.ends_with(" /tmp/a\\012b\n"), "{text}");
    }

    #[test]
    fn a_file_keeps_its_offsets_when_cut() {
        let mut maps = Maps::new();
        let lib = file("/lib/libc.so.6");
        maps.set(0x10000, 0x20000, R, false, Backing::File { name: lib.clone(), offset: 0x4000 });
        maps.remove(0x12000, 0x13000);
        maps.protect(0x18000, 0x20000, RX);
        let offsets: Vec<(u64, u64)> = maps
            .iter()
            .map(|(s, m)| match &m.backing {
                Backing::File { offset, .. } => (s, *offset),
                _ => (s, u64::MAX),
            })
            .collect();
        assert_eq!(offsets, [(0x10000, 0x4000), (0x13000, 0x7000), (0x18000, 0xc000)]);
        // Access back as it was: one piece again past the hole.
        maps.protect(0x18000, 0x20000, R);
        assert_eq!(starts(&maps), [(0x10000, 0x12000), (0x13000, 0x20000)]);
    }

    #[test]
    fn a_new_mapping_replaces_what_was_there() {
        let mut maps = Maps::new();
        maps.set(0x1000, 0x9000, RW, false, Backing::Anonymous);
        let data = Backing::File { name: file("/tmp/data"), offset: 0 };
        maps.set(0x3000, 0x4000, RW, true, data);
        assert_eq!(starts(&maps), [(0x1000, 0x3000), (0x3000, 0x4000), (0x4000, 0x9000)]);
        assert!(maps.at(0x3000).is_some_and(|(_, m)| m.shared));
        maps.label(0x4000, 0x9000, false, &Backing::Heap);
        assert_eq!(maps.at(0x8fff).map(|(_, m)| m.backing.clone()), Some(Backing::Heap));
        assert_eq!(maps.at(0x9000), None);
        assert_eq!(maps.text(40).lines().count(), 0);
        assert_eq!(maps.text(100).lines().count(), 1);
        maps.remove(0, u64::MAX);
        assert_eq!(maps.text(usize::MAX), "");
    }

    #[test]
    fn names_what_has_no_file() {
        let mut maps = Maps::new();
        maps.set(0x1000, 0x2000, RW, true, Backing::SysV { key: 0x1234, id: 7 });
        maps.set(0x2000, 0x3000, RW, true, Backing::Anonymous);
        maps.set(0x3000, 0x4000, R, false, Backing::Vvar);
        maps.set(0x4000, 0x5000, RX, false, Backing::Vdso);
        let text = maps.text(usize::MAX);
        let names: Vec<&str> = text.lines().map(|l| l.get(73..).unwrap_or("")).collect();
        assert_eq!(names, ["/SYSV00001234 (deleted)", "/dev/zero (deleted)", "[vvar]", "[vdso]"]);
        assert!(text.starts_with("00001000-00002000 rw-s 00000000 00:00 7 "));
    }
}
