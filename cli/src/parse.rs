//! Parsers for the command-line values of `atoll create`. Each returns the
//! sentence clap shows after "invalid value '<x>' for '--option'".

use crate::cpuset::MAX_HOST_CPU;
use atoll_abi::{CMDLINE_LEN, MAX_CPUS, NAME_LEN};

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;

/// Linux hands memory over in blocks of this size.
pub const MEM_BLOCK: u64 = 128 * MIB;

/// What `--cpus` asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuSpec {
    /// Any this many CPUs, chosen by the module.
    Count(u32),
    /// These Linux CPU numbers, increasing, no duplicates.
    List(Vec<u32>),
}

/// `--cpus`: a count ("4") or a list of Linux CPU numbers ("1,3", "2-3",
/// "1,3-4"; one CPU alone is "3-3").
pub fn cpus(text: &str) -> Result<CpuSpec, String> {
    let text = text.trim();
    if is_number(text) {
        let count = number(text)?;
        return match count {
            0 => Err("an enclave needs at least 1 CPU".into()),
            n if n as usize > MAX_CPUS => Err(format!("at most {MAX_CPUS} CPUs fit in one enclave")),
            n => Ok(CpuSpec::Count(n)),
        };
    }
    let mut list = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        let (first, last) = match item.split_once('-') {
            Some((a, b)) => (cpu_number(a.trim(), text)?, cpu_number(b.trim(), text)?),
            None => {
                let cpu = cpu_number(item, text)?;
                (cpu, cpu)
            }
        };
        if last < first {
            return Err(format!("the range {item} goes backwards"));
        }
        for cpu in first..=last {
            if list.contains(&cpu) {
                return Err(format!("CPU {cpu} is listed twice"));
            }
            list.push(cpu);
        }
    }
    if list.len() > MAX_CPUS {
        return Err(format!("{} CPUs listed; at most {MAX_CPUS} fit in one enclave", list.len()));
    }
    list.sort_unstable();
    Ok(CpuSpec::List(list))
}

/// CPU numbers, in order (one clap value, not one per CPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuList(pub Vec<u32>);

/// A list of CPU numbers where a lone number is one CPU, not a count
/// (`atoll noise --cpus 0`).
pub fn cpu_list(text: &str) -> Result<CpuList, String> {
    let text = text.trim();
    if is_number(text) {
        return Ok(CpuList(vec![cpu_number(text, text)?]));
    }
    match cpus(text)? {
        CpuSpec::List(list) => Ok(CpuList(list)),
        CpuSpec::Count(_) => unreachable!("a count is a lone number"),
    }
}

/// `--seconds`: a positive number of seconds, at most an hour.
pub fn seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 3600.0 => Ok(s),
        _ => Err(format!("'{text}' is not a duration in seconds from above 0 to 3600 (like 10 or 0.5)")),
    }
}

fn is_number(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn number(s: &str) -> Result<u32, String> {
    s.parse().map_err(|_| format!("{s} is too large"))
}

fn cpu_number(s: &str, whole: &str) -> Result<u32, String> {
    if !is_number(s) {
        return Err(format!(
            "'{whole}' is neither a CPU count (like 4) nor a list of CPU numbers (like 1,3 or 2-3 or 1,3-4)"
        ));
    }
    match number(s) {
        Ok(cpu) if cpu < MAX_HOST_CPU => Ok(cpu),
        _ => Err(format!("CPU {s} is out of range: CPU numbers go from 0 to {}", MAX_HOST_CPU - 1)),
    }
}

/// `--mem`: "256M", "1G", "128MiB", "1gb" or a byte count; every unit is a
/// power of 1024. The result is a positive multiple of 128 MiB.
pub fn mem(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (value, unit) = text.split_at(digits);
    let unit_bytes = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        _ => {
            return Err(format!(
                "'{text}' is not a size: use a byte count or a number with K, M, G or T (like 256M, 1G, 128MiB)"
            ))
        }
    };
    if value.is_empty() {
        return Err(format!("'{text}' is not a size: it needs a number (like 256M, 1G, 128MiB)"));
    }
    let bytes = value
        .parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(unit_bytes))
        .ok_or_else(|| format!("{text} is too large"))?;
    if bytes == 0 {
        return Err("an enclave needs memory: at least 128M".into());
    }
    if !bytes.is_multiple_of(MEM_BLOCK) {
        let below = bytes / MEM_BLOCK * MEM_BLOCK;
        let hint =
            if below == 0 { "128M".to_string() } else { format!("{}M or {}M", below / MIB, (below + MEM_BLOCK) / MIB) };
        return Err(format!(
            "{text} is not a multiple of 128 MiB (Linux gives memory away in 128 MiB blocks): try {hint}"
        ));
    }
    Ok(bytes)
}

/// `--name`: letters, digits, '_', '.', '-'; at most NAME_LEN - 1 bytes.
pub fn name(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the name is empty (leave --name out to get enclave<N>)".into());
    }
    if let Some(bad) = text.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))) {
        return Err(format!("'{bad}' is not allowed in a name: use letters, digits, '_', '.' and '-'"));
    }
    if text.len() > NAME_LEN - 1 {
        return Err(format!("the name is {} characters long; at most {} fit", text.len(), NAME_LEN - 1));
    }
    Ok(text.to_string())
}

