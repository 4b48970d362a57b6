//! `xememforge=<enclave id>`: a hostile LWK against another enclave's
//! XEMEM events (test image only). Once its ring to that enclave is up, it
//! sends what only the host may send (opening, closing and granting
//! events), signals and waits on every small segid it was never granted,
//! a wait nobody would hear, and answers to requests never made, short and
//! long. The other LWK must refuse all of it: no event of its segments
//! moves, and it keeps serving its own programs.

use atoll_abi::{XememEvent, XememReply, KMSG_XEMEM_HOME, KMSG_XEMEM_REPLY};
use atoll_abi::{XEMEM_GET, XEMEM_MAKE, XEMEM_REMOVE, XEMEM_SIGNAL, XEMEM_WAIT};

use crate::kmsg::{self, Peer};
use crate::sched;
use hal::println;

/// Segids forged at: every segment a fresh test VM makes first.
const SEGIDS: i64 = 16;

pub fn forge(victim: u32) {
    sched::spawn(0, "xememforge", move || {
        let to = Peer::Enclave(victim);
        for _ in 0..300 {
            if kmsg::is_linked(to) {
                break;
            }
            sched::sleep_ns(100_000_000);
        }
        let own = crate::boot::enclave().map_or(0, |e| e.id);
        let mut sent = 0;
        let mut send = |kind: u16, bytes: &[u8]| {
            if kmsg::send(to, kind, bytes).is_ok() {
                sent += 1;
            }
        };
        for segid in 1..=SEGIDS {
            let ev = |op, id| XememEvent { id, segid, op, kernel: own, ..Default::default() };
            for op in [XEMEM_MAKE, XEMEM_GET, XEMEM_SIGNAL, XEMEM_SIGNAL, XEMEM_REMOVE] {
                send(KMSG_XEMEM_HOME, &ev(op, 0).to_bytes());
            }
            send(KMSG_XEMEM_HOME, &ev(XEMEM_WAIT, 0).to_bytes());
            send(KMSG_XEMEM_HOME, &ev(XEMEM_WAIT, 1000 + segid as u64).to_bytes());
            send(KMSG_XEMEM_HOME, &ev(XEMEM_SIGNAL, 1).to_bytes()[..8]);
            let reply =
                XememReply { id: segid as u64, value: segid, last: 1, ..Default::default() };
            send(KMSG_XEMEM_REPLY, &reply.to_bytes());
            let runs = XememReply { count: 1, ..reply };
            send(KMSG_XEMEM_REPLY, &runs.to_bytes());
        }
        println!("xememforge: sent {sent} forged XEMEM messages to enclave {victim}");
    });
}
