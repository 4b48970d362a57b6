//! Enclave owners (`atoll create --owner`, `atoll chown`): `user[:group]`
//! by name or number, and back to names for people. Names come from
//! /etc/passwd and /etc/group: the CLI is linked statically, and a static
//! glibc cannot load NSS modules (its getpwnam crashes). Users that live
//! only in a directory service are named by number.

use crate::error::{Error, Result};
use atoll_abi::NO_GROUP;

/// Who may use an enclave: its owner, and the members of its group if it
/// has one (gid NO_GROUP: none; a user's own group is often shared, as
/// `users` is, so no group is given unless asked for).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Owner {
    pub uid: u32,
    pub gid: u32,
}

impl Owner {
    /// The user running this command, alone.
    pub fn me() -> Owner {
        Owner { uid: crate::sys::ids().euid, gid: NO_GROUP }
    }

    /// "alice", or "alice:hpc" with a group; numbers where a name is unknown.
    pub fn text(&self) -> String {
        let name = |db: &str, id: u32| entries(db).find(|e| e.id == id).map_or(id.to_string(), |e| e.name.to_string());
        let user = name(&read("/etc/passwd"), self.uid);
        match self.gid {
            NO_GROUP => user,
            gid => format!("{user}:{}", name(&read("/etc/group"), gid)),
        }
    }
}

/// One line of /etc/passwd or /etc/group: name and id.
struct Entry<'a> {
    name: &'a str,
    id: u32,
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
        Some(Entry { name, id })
    })
}

/// `user[:group]`: names or numbers; without a group, the user alone.
pub fn parse(text: &str) -> Result<Owner> {
    parse_with(text, &read("/etc/passwd"), &read("/etc/group"))
}

fn parse_with(text: &str, passwd: &str, group: &str) -> Result<Owner> {
    let (user, grp) = match text.split_once(':') {
        Some((u, g)) => (u, Some(g)),
        None => (text, None),
    };
    let uid = match user.parse::<u32>() {
        Ok(uid) => uid,
        Err(_) => entries(passwd)
            .find(|e| e.name == user)
            .map(|e| e.id)
            .ok_or_else(|| Error::new(format!("no user named '{user}' in /etc/passwd")))?,
    };
    let gid = match grp {
        None => NO_GROUP,
        Some(g) => match g.parse::<u32>() {
            Ok(gid) if gid != NO_GROUP => gid,
            Ok(_) => return Err(Error::new(format!("{g} is not a group id"))),
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
        assert_eq!(parse("0").unwrap(), Owner { uid: 0, gid: NO_GROUP });
        assert_eq!(parse("alice").unwrap(), Owner { uid: 1001, gid: NO_GROUP });
        assert_eq!(parse("alice:hpc").unwrap(), Owner { uid: 1001, gid: 2000 });
        assert_eq!(parse("1001:4000").unwrap(), Owner { uid: 1001, gid: 4000 });
        assert_eq!(parse("4321").unwrap(), Owner { uid: 4321, gid: NO_GROUP });
        assert!(parse("alice:4294967295").is_err());
        assert_eq!(Owner { uid: 0, gid: NO_GROUP }.text(), "root");
        assert_eq!(Owner { uid: 0, gid: 0 }.text(), "root:root");
        assert!(parse("bob").unwrap_err().to_string().contains("no user named 'bob'"));
        assert!(parse("alice:nogroup").unwrap_err().to_string().contains("no group named 'nogroup'"));
    }
}
