//! Sends with completion answered when the application has processed them (MC-DPL8CS 2.2.3.2,
//! 2.2.3.3, 3.3: "returned to the peer that sent the data after the sent payload has been
//! consumed"), with `SessionConfig::defer_process_completion`: between two of our sessions,
//! and from a Windows-shaped host, with the cap, the deadline and a sender that leaves
//! (docs/limits.md).

use std::time::Duration;

use dplay_spec_examples::mc_dpl8cs_4::HOST_DPNID;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

use super::windows_peer::{Msg, Net, hex};
use super::{events, link, session};
use dplay_session::{Event, ProcessToken, SessionConfig};
use dplay_testkit::sim_check::{Mesh, sim_addr};

const HOST: Dpnid = Dpnid(HOST_DPNID);

/// The token of every message node `i` got with one, in order.
fn tokens(events: &[Event]) -> Vec<ProcessToken> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Message { process_token, .. } => *process_token,
            _ => None,
        })
        .collect()
}

/// Two of our peers: node 1's send with completion completes only once node 2's application
/// calls `processed`, and a token answers once.
#[test]
fn completes_only_once_the_receiver_processed_it() {
    let mut mesh = Mesh::new(410, 3, link(0.0), |_, c| c.defer_process_completion = true);
    mesh.host(0);
    mesh.join(1, 0);
    mesh.join(2, 0);
    assert!(mesh.run_until_joined(&[0, 1, 2], Duration::from_secs(60)));
    let two = session(&mesh, 2).local_dpnid();
    let context = mesh.with(1, |s, now| s.send_with_completion(now, two, b"slow")).expect("send");
    mesh.sim.run_for(Duration::from_secs(5));
    let got = tokens(events(&mesh, 2));
    assert_eq!(got.len(), 1, "{:?}", events(&mesh, 2));
    let done = Event::Completed { context, result: Ok(()) };
    assert!(!events(&mesh, 1).contains(&done), "completed before the receiver processed it");

    assert!(mesh.with(2, |s, now| s.processed(now, got[0])));
    mesh.sim.run_for(Duration::from_millis(500));
    assert!(events(&mesh, 1).contains(&done), "{:?}", events(&mesh, 1));
    assert!(!mesh.with(2, |s, now| s.processed(now, got[0])), "a token answers once");

    // Plain data carries no token, and a session without the option answers on arrival.
    let one = session(&mesh, 1).local_dpnid();
    mesh.with(2, |s, now| s.send_to(now, one, b"plain", dplay_session::SendFlags::RELIABLE)).expect("send");
    mesh.sim.run_for(Duration::from_millis(500));
    assert!(tokens(events(&mesh, 1)).is_empty());
}

/// Node 1 (ours, deferring with `tune`) joined to the Windows-shaped host at node 0.
fn joined_windows(tune: impl Fn(&mut SessionConfig)) -> Net {
    let mut net = Net::new(2, 0, |_, c| {
        c.application_guid = DXDIAG_APPLICATION_GUID;
        c.defer_process_completion = true;
        tune(c);
    });
    net.with(1, |s, now| s.join(now, sim_addr(0), None)).expect("join");
    net.sim.run_for(Duration::from_millis(500));
    net.peer_send(1, &hex(dplay_spec_examples::mc_dpl8cs_4::SEND_CONNECT_INFO));
    let joiner = dplay_spec_examples::mc_dpl8cs_4::JOINER_DPNID;
    net.peer_send(1, &Msg::new(0xC6).u32(joiner).u32(4).u32(0).0);
    assert!(net.ours(1).session.is_joined());
    net
}

fn request(context: u32, data: &[u8]) -> Vec<u8> {
    Msg::new(0xE0).u32(context).bytes(data).0
}

fn answer(context: u32) -> Vec<u8> {
    Msg::new(0xE1).u32(context).0
}

