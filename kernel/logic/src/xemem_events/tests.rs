use super::*;
use crate::errno::EINVAL;
use alloc::vec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Who {
    Here,
    Host,
    Enclave(u32),
}

impl Asker for Who {
    fn enclave(&self) -> Option<u32> {
        match self {
            Who::Enclave(id) => Some(*id),
            _ => None,
        }
    }
}

/// Records answers; `refuse` lists askers whose answers cannot be sent.
#[derive(Default)]
struct Out {
    sent: Vec<(Who, u64, i64, Result<(), Errno>)>,
    refuse: Vec<Who>,
}

impl Answer<Who> for Out {
    fn answer(&mut self, asker: Who, id: u64, segid: i64, result: Result<(), Errno>) -> bool {
        if self.refuse.contains(&asker) {
            return false;
        }
        self.sent.push((asker, id, segid, result));
        true
    }
}

fn req(op: u32, segid: i64, id: u64) -> XememEvent {
    XememEvent { id, segid, op, ..Default::default() }
}

fn cancel(segid: i64, of: u64) -> XememEvent {
    XememEvent { id: 0, segid, cancel: of, op: XEMEM_CANCEL, kernel: 0 }
}

fn opened(segid: i64) -> (Events<Who>, Out) {
    let mut events = Events::new();
    let mut out = Out::default();
    events.open(segid, &mut out);
    (events, out)
}

#[test]
fn a_signal_waits_for_a_wait_and_a_wait_for_a_signal() {
    let (mut ev, mut out) = opened(5);
    ev.serve(Who::Here, req(XEMEM_SIGNAL, 5, 0), &mut out);
    assert_eq!(ev.count(5), Some(1));
    ev.serve(Who::Host, req(XEMEM_WAIT, 5, 7), &mut out);
    assert_eq!(ev.count(5), Some(0));
    ev.serve(Who::Here, req(XEMEM_WAIT, 5, 8), &mut out);
    ev.serve(Who::Host, req(XEMEM_WAIT, 5, 9), &mut out);
    assert_eq!(out.sent, vec![(Who::Host, 7, 5, Ok(()))]);
    // First come, first served; the signaller hears its own answer too.
    ev.serve(Who::Host, req(XEMEM_SIGNAL, 5, 3), &mut out);
    assert_eq!(out.sent[1..], [(Who::Here, 8, 5, Ok(())), (Who::Host, 3, 5, Ok(()))]);
    assert_eq!(ev.count(5), Some(0));
}

#[test]
fn another_enclave_waits_for_its_grant() {
    let (mut ev, mut out) = opened(5);
    ev.serve(Who::Enclave(2), req(XEMEM_SIGNAL, 5, 4), &mut out);
    assert!(out.sent.is_empty());
    assert_eq!(ev.count(5), Some(0));
    // A grant for another enclave lets nothing of enclave 2's through.
    ev.grant(3, 5, &mut out);
    assert!(out.sent.is_empty());
    ev.grant(2, 5, &mut out);
    assert_eq!(out.sent, vec![(Who::Enclave(2), 4, 5, Ok(()))]);
    assert_eq!(ev.count(5), Some(1));
}

#[test]
fn a_request_before_the_opening_waits_for_it_and_after_the_close_is_refused() {
    let (mut ev, mut out) = opened(5);
    ev.serve(Who::Host, req(XEMEM_WAIT, 9, 1), &mut out);
    ev.serve(Who::Host, req(XEMEM_WAIT, 7, 2), &mut out);
    assert!(out.sent.is_empty());
    // Opening 9 says 7 will never open here.
    ev.open(9, &mut out);
    assert_eq!(out.sent, vec![(Who::Host, 2, 7, Err(ENOENT))]);
    ev.close(9, &mut out);
    assert_eq!(out.sent[1], (Who::Host, 1, 9, Err(EIDRM)));
    ev.serve(Who::Host, req(XEMEM_WAIT, 9, 3), &mut out);
    assert_eq!(out.sent[2], (Who::Host, 3, 9, Err(ENOENT)));
    // A grant that comes after the close gives nothing.
    ev.grant(2, 9, &mut out);
    ev.serve(Who::Enclave(2), req(XEMEM_SIGNAL, 9, 4), &mut out);
    assert_eq!(out.sent[3], (Who::Enclave(2), 4, 9, Err(ENOENT)));
}