/// `--cmdline`: the LWK's command line, at most CMDLINE_LEN - 1 bytes.
pub fn cmdline(text: &str) -> Result<String, String> {
    if text.len() > CMDLINE_LEN - 1 {
        return Err(format!("the command line is {} bytes long; at most {} fit", text.len(), CMDLINE_LEN - 1));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_counts() {
        assert_eq!(cpus("1"), Ok(CpuSpec::Count(1)));
        assert_eq!(cpu_list("1"), Ok(CpuList(vec![1])));
        assert_eq!(cpu_list("0,2-3"), Ok(CpuList(vec![0, 2, 3])));
        assert!(cpu_list("x").is_err());
        assert_eq!(seconds("0.5"), Ok(0.5));
        assert!(seconds("0").is_err() && seconds("-1").is_err() && seconds("a").is_err());
        assert_eq!(cpus("4"), Ok(CpuSpec::Count(4)));
        assert_eq!(cpus(" 64 "), Ok(CpuSpec::Count(64)));
        assert!(cpus("0").unwrap_err().contains("at least 1 CPU"));
        assert!(cpus("65").unwrap_err().contains("at most 64"));
        assert!(cpus("300").is_err());
        assert!(cpus("99999999999999999999").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpus("1,3"), Ok(CpuSpec::List(vec![1, 3])));
        assert_eq!(cpus("2-3"), Ok(CpuSpec::List(vec![2, 3])));
        assert_eq!(cpus("1,3-4"), Ok(CpuSpec::List(vec![1, 3, 4])));
        assert_eq!(cpus("5-5"), Ok(CpuSpec::List(vec![5])));
        assert_eq!(cpus("7,0"), Ok(CpuSpec::List(vec![0, 7])));
        assert_eq!(cpus("1, 3 - 4"), Ok(CpuSpec::List(vec![1, 3, 4])));
        assert_eq!(cpus("200-255"), Ok(CpuSpec::List((200..=255).collect())));
    }

    #[test]
    fn cpu_junk() {
        for junk in ["", " ", "x", "1,", ",1", "1,,2", "1-", "-1", "1-2-3", "a-b", "1;2", "+1,2", "1.5", "0x3,4"] {
            assert!(cpus(junk).is_err(), "accepted {junk:?}");
        }
        assert!(cpus("3-1").unwrap_err().contains("backwards"));
        assert!(cpus("1,1").unwrap_err().contains("twice"));
        assert!(cpus("1-3,2").unwrap_err().contains("twice"));
        assert!(cpus("1,256").unwrap_err().contains("out of range"));
        assert!(cpus("250-256").unwrap_err().contains("out of range"));
        assert!(cpus("0-64").unwrap_err().contains("65 CPUs"));
    }

    #[test]
    fn mem_sizes() {
        assert_eq!(mem("128M"), Ok(128 * MIB));
        assert_eq!(mem("256M"), Ok(256 * MIB));
        assert_eq!(mem("1G"), Ok(GIB));
        assert_eq!(mem("1g"), Ok(GIB));
        assert_eq!(mem("128MiB"), Ok(128 * MIB));
        assert_eq!(mem("2GiB"), Ok(2 * GIB));
        assert_eq!(mem("1 GB"), Ok(GIB));
        assert_eq!(mem("131072K"), Ok(128 * MIB));
        assert_eq!(mem("1T"), Ok(TIB));
        assert_eq!(mem("134217728"), Ok(128 * MIB));
        assert_eq!(mem("268435456B"), Ok(256 * MIB));
    }

    #[test]
    fn mem_rejects() {
        assert!(mem("0").unwrap_err().contains("needs memory"));
        assert!(mem("0M").is_err());
        assert!(mem("100M").unwrap_err().contains("try 128M"));
        assert!(mem("200M").unwrap_err().contains("try 128M or 256M"));
        assert!(mem("1000").unwrap_err().contains("multiple of 128 MiB"));
        for junk in ["", "M", "G1", "1.5G", "-128M", "12 8M", "128X", "128MiBs", "0x8000000"] {
            assert!(mem(junk).is_err(), "accepted {junk:?}");
        }
        assert!(mem("99999999999T").unwrap_err().contains("too large"));
    }

    #[test]
    fn names() {
        assert_eq!(name("web-1.a_b"), Ok("web-1.a_b".to_string()));
        assert_eq!(name(&"x".repeat(31)), Ok("x".repeat(31)));
        assert!(name(&"x".repeat(32)).unwrap_err().contains("at most 31"));
        assert!(name("").is_err());
        assert!(name("a b").unwrap_err().contains("' '"));
        assert!(name("a/b").is_err());
        assert!(name("é").is_err());
    }

    #[test]
    fn cmdlines() {
        assert_eq!(cmdline("selftest"), Ok("selftest".to_string()));
        assert!(cmdline(&"x".repeat(511)).is_ok());
        assert!(cmdline(&"x".repeat(512)).is_err());
    }
}