/// The Windows host's DN_REQ_PROCESS_COMPLETION is delivered with a token and its
/// DN_PROCESS_COMPLETION, carrying the context, leaves only at `processed`, in the order the
/// application processes them.
#[test]
fn windows_request_answered_at_processed() {
    let mut net = joined_windows(|_| {});
    net.peer_send(1, &request(0xABCD_0001, b"one"));
    net.peer_send(1, &request(0xABCD_0002, b"two"));
    net.sim.run_for(Duration::from_secs(2));
    let got = tokens(&net.ours(1).events);
    let first = Event::Message {
        from: HOST,
        data: b"one".to_vec(),
        reliable: true,
        sequential: true,
        process_token: got.first().copied(),
    };
    assert!(net.ours(1).events.contains(&first));
    assert_eq!(got.len(), 2);
    assert!(net.peer().of_type(0xE1).is_empty(), "answered before processed");
    assert!(net.with(1, |s, now| s.processed(now, got[1])));
    net.sim.run_for(Duration::from_millis(200));
    assert_eq!(net.peer().of_type(0xE1), [answer(0xABCD_0002)]);
    assert!(net.with(1, |s, now| s.processed(now, got[0])));
    net.sim.run_for(Duration::from_millis(200));
    assert_eq!(net.peer().of_type(0xE1), [answer(0xABCD_0002), answer(0xABCD_0001)]);
    assert_eq!(net.ours(1).session.stats().process_completions_early, 0);
}

/// Past `max_unprocessed_per_peer` the sender's oldest is answered at once; one not processed
/// by `process_completion_timeout` is answered then; both are counted.
#[test]
fn cap_and_deadline_answer_early() {
    let mut net = joined_windows(|c| {
        c.limits.max_unprocessed_per_peer = 2;
        c.limits.process_completion_timeout = Duration::from_secs(5);
    });
    for context in 1..=3 {
        net.peer_send(1, &request(context, b"x"));
    }
    assert_eq!(net.peer().of_type(0xE1), [answer(1)], "the oldest, past the cap");
    let got = tokens(&net.ours(1).events);
    assert!(!net.with(1, |s, now| s.processed(now, got[0])), "already answered");
    assert!(net.with(1, |s, now| s.processed(now, got[1])));
    net.sim.run_for(Duration::from_secs(6));
    assert_eq!(net.peer().of_type(0xE1), [answer(1), answer(2), answer(3)], "3 at its deadline");
    assert!(!net.with(1, |s, now| s.processed(now, got[2])));
    assert_eq!(net.ours(1).session.stats().process_completions_early, 2);

    // A cap of 0: nothing waits, the answer leaves on arrival.
    let mut net = joined_windows(|c| c.limits.max_unprocessed_per_peer = 0);
    net.peer_send(1, &request(9, b"x"));
    assert_eq!(net.peer().of_type(0xE1), [answer(9)]);
    assert!(tokens(&net.ours(1).events).is_empty());
}

/// What a sender is owed is dropped when its connection ends: nothing is sent later, and no
/// deadline stays armed for it.
#[test]
fn sender_gone_drops_what_it_was_owed() {
    let mut net = joined_windows(|c| c.limits.process_completion_timeout = Duration::from_secs(600));
    net.peer_send(1, &request(5, b"x"));
    let got = tokens(&net.ours(1).events);
    assert_eq!(got.len(), 1);
    let windows = net.ids[0];
    net.sim.isolate(windows);
    net.sim.run_for(Duration::from_secs(120));
    let linked = net.ours(1).session.player_addresses();
    assert!(linked.iter().all(|(d, _)| *d != HOST), "the host's connection is gone");
    assert!(!net.with(1, |s, now| s.processed(now, got[0])));
    assert!(net.peer().of_type(0xE1).is_empty());
    let now = net.sim.now();
    assert!(net.ours(1).session.poll_timeout().is_none_or(|t| t < now + Duration::from_secs(400)));
}
