//! How numbers look to a person: CPU lists, sizes, durations, tables.

use atoll_abi::MemRange;

const MIB: u64 = 1 << 20;

/// CPU numbers (increasing) as a compact list: "1,3", "2-3", "0-3,8".
pub fn cpu_list(cpus: &[u32]) -> String {
    if cpus.is_empty() {
        return "none".into();
    }
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let first = cpus[i];
        let mut last = first;
        while i + 1 < cpus.len() && cpus[i + 1] == last + 1 {
            i += 1;
            last = cpus[i];
        }
        parts.push(if first == last { first.to_string() } else { format!("{first}-{last}") });
        i += 1;
    }
    parts.join(",")
}

/// Bytes in MiB: "1024", or "0.5" when not a whole number of MiB.
pub fn mib(bytes: u64) -> String {
    if bytes.is_multiple_of(MIB) {
        (bytes / MIB).to_string()
    } else {
        format!("{:.1}", bytes as f64 / MIB as f64)
    }
}

/// Nanoseconds as milliseconds with one decimal.
pub fn ms(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e6)
}

/// Nanoseconds as microseconds with one decimal.
pub fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// Nanoseconds as seconds with one decimal.
pub fn secs(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e9)
}

/// A physical range as /proc/iomem shows it: first and last byte in hex.
pub fn hex_range(range: &MemRange) -> String {
    match range.size {
        0 => format!("{:#x} (empty)", range.start),
        size => format!("{:#x}-{:#x}", range.start, range.start.saturating_add(size - 1)),
    }
}

/// Rows of cells as aligned columns, two spaces apart, no trailing blanks.
pub fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            line.push_str(cell);
            if c + 1 < row.len() {
                line.extend(std::iter::repeat_n(' ', widths[c] - cell.chars().count()));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list(&[]), "none");
        assert_eq!(cpu_list(&[5]), "5");
        assert_eq!(cpu_list(&[1, 3]), "1,3");
        assert_eq!(cpu_list(&[2, 3]), "2-3");
        assert_eq!(cpu_list(&[1, 3, 4]), "1,3-4");
        assert_eq!(cpu_list(&[0, 1, 2, 3, 8, 10, 11, 12]), "0-3,8,10-12");
    }

    #[test]
    fn numbers() {
        assert_eq!(mib(128 << 20), "128");
        assert_eq!(mib(0), "0");
        assert_eq!(mib(1 << 19), "0.5");
        assert_eq!(ms(12_345_678), "12.3");
        assert_eq!(ms(0), "0.0");
        assert_eq!(us(4_240), "4.2");
        assert_eq!(us(4_260), "4.3");
        assert_eq!(secs(61_050_000_000), "61.0");
        assert_eq!(secs(1_960_000_000), "2.0");
    }

    #[test]
    fn ranges() {
        let r = MemRange { start: 0x1_0000_0000, size: 128 << 20 };
        assert_eq!(hex_range(&r), "0x100000000-0x107ffffff");
        assert_eq!(hex_range(&MemRange { start: 0x1000, size: 0 }), "0x1000 (empty)");
    }

    #[test]
    fn tables() {
        let rows = vec![
            vec!["ID".to_string(), "NAME".into(), "STATE".into()],
            vec!["1".to_string(), "enclave1".into(), "running".into()],
            vec!["12".to_string(), "a".into(), "crashed".into()],
        ];
        assert_eq!(
            table(&rows),
            "ID  NAME      STATE\n\
             1   enclave1  running\n\
             12  a         crashed\n"
        );
    }
}
