//! The stack is read back the way a C runtime reads it at _start.

use super::*;

const TOP: u64 = atoll_abi::STACK_TOP;

/// argc, argv, envp and auxv.
type Vectors = (u64, Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<(u64, u64)>);

/// A built stack, readable by address.
struct View {
    sp: u64,
    bytes: Vec<u8>,
}

impl View {
    fn word(&self, addr: u64) -> u64 {
        let at = self.offset(addr, 8);
        u64::from_le_bytes(self.bytes[at..at + 8].try_into().unwrap())
    }

    fn offset(&self, addr: u64, len: u64) -> usize {
        assert!(addr >= self.sp && addr + len <= TOP, "{addr:#x} is outside the stack");
        (addr - self.sp) as usize
    }

    /// The NUL-terminated string at `addr`.
    fn string(&self, addr: u64) -> Vec<u8> {
        let at = self.offset(addr, 1);
        let len = self.bytes[at..].iter().position(|&b| b == 0).expect("no NUL before the top");
        self.bytes[at..at + len].to_vec()
    }

    /// argc, argv, envp and auxv as _start finds them.
    fn read(&self) -> Vectors {
        let argc = self.word(self.sp);
        let mut at = self.sp + 8;
        let list = |at: &mut u64| {
            let mut strings = Vec::new();
            loop {
                let ptr = self.word(*at);
                *at += 8;
                if ptr == 0 {
                    return strings;
                }
                strings.push(self.string(ptr));
            }
        };
        let argv = list(&mut at);
        let envp = list(&mut at);
        let mut aux = Vec::new();
        loop {
            let entry = (self.word(at), self.word(at + 8));
            at += 16;
            aux.push(entry);
            if entry.0 == libc::AT_NULL {
                return (argc, argv, envp, aux);
            }
        }
    }
}

fn strings(list: &[&str]) -> Vec<Vec<u8>> {
    list.iter().map(|s| s.as_bytes().to_vec()).collect()
}

fn build_view(argv: &[&str], envp: &[&str]) -> (View, Vec<(u64, u64)>) {
    let aux = vec![(libc::AT_PAGESZ, 4096), (libc::AT_ENTRY, 0x40_1000), (libc::AT_UID, 1000)];
    let (argv, envp) = (strings(argv), strings(envp));
    let c = Contents { argv: &argv, envp: &envp, execfn: b"./prog", random: *b"0123456789abcdef", aux: &aux };
    let stack = build(TOP, &c).unwrap();
    assert_eq!(stack.sp + stack.bytes.len() as u64, TOP);
    (View { sp: stack.sp, bytes: stack.bytes }, aux)
}

#[test]
fn reads_back_like_start_does() {
    let (view, aux) = build_view(&["./prog", "one", "", "three words"], &["HOME=/root", "PATH=/bin:/usr/bin"]);
    assert_eq!(view.sp % 16, 0);
    let (argc, argv, envp, auxv) = view.read();
    assert_eq!(argc, 4);
    assert_eq!(argv, strings(&["./prog", "one", "", "three words"]));
    assert_eq!(envp, strings(&["HOME=/root", "PATH=/bin:/usr/bin"]));
    // The given entries first, in order, then the pointers, then AT_NULL.
    assert_eq!(auxv[..3], aux[..]);
    let keys: Vec<u64> = auxv[3..].iter().map(|e| e.0).collect();
    assert_eq!(keys, [libc::AT_RANDOM, libc::AT_EXECFN, libc::AT_PLATFORM, libc::AT_NULL]);
    let random = auxv[3].1;
    let at = view.offset(random, 16);
    assert_eq!(&view.bytes[at..at + 16], b"0123456789abcdef");
    assert_eq!(view.string(auxv[4].1), b"./prog");
    assert_eq!(view.string(auxv[5].1), b"x86_64");
    assert_eq!(auxv[6].1, 0);
}

#[test]
fn strings_sit_at_the_top_in_linux_order() {
    let (view, _) = build_view(&["a", "bb"], &["C=1"]);
    // Ascending: argv strings, envp strings, execfn, then 8 zero bytes.
    let tail = b"a\0bb\0C=1\0./prog\0\0\0\0\0\0\0\0\0";
    assert_eq!(&view.bytes[view.bytes.len() - tail.len()..], tail);
    // AT_RANDOM's bytes and the platform string lie below the strings and
    // above the vectors.
    let (_, _, _, auxv) = view.read();
    let random = auxv.iter().find(|e| e.0 == libc::AT_RANDOM).unwrap().1;
    let platform = auxv.iter().find(|e| e.0 == libc::AT_PLATFORM).unwrap().1;
    assert_eq!(random + 16, platform);
    let auxv_end = view.sp + 8 * (1 + 3 + 2) + 16 * auxv.len() as u64;
    assert!(auxv_end <= random);
    assert!(platform + 7 <= TOP - tail.len() as u64);
}

#[test]
fn aligned_whatever_the_counts() {
    for args in 1..6 {
        for envs in 0..4 {
            let argv: Vec<String> = (0..args).map(|i| "x".repeat(i * 3 + 1)).collect();
            let envp: Vec<String> = (0..envs).map(|i| format!("V{i}={}", "y".repeat(i))).collect();
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            let envp: Vec<&str> = envp.iter().map(String::as_str).collect();
            let (view, _) = build_view(&argv, &envp);
            assert_eq!(view.sp % 16, 0, "{args} args, {envs} env");
            let (argc, read_argv, read_envp, _) = view.read();
            assert_eq!(argc, args as u64);
            assert_eq!(read_argv, strings(&argv));
            assert_eq!(read_envp, strings(&envp));
        }
    }
}

#[test]
fn no_environment() {
    let (view, _) = build_view(&["prog"], &[]);
    let (argc, argv, envp, _) = view.read();
    assert_eq!((argc, argv, envp), (1, strings(&["prog"]), vec![]));
}

#[test]
fn limits() {
    let big = vec![vec![b'x'; (MAX_STRINGS / 2) as usize]; 2];
    let c = Contents { argv: &big, envp: &[], execfn: b"p", random: [0; 16], aux: &[] };
    assert!(build(TOP, &c).unwrap_err().contains("at most 2097152 fit"));
    // Just under the limit fits, and the stack stays inside its region.
    let fits = vec![vec![b'x'; (MAX_STRINGS - 8 - 2 - 1) as usize]];
    let c = Contents { argv: &fits, envp: &[], execfn: b"p", random: [0; 16], aux: &[] };
    let stack = build(TOP, &c).unwrap();
    assert!(stack.bytes.len() as u64 <= STACK_SIZE);

    let nul = strings(&["a\0b"]);
    let c = Contents { argv: &nul, envp: &[], execfn: b"p", random: [0; 16], aux: &[] };
    assert!(build(TOP, &c).unwrap_err().contains("NUL"));
}
