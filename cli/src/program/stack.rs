//! The initial stack of a program, laid out as Linux's execve lays it out for
//! a static binary. From the top down: 8 zero bytes, the AT_EXECFN string,
//! the environment strings, the argument strings, (16-byte alignment), the
//! AT_PLATFORM string, the 16 AT_RANDOM bytes, (padding), then auxv, a NULL,
//! the envp pointers, a NULL, the argv pointers and argc, at a 16-byte
//! aligned stack pointer.

use atoll_abi::STACK_SIZE;

/// AT_PLATFORM on x86-64.
pub const PLATFORM: &[u8] = b"x86_64";

/// Linux allows the strings a quarter of the stack limit (8 MiB here).
pub const MAX_STRINGS: u64 = STACK_SIZE / 4;

/// What goes on the stack. Strings are given without their NUL.
pub struct Contents<'a> {
    pub argv: &'a [Vec<u8>],
    pub envp: &'a [Vec<u8>],
    /// The program's path, for AT_EXECFN.
    pub execfn: &'a [u8],
    pub random: [u8; 16],
    /// Auxiliary vector entries except the ones that point into the stack
    /// (AT_RANDOM, AT_EXECFN, AT_PLATFORM), which are added after them,
    /// and the closing AT_NULL.
    pub aux: &'a [(u64, u64)],
}

/// The stack's used bytes: `bytes` belong at [sp, top).
#[derive(Debug)]
pub struct Stack {
    pub sp: u64,
    pub bytes: Vec<u8>,
}

/// Lays out `c` below `top` (16-byte aligned).
pub fn build(top: u64, c: &Contents) -> Result<Stack, String> {
    assert_eq!(top % 16, 0, "the stack top must be 16-byte aligned");
    if let Some(i) = c.argv.iter().position(|s| s.contains(&0)) {
        return Err(format!("argument {i} contains a NUL byte"));
    }
    if c.envp.iter().any(|s| s.contains(&0)) || c.execfn.contains(&0) {
        return Err("the environment or the program's path contains a NUL byte".into());
    }
    let text = |list: &[Vec<u8>]| list.iter().map(|s| s.len() as u64 + 1).sum::<u64>();
    let strings = 8 + c.execfn.len() as u64 + 1 + text(c.envp) + text(c.argv);
    if strings > MAX_STRINGS {
        return Err(format!(
            "the arguments and environment take {strings} bytes; at most {MAX_STRINGS} fit \
             (a quarter of the stack, as on Linux)"
        ));
    }
    let aux_entries = c.aux.len() as u64 + 4;
    let word_count = 1 + (c.argv.len() as u64 + 1) + (c.envp.len() as u64 + 1) + 2 * aux_entries;
    // Strings, alignment, platform, random bytes, alignment, vectors.
    let bound = (strings + 16 + (PLATFORM.len() as u64 + 1) + 16 + 16 + word_count * 8).next_multiple_of(16);
    let mut image = Area { base: top - bound, bytes: vec![0; bound as usize] };

    // Linux leaves the top 8 bytes zero; the strings go below them.
    let mut p = top - 8;
    p -= c.execfn.len() as u64 + 1;
    let execfn = p;
    image.put_str(execfn, c.execfn);
    p -= text(c.envp) + text(c.argv);
    let argv = image.put_strs(p, c.argv);
    let envp = image.put_strs(p + text(c.argv), c.envp);
    p &= !15;
    p -= PLATFORM.len() as u64 + 1;
    let platform = p;
    image.put_str(platform, PLATFORM);
    p -= 16;
    let random = p;
    image.put(random, &c.random);

    let sp = (p - word_count * 8) & !15;
    let mut words = vec![c.argv.len() as u64];
    words.extend(argv.iter().chain([&0]));
    words.extend(envp.iter().chain([&0]));
    let pointers =
        [(libc::AT_RANDOM, random), (libc::AT_EXECFN, execfn), (libc::AT_PLATFORM, platform), (libc::AT_NULL, 0)];
    for &(key, value) in c.aux.iter().chain(&pointers) {
        words.extend([key, value]);
    }
    for (i, word) in words.iter().enumerate() {
        image.put(sp + 8 * i as u64, &word.to_le_bytes());
    }
    let from = (sp - image.base) as usize;
    Ok(Stack { sp, bytes: image.bytes.split_off(from) })
}

/// Bytes that belong at [base, base + bytes.len()), zeroed to start with.
struct Area {
    base: u64,
    bytes: Vec<u8>,
}

impl Area {
    fn put(&mut self, addr: u64, data: &[u8]) {
        let at = (addr - self.base) as usize;
        self.bytes[at..at + data.len()].copy_from_slice(data);
    }

    /// `s` and its NUL at `addr` (the NUL is already there: bytes start zeroed).
    fn put_str(&mut self, addr: u64, s: &[u8]) {
        self.put(addr, s);
    }

    /// The strings one after the other from `addr`; returns their addresses.
    fn put_strs(&mut self, mut addr: u64, list: &[Vec<u8>]) -> Vec<u64> {
        let mut addrs = Vec::with_capacity(list.len());
        for s in list {
            self.put_str(addr, s);
            addrs.push(addr);
            addr += s.len() as u64 + 1;
        }
        addrs
    }
}

#[cfg(test)]
mod tests;