#[test]
fn cancel_ends_a_wait_not_answered_and_only_that() {
    let (mut ev, mut out) = opened(5);
    ev.serve(Who::Host, req(XEMEM_WAIT, 5, 1), &mut out);
    ev.serve(Who::Host, cancel(5, 1), &mut out);
    assert_eq!(out.sent, vec![(Who::Host, 1, 5, Err(ETIMEDOUT))]);
    // Answered first: the cancel finds nothing, and the event stays taken.
    ev.serve(Who::Host, req(XEMEM_WAIT, 5, 2), &mut out);
    ev.serve(Who::Here, req(XEMEM_SIGNAL, 5, 0), &mut out);
    ev.serve(Who::Host, cancel(5, 2), &mut out);
    assert_eq!(out.sent[1..], [(Who::Host, 2, 5, Ok(()))]);
    assert_eq!(ev.count(5), Some(0));
    // Another asker's cancel does not end it.
    ev.serve(Who::Host, req(XEMEM_WAIT, 5, 3), &mut out);
    ev.serve(Who::Here, cancel(5, 3), &mut out);
    assert_eq!(out.sent.len(), 2);
    // One parked before its grant ends too.
    ev.serve(Who::Enclave(2), req(XEMEM_WAIT, 5, 4), &mut out);
    ev.serve(Who::Enclave(2), cancel(5, 4), &mut out);
    assert_eq!(out.sent[2], (Who::Enclave(2), 4, 5, Err(ETIMEDOUT)));
    ev.grant(2, 5, &mut out);
    assert_eq!(out.sent.len(), 3);
}

#[test]
fn a_waiter_whose_answer_cannot_go_out_keeps_its_place_and_others_go_on() {
    let (mut ev, mut out) = opened(5);
    ev.grant(2, 5, &mut out);
    ev.serve(Who::Enclave(2), req(XEMEM_WAIT, 5, 1), &mut out);
    ev.serve(Who::Host, req(XEMEM_WAIT, 5, 2), &mut out);
    out.refuse = vec![Who::Enclave(2)];
    ev.serve(Who::Here, req(XEMEM_SIGNAL, 5, 0), &mut out);
    assert_eq!(out.sent, vec![(Who::Host, 2, 5, Ok(()))]);
    // Nobody else can hear it: counted, and enclave 2's waits still wait.
    ev.serve(Who::Here, req(XEMEM_SIGNAL, 5, 0), &mut out);
    ev.serve(Who::Enclave(2), req(XEMEM_WAIT, 5, 3), &mut out);
    assert_eq!(ev.count(5), Some(1));
    // Once its ring has room, the next signal reaches both, first come first.
    out.refuse.clear();
    ev.serve(Who::Here, req(XEMEM_SIGNAL, 5, 0), &mut out);
    assert_eq!(out.sent[1..], [(Who::Enclave(2), 1, 5, Ok(())), (Who::Enclave(2), 3, 5, Ok(()))]);
    assert_eq!(ev.count(5), Some(0));
    // Their cancels find nothing: the answers are on the way.
    ev.serve(Who::Enclave(2), cancel(5, 1), &mut out);
    assert_eq!(out.sent.len(), 3);
}

#[test]
fn each_asker_parks_a_bounded_number_and_a_gone_one_leaves_nothing() {
    let (mut ev, mut out) = opened(5);
    for id in 1..=MAX_EARLY_EACH as u64 + 1 {
        ev.serve(Who::Enclave(2), req(XEMEM_WAIT, 5, id), &mut out);
    }
    assert_eq!(out.sent, vec![(Who::Enclave(2), MAX_EARLY_EACH as u64 + 1, 5, Err(ENOENT))]);
    // Another asker is not crowded out.
    ev.serve(Who::Enclave(3), req(XEMEM_WAIT, 5, 1), &mut out);
    assert_eq!(out.sent.len(), 1);
    ev.grant(2, 5, &mut out);
    ev.forget(Who::Enclave(2));
    ev.serve(Who::Here, req(XEMEM_SIGNAL, 5, 0), &mut out);
    assert_eq!(ev.count(5), Some(1), "a gone asker's waits took the signal");
    // Its grant went with it.
    ev.serve(Who::Enclave(2), req(XEMEM_WAIT, 5, 9), &mut out);
    assert_eq!(ev.count(5), Some(1));
}

#[test]
fn an_unknown_operation_is_refused() {
    let (mut ev, mut out) = opened(5);
    ev.serve(Who::Host, req(1, 5, 6), &mut out);
    assert_eq!(out.sent, vec![(Who::Host, 6, 5, Err(EINVAL))]);
}
