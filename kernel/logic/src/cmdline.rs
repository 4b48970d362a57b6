//! Kernel command-line parsing.
//!
//! The command line is a list of words separated by ASCII whitespace. A
//! word is either a bare flag (`selftest`) or a `key=value` pair
//! (`pmt_tau=1024`). Parsing is lazy and borrows the original string, so
//! it works before any allocator exists.

/// A borrowed kernel command line.
#[derive(Clone, Copy, Debug)]
pub struct Cmdline<'a> {
    text: &'a str,
}

impl<'a> Cmdline<'a> {
    /// Wraps the raw command line.
    pub fn new(s: &'a str) -> Self {
        Self { text: s }
    }

    /// The whitespace-separated words, in order.
    pub fn words(&self) -> impl Iterator<Item = &'a str> {
        self.text.split_ascii_whitespace()
    }

    /// Whether the bare word `flag` is present; `flag=...` does not count.
    pub fn has(&self, flag: &str) -> bool {
        self.words().any(|w| w == flag)
    }

    /// The value of the last `key=value` word for `key` (later words
    /// override earlier ones, so a boot loader can append overrides).
    /// `key=` yields `Some("")`.
    pub fn value(&self, key: &str) -> Option<&'a str> {
        self.words()
            .filter_map(|w| w.split_once('='))
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v)
            .last()
    }

    /// [`value`](Self::value) parsed as a decimal or `0x`-prefixed
    /// hexadecimal `u64`; `None` if absent or malformed.
    pub fn value_u64(&self, key: &str) -> Option<u64> {
        parse_u64(self.value(key)?)
    }
}

/// Parses decimal or `0x`/`0X`-prefixed hexadecimal.
fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_match_bare_words_only() {
        let c = Cmdline::new("  selftest\tquiet pmt_tau=123 bench=1\n");
        assert!(c.has("selftest"));
        assert!(c.has("quiet"));
        assert!(!c.has("self"));
        assert!(!c.has("bench"), "key=value is not a flag");
        assert!(!c.has("pmt_tau=123".split('=').next().unwrap()));
        assert_eq!(c.words().collect::<Vec<_>>(), ["selftest", "quiet", "pmt_tau=123", "bench=1"]);
    }

    #[test]
    fn values() {
        let c = Cmdline::new("pmt_tau=123 cpus=4 empty= cpus=8 a=b=c");
        assert_eq!(c.value("pmt_tau"), Some("123"));
        assert_eq!(c.value("cpus"), Some("8"), "last one wins");
        assert_eq!(c.value("empty"), Some(""));
        assert_eq!(c.value("a"), Some("b=c"));
        assert_eq!(c.value("pmt"), None);
        assert_eq!(c.value("missing"), None);
    }

    #[test]
    fn numeric_values() {
        let c = Cmdline::new(concat!(
            "dec=1024 hex=0x1F HEX=0XfF bad=12z neg=-1 big=18446744073709551615 ",
            "over=0x1_0000_0000_0000_0000 e="
        ));
        assert_eq!(c.value_u64("dec"), Some(1024));
        assert_eq!(c.value_u64("hex"), Some(0x1f));
        assert_eq!(c.value_u64("HEX"), Some(0xff));
        assert_eq!(c.value_u64("bad"), None);
        assert_eq!(c.value_u64("neg"), None);
        assert_eq!(c.value_u64("big"), Some(u64::MAX));
        assert_eq!(c.value_u64("over"), None);
        assert_eq!(c.value_u64("e"), None);
        assert_eq!(c.value_u64("missing"), None);
    }

    #[test]
    fn empty_command_line() {
        let c = Cmdline::new("");
        assert_eq!(c.words().count(), 0);
        assert!(!c.has(""));
        assert_eq!(c.value(""), None);
    }
}
