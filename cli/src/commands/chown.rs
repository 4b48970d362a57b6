//! `atoll chown <enclave> <user>[:<group>]` (root only): who may use an
//! enclave from now on. Programs already running keep running.

use super::print_json;
use crate::device::Device;
use crate::enclave;
use crate::error::{module_error, Result};
use crate::owner;
use atoll_abi::Chown;
use serde_json::json;

pub fn run(key: &str, owner_text: &str, json: bool) -> Result<()> {
    let owner = owner::parse(owner_text)?;
    let dev = Device::open()?;
    let e = enclave::find(&dev, key)?;
    let mut req = Chown::new();
    req.id = e.id;
    req.uid = owner.uid;
    req.gid = owner.gid;
    dev.chown(&mut req).map_err(|err| module_error("chown", &req.error, &err))?;
    if json {
        print_json(&json!({ "name": e.name, "id": e.id, "uid": owner.uid, "gid": owner.gid }));
    } else {
        println!("enclave {} now belongs to {}", e.name, owner.text());
    }
    Ok(())
}
