//! Enclave owners (`atoll create --owner`, `atoll chown`): `user[:group]`
//! by name or number, and back to names for people. Names come from
//! /etc/passwd and /etc/group: the CLI is linked statically, and a static
//! glibc cannot load NSS modules (its getpwnam crashes). Users that live
//! only in a directory service are named by number.

use crate::error::{Error, Result};

/// Who may use an enclave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

impl Owner {
    /// The user running this command, with their group.
    pub fn me() -> Owner {
        let ids = crate::sys::ids();
        Owner { uid: ids.euid, gid: ids.egid }
    }

    /// "alice:users", numbers where a name is unknown.
    pub fn text(&self) -> String {
        let passwd = read("/etc/passwd");
        let group = read("/etc/group");
        let name = |db: &str, id: u32| entries(db).find(|e| e.id == id).map_or(id.to_string(), |e| e.name.to_string());
        format!("{}:{}", name(&passwd, self.uid), name(&group, self.gid))
    }
}

/// One line of /etc/passwd or /etc/group: name, id and (passwd) the user's group.
struct Entry<'a> {
    name: &'a str,
    id: u32,
    gid: Option<u32>,
}

fn read(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// `name:password:id[:gid...]` lines; others are skipped.
fn entries(db: &str) -> impl Iterator<Item = Entry<'_>> {
    db.lines().filter_map(|line| {
        let mut f = line.split(':');
        let name = f.next()?;
        let id = f.nth(1)?.parse().ok()?;
        Some(Entry { name, id, gid: f.next().and_then(|g| g.parse().ok()) })
    })
}

/// `user[:group]`: names or numbers; without a group, the user's own.
pub fn parse(text: &str) -> Result<Owner> {
    parse_with(text, &read("/etc/passwd"), &read("/etc/group"))
}

fn parse_with(text: &str, passwd: &str, group: &str) -> Result<Owner> {
    let (user, grp) = match text.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (text, None),
    };
    let found = entries(passwd).find(|e| e.name == user || user.parse() == Ok(e.id));
    let uid = match (user.parse::<u32>(), &found) {
        (Ok(uid), _) => uid,
        (Err(_), Some(e)) => e.id,
        (Err(_), None) => return Err(Error::new(format!("no user named '{user}' in /etc/passwd"))),
    };
    let gid = match grp {
        None => found.and_then(|e| e.gid).ok_or_else(|| {
            Error::new(format!("user {uid} has no entry in /etc/passwd; name a group too: {uid}:<group>"))
        })?,
        Some(g) => match g.parse::<u32>() {
            Ok(gid) => gid,
            Err(_) => entries(group)
                .find(|e| e.name == g)
                .map(|e| e.id)
                .ok_or_else(|| Error::new(format!("no group named '{g}' in /etc/group")))?,
        },
    };
    Ok(Owner { uid, gid })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASSWD: &str = "root:x:0:0:root:/root:/bin/bash\nalice:x:1001:100::/home/alice:/bin/sh\n# note\n";
    const GROUP: &str = "root:x:0:\nusers:x:100:\nhpc:x:2000:alice\n";

    #[test]
    fn owners_by_name_and_number() {
        let parse = |t| parse_with(t, PASSWD, GROUP);
        assert_eq!(parse("0").unwrap(), Owner { uid: 0, gid: 0 });
        assert_eq!(parse("alice").unwrap(), Owner { uid: 1001, gid: 100 });
        assert_eq!(parse("alice:hpc").unwrap(), Owner { uid: 1001, gid: 2000 });
        assert_eq!(parse("1001:4000").unwrap(), Owner { uid: 1001, gid: 4000 });
        assert_eq!(parse("4321:4322").unwrap(), Owner { uid: 4321, gid: 4322 });
        assert!(parse("4321").unwrap_err().to_string().contains("name a group too"));
        assert!(parse("bob").unwrap_err().to_string().contains("no user named 'bob'"));
        assert!(parse("alice:nogroup").unwrap_err().to_string().contains("no group named 'nogroup'"));
    }
}
