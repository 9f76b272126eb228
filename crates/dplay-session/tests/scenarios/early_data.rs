//! Application data that reaches a nascent peer before it is joined (MC-DPL8CS 3.1.5.2): the
//! host may send to it from DN_SEND_CONNECT_INFO on, which is before the DN_INSTRUCT_CONNECT and
//! the DN_SEND_PLAYER_DPNIDs that complete its join. It is held and delivered right after
//! [`Event::Joined`], up to a bound.

use std::time::Duration;

use dplay_wire::dp8::dpnid::Dpnid;

use super::*;
use dplay_session::{EARLY_DATA_MESSAGES, SendFlags};
use dplay_testkit::sim_check::SimNode;

/// Hosts at node 0, joins node 1, then starts node 2's join and runs until the host has added
/// it (DN_SEND_CONNECT_INFO is on its way, node 1 has not connected to node 2 yet): node 2's
/// DPNID.
fn mesh_with_nascent_peer(seed: u64) -> (Mesh, Dpnid) {
    let mut mesh = Mesh::new(seed, 3, link(0.0), |_, _| {});
    mesh.host(0);
    mesh.join(1, 0);
    assert!(mesh.run_until_joined(&[1], Duration::from_secs(5)));
    mesh.join(2, 0);
    let host = mesh.ids[0];
    let added = |sim: &dplay_sim::Sim| {
        sim.node::<SimNode>(host).events.iter().find_map(|e| match e {
            Event::PlayerAdded { dpnid, name } if name == "player2" => Some(*dpnid),
            _ => None,
        })
    };
    let deadline = mesh.sim.now() + Duration::from_secs(5);
    assert!(mesh.sim.run_until_with(deadline, |sim| added(sim).is_some()));
    let nascent = added(&mesh.sim).expect("the host added node 2");
    assert!(!session(&mesh, 2).is_joined());
    (mesh, nascent)
}

#[track_caller]
fn send(mesh: &mut Mesh, from: usize, to: Dpnid, data: &[u8]) {
    mesh.with(from, |s, now| s.send_to(now, to, data, SendFlags::RELIABLE_SEQUENTIAL)).expect("sent");
}

/// MC-DPL8CS 3.1.5.2: the host's message sent right after DN_SEND_CONNECT_INFO arrives before
/// node 2 is joined; node 2 reports it right after Joined, in order, instead of dropping it.
#[test]
fn data_before_joined_is_delivered_right_after_joined() {
    let (mut mesh, nascent) = mesh_with_nascent_peer(51);
    send(&mut mesh, 0, nascent, b"first");
    send(&mut mesh, 0, nascent, b"second");
    assert!(mesh.run_until_joined(&[2], Duration::from_secs(5)));
    mesh.sim.run_for(Duration::from_millis(500));

    let events = events(&mesh, 2);
    let joined = events.iter().position(|e| matches!(e, Event::Joined { .. })).expect("joined");
    let host = session(&mesh, 0).local_dpnid();
    let data: Vec<&[u8]> = events
        .get(joined + 1..joined + 3)
        .expect("two events after Joined")
        .iter()
        .map(|e| match e {
            Event::Message { from, data, .. } if *from == host => data.as_slice(),
            other => panic!("expected the host's message after Joined, got {other:?}"),
        })
        .collect();
    assert_eq!(data, [b"first".as_slice(), b"second"]);
    let stats = session(&mesh, 2).stats();
    assert_eq!((stats.early_data_held, stats.early_data_overflow, stats.unknown_sender), (2, 0, 0));
    assert_eq!(stats.app_received, 2);
}

/// The hold is bounded: past [`EARLY_DATA_MESSAGES`] messages the rest is dropped and counted,
/// and what was held is still delivered.
#[test]
fn data_before_joined_is_bounded() {
    let (mut mesh, nascent) = mesh_with_nascent_peer(52);
    let extra = 10;
    for i in 0..EARLY_DATA_MESSAGES + extra {
        send(&mut mesh, 0, nascent, format!("message {i}").as_bytes());
    }
    assert!(mesh.run_until_joined(&[2], Duration::from_secs(10)));
    mesh.sim.run_for(Duration::from_secs(1));

    let stats = session(&mesh, 2).stats();
    assert_eq!(stats.early_data_held, EARLY_DATA_MESSAGES as u64);
    assert_eq!(stats.early_data_overflow, extra as u64);
    let delivered = events(&mesh, 2).iter().filter(|e| matches!(e, Event::Message { .. })).count();
    assert_eq!(delivered, EARLY_DATA_MESSAGES);
}
