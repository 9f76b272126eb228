//! Hostile and misplaced session messages (MC-DPL8CS 2.2; the bad-input rules): each is
//! dropped and counted, never a panic, and the name tables stay as they were.

use std::time::Duration;

use dplay_dframe::MessageKind;
use dplay_wire::dp8::session::{DestroyPlayer, DestroyReason, InstructConnect, VersionInfo};
use proptest::prelude::*;

use dplay_session::{Session, SessionConfig, Stats};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::session::SessionMessage;
use uuid::Uuid;

use super::*;

/// Host 0 with peers 1 and 2, joined, on a clean network.
fn three() -> Mesh {
    let link = dplay_sim::LinkConfig::clean().with_latency(Duration::from_millis(10));
    let mut mesh = Mesh::new(42, 3, link, |_, _| {});
    mesh.host(0);
    mesh.join(1, 0);
    mesh.join(2, 0);
    assert!(mesh.run_until_joined(&[1, 2], Duration::from_secs(10)));
    mesh
}

/// Node `from` sends `msg` to node `to` over their connection, and the network settles.
fn inject(mesh: &mut Mesh, from: usize, to: usize, msg: &SessionMessage) {
    mesh.with(from, |s, now| test_hooks::send_session_message(s, now, sim_addr(to), msg));
    mesh.sim.run_for(Duration::from_millis(200));
}

fn stats(mesh: &Mesh, i: usize) -> Stats {
    *mesh.node(i).session.stats()
}

#[track_caller]
fn assert_unchanged(mesh: &Mesh) {
    mesh.tables_agree(&[0, 1, 2]).expect("tables unchanged");
    assert_eq!(mesh.node(1).session.name_table().version(), mesh.node(0).session.name_table().version());
}

/// A host-only message from a peer (MC-DPL8CS 3.1.5.2: only the host sends name-table ops).
#[test]
fn name_table_op_from_a_peer_is_wrong_role() {
    let mut mesh = three();
    let version = mesh.node(1).session.name_table().version() + 1;
    let victim = mesh.node(0).session.local_dpnid();
    let op = DestroyPlayer {
        dpnid_leaving: victim,
        version,
        version_not_used: 0,
        destroy_reason: DestroyReason::DPNDESTROYPLAYERREASON_NORMAL,
    };
    inject(&mut mesh, 2, 1, &SessionMessage::DestroyPlayer(op));
    assert_eq!(stats(&mesh, 1).wrong_role, 1);
    inject(&mut mesh, 1, 0, &SessionMessage::DestroyPlayer(op));
    assert_eq!(stats(&mesh, 0).wrong_role, 1);
    assert_unchanged(&mesh);
}

/// A version that goes backwards, and an unknown DPNID, from the host itself (MC-DPL8CS 2.2.6).
#[test]
fn backwards_version_and_unknown_dpnid() {
    let mut mesh = three();
    let version = mesh.node(1).session.name_table().version();
    let peer2 = mesh.node(2).session.local_dpnid();
    let old = InstructConnect { dpnid: peer2, version, version_not_used: 0 };
    inject(&mut mesh, 0, 1, &SessionMessage::InstructConnect(old));
    assert_eq!(stats(&mesh, 1).bad_version, 1);
    let unknown = InstructConnect { dpnid: Dpnid(0xDEAD_BEEF), version: version + 1, version_not_used: 0 };
    inject(&mut mesh, 0, 1, &SessionMessage::InstructConnect(unknown));
    assert_eq!(stats(&mesh, 1).unknown_dpnid, 1);
    // It took its version (the table never stops at an operation it cannot apply), nothing else.
    let table = mesh.node(1).session.name_table();
    assert_eq!((table.version(), table.len()), (version + 1, 3));
}

/// A second SEND_CONNECT_INFO, an ACK_CONNECT_INFO from a member, NAMETABLE_VERSION ahead
/// of the host: out of state, dropped.
#[test]
fn messages_in_the_wrong_state() {
    let mut mesh = three();
    let before = (stats(&mesh, 0).dropped(), stats(&mesh, 1).dropped());
    inject(&mut mesh, 1, 0, &SessionMessage::AckConnectInfo);
    inject(
        &mut mesh,
        1,
        0,
        &SessionMessage::NameTableVersion(VersionInfo { version: 999, version_not_used: 0 }),
    );
    inject(&mut mesh, 0, 1, &SessionMessage::HostMigrateComplete);
    assert_eq!(stats(&mesh, 0).dropped() - before.0, 2);
    assert_eq!(stats(&mesh, 1).dropped() - before.1, 1);
    assert_unchanged(&mesh);
}

/// Bytes that are no session message, with USER_1 set.
#[test]
fn malformed_session_message() {
    let mut mesh = three();
    let kind = MessageKind { user_1: true, ..MessageKind::RELIABLE };
    mesh.with(0, |s, now| test_hooks::endpoint_mut(s).send(now, sim_addr(1), &[0xD1, 0, 0, 0, 1], kind))
        .expect("send");
    mesh.sim.run_for(Duration::from_millis(200));
    assert_eq!(stats(&mesh, 1).malformed, 1);
    assert_unchanged(&mesh);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any bytes from the host as a session message, or as a datagram from anywhere: no
    /// panic, and the peers still agree with the host.
    #[test]
    fn arbitrary_input_never_panics(body in proptest::collection::vec(any::<u8>(), 1..200), lead in any::<u8>()) {
        let mut mesh = three();
        let kind = MessageKind { user_1: true, ..MessageKind::RELIABLE };
        let _ = mesh.with(0, |s, now| test_hooks::endpoint_mut(s).send(now, sim_addr(1), &body, kind));
        let mut datagram = body.clone();
        if let Some(first) = datagram.first_mut() {
            *first = lead;
        }
        let now = mesh.sim.now();
        mesh.sim.inject(now, sim_addr(7), mesh.ids[2], datagram);
        mesh.sim.run_for(Duration::from_millis(500));
        let table = mesh.node(1).session.name_table();
        let host = mesh.node(0).session.name_table();
        prop_assert!(table.len() <= host.len() + 1);
        prop_assert!(mesh.node(2).session.is_joined());
    }
}

/// `poll_transmit_into` gives the same datagrams, to the same addresses, as `poll_transmit`
/// (two sessions with the same seeded configuration, enumerating and joining alike).
#[test]
fn poll_transmit_into_matches_poll_transmit() {
    let cfg = SessionConfig::new(Uuid::from_u128(7), sim_addr(0), "p");
    let now = dplay_sim::Sim::new(1).now();
    let (mut a, mut b) = (Session::new(cfg.clone(), now), Session::new(cfg, now));
    for s in [&mut a, &mut b] {
        s.enum_hosts(now, sim_addr(2), None).expect("enum");
        s.join(now, sim_addr(1), None).expect("join");
    }
    let mut buf = Vec::new();
    let mut sent = 0;
    while let Some(expected) = a.poll_transmit() {
        buf.clear();
        assert_eq!(b.poll_transmit_into(&mut buf), Some(expected.destination));
        assert_eq!(buf, expected.contents);
        sent += 1;
    }
    assert!(sent >= 2, "a CONNECT and an EnumQuery");
    assert_eq!(b.poll_transmit_into(&mut buf), None);
}
