//! `atoll syscalls`: how a program's system calls are answered in an
//! enclave, from the ABI's one table (the README shows this output).

use super::print_json;
use atoll_abi::syscalls::{How, SYSCALLS};
use serde_json::json;

pub fn run(json: bool) {
    if json {
        let all = SYSCALLS
            .iter()
            .map(|&(nr, name, how)| json!({ "nr": nr, "name": name, "how": how_name(how), "reason": reason(how) }))
            .collect();
        print_json(&all);
    } else {
        print!("{}", text());
    }
}

fn how_name(how: How) -> &'static str {
    match how {
        How::Quick => "quick",
        How::Local => "local",
        How::Delegated => "delegated",
        How::Refused(_) => "refused",
    }
}

fn reason(how: How) -> Option<&'static str> {
    match how {
        How::Refused(why) => Some(why),
        _ => None,
    }
}

/// One line per way of answering, with the calls answered that way.
pub fn text() -> String {
    let mut out = String::new();
    for kind in ["quick", "local", "delegated"] {
        let names: Vec<String> = SYSCALLS
            .iter()
            .filter(|&&(_, _, how)| how_name(how) == kind)
            .map(|&(nr, name, _)| format!("{name}({nr})"))
            .collect();
        out.push_str(&format!("{kind} ({}):\n{}\n", names.len(), wrap(&names, 100)));
    }
    for &(nr, name, how) in SYSCALLS {
        if let Some(why) = reason(how) {
            out.push_str(&format!("refused: {name}({nr}): {why}\n"));
        }
    }
    out.push_str("anything else: ENOSYS, reported once by atoll run\n");
    out
}

/// Words joined by ", " in lines of at most `width` columns, indented.
fn wrap(words: &[String], width: usize) -> String {
    let mut lines = vec![String::from(" ")];
    for w in words {
        let line = lines.last_mut().expect("one line at least");
        // Room for ", word" and the comma that may follow it.
        if line.len() + w.len() + 3 > width && line.len() > 1 {
            line.push(',');
            lines.push(format!("  {w}"));
        } else {
            if line.len() > 1 {
                line.push(',');
            }
            line.push(' ');
            line.push_str(w);
        }
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The README's table is this command's output (after a change to the
    /// table, scripts/update-syscall-table.sh rewrites it).
    #[test]
    fn readme_shows_the_table() {
        let readme = include_str!("../../../README.md");
        assert!(
            readme.contains(&text()),
            "README.md's system-call table is out of date: run scripts/update-syscall-table.sh\n{}",
            text()
        );
    }

    #[test]
    fn every_call_once() {
        let t = text();
        for &(nr, name, _) in SYSCALLS {
            assert_eq!(t.matches(&format!(" {name}({nr})")).count(), 1, "{name}");
        }
        assert!(t.lines().all(|l| l.len() <= 100));
    }
}
