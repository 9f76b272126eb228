//! Leaving, ping and host migration (MC-DPL4CS 3.1.4.5, 3.1.5.14, 3.1.5.30-3.1.5.32, 3.1.6.2,
//! 3.1.7.1, 3.2.5.10, 3.2.6.2).

use std::time::Duration;

use dplay_wire::dp4::session::SessionFlags;

use super::net::{created, session_of};
use crate::dp4::{Dp4Event, EndReason, Role};

/// MC-DPL4CS 3.1.4.5, 3.1.5.14: a leaving member sends DELETEPLAYER for its player, then its
/// system player, to every other instance; they drop both.
#[test]
fn member_leaves_with_deleteplayer() {
    let mut net = session_of(3, |_| {});
    let bob = created(&mut net, 1, "bob");
    let b_sys = net.nodes[1].system_player().unwrap();
    net.take(0);
    net.take(2);
    net.log.clear();
    net.nodes[1].leave().unwrap();
    net.run();
    let mut trace = net.trace();
    trace.sort();
    assert_eq!(
        trace,
        [
            "1->0 Tcp DPSP_MSG_DELETEPLAYER",
            "1->0 Tcp DPSP_MSG_DELETEPLAYER",
            "1->2 Tcp DPSP_MSG_DELETEPLAYER",
            "1->2 Tcp DPSP_MSG_DELETEPLAYER"
        ]
    );
    for i in [0, 2] {
        assert_eq!(net.take(i), [Dp4Event::PlayerLeft { id: bob }, Dp4Event::PlayerLeft { id: b_sys }]);
        assert!(!net.nodes[i].players().contains_key(&b_sys));
    }
    assert_eq!(net.take(1), [Dp4Event::Ended(EndReason::Left)]);
}

/// MC-DPL4CS 3.1.7.1: without MH, the host leaving ends the session for everyone.
#[test]
fn host_leaving_without_migration_ends_the_session() {
    let mut net = session_of(2, |_| {});
    net.take(1);
    net.nodes[0].leave().unwrap();
    net.run();
    let host = net.nodes[0].system_player().unwrap();
    assert_eq!(net.take(1), [Dp4Event::PlayerLeft { id: host }, Dp4Event::Ended(EndReason::HostLost)]);
}

/// MC-DPL4CS 3.1.7.1, 2.2.33: with MH, the system player with the lowest ID becomes host and
/// sends IAMNAMESERVER; the other instance follows it.
#[test]
fn host_migrates_to_the_lowest_system_player() {
    let mut net = session_of(3, |c| c.flags = SessionFlags::MIGRATE_HOST);
    net.take(1);
    net.take(2);
    net.log.clear();
    net.nodes[0].leave().unwrap();
    net.run();
    let (b, c) = (net.nodes[1].system_player().unwrap(), net.nodes[2].system_player().unwrap());
    let (new_host, other) = if b < c { (1, 2) } else { (2, 1) };
    let id = net.nodes[new_host].system_player().unwrap();
    assert_eq!(net.nodes[new_host].role(), Role::Host);
    assert!(net.take(new_host).contains(&Dp4Event::HostMigrated { host: id, local: true }));
    assert!(net.take(other).contains(&Dp4Event::HostMigrated { host: id, local: false }));
    assert_eq!(net.nodes[other].host_player(), Some(id));
    assert!(net.trace().contains(&format!("{new_host}->{other} Tcp DPSP_MSG_IAMNAMESERVER")));
    // The new host hands out IDs: a player created by the other instance gets one.
    let p = created(&mut net, other, "late");
    assert!(net.nodes[new_host].players().contains_key(&p));
}

/// MC-DPL4CS 3.1.2.5, 3.2.5.10, 3.1.5.31: with KA the host pings silent members every 35 s
/// and they answer.
#[test]
fn keep_alive_pings_are_answered() {
    let mut net = session_of(2, |c| c.flags = SessionFlags::KEEP_ALIVE);
    net.log.clear();
    net.advance(Duration::from_secs(35));
    let names = net.names();
    assert!(names.contains(&"DPSP_MSG_PING") && names.contains(&"DPSP_MSG_PINGREPLY"), "{names:?}");
    assert_eq!(net.nodes[0].players().len(), 2);
}

/// MC-DPL4CS 3.2.6.2, 3.1.6.2: after 8 unanswered PINGs the host drops the member and tells the
/// others; the member, hearing nothing from the host, ends the session (no MH).
#[test]
fn eight_unanswered_pings_drop_the_peer() {
    let mut net = session_of(2, |c| c.flags = SessionFlags::KEEP_ALIVE);
    let b = net.nodes[1].system_player().unwrap();
    net.take(0);
    net.take(1);
    net.cut.insert((0, 1));
    net.cut.insert((1, 0));
    net.advance(Duration::from_secs(35 * 8));
    assert!(net.take(0).is_empty());
    net.advance(Duration::from_secs(35));
    assert_eq!(net.take(0), [Dp4Event::PlayerLeft { id: b }]);
    assert!(net.take(1).contains(&Dp4Event::Ended(EndReason::HostLost)));
}

/// MC-DPL4CS 3.1.5.32: a host that receives IAMNAMESERVER answers YOUAREDEAD, and the member
/// that gets it leaves.
#[test]
fn rival_name_server_is_told_it_is_dead() {
    use dplay_wire::dp4::header::{SockAddrIn, Token};
    use dplay_wire::dp4::join::IAmNameServer;
    use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
    use dplay_wire::dp4::session::PlayerFlags;
    use dplay_wire::{Blob, Wire};

    let mut net = session_of(2, |_| {});
    net.take(1);
    let me = net.nodes[1].system_player().unwrap();
    let body = Dp4Body::IAmNameServer(IAmNameServer {
        id_to: 0,
        id_host: me,
        flags: PlayerFlags::SYSTEM_PLAYER | PlayerFlags::NAME_SERVER,
        sp_data: Blob::default(),
    });
    let addr = SockAddrIn::new("0.0.0.0:2300".parse().unwrap());
    let bytes = Dp4Message::new(Token::FROM_REMOTE, addr, 14, body).to_vec().unwrap();
    let now = net.now;
    net.nodes[0].handle_tcp(now, 9, "10.0.0.2:40001".parse().unwrap(), &bytes).unwrap();
    net.run();
    assert!(net.names().contains(&"DPSP_MSG_YOUAREDEAD"));
    assert_eq!(net.take(1), [Dp4Event::Ended(EndReason::YouAreDead)]);
    assert_eq!(net.nodes[1].role(), Role::Ended);
}

/// MC-DPL4CS 2.2.51, 3.1.5.22: the host's new description reaches the members, unless NS.
#[test]
fn session_desc_changes_are_broadcast() {
    let mut net = session_of(3, |_| {});
    net.take(1);
    net.take(2);
    net.nodes[0].set_session(8, SessionFlags::JOIN_DISABLED).unwrap();
    net.run();
    for i in [1, 2] {
        let events = net.take(i);
        let [Dp4Event::SessionDescChanged(d)] = events.as_slice() else { panic!("{events:?}") };
        assert_eq!((d.max_players, d.flags), (8, SessionFlags::JOIN_DISABLED));
        assert_eq!(net.nodes[i].session_desc().unwrap().max_players, 8);
    }
    net.nodes[0].set_session(8, SessionFlags::NO_SESSION_DESC_MESSAGES).unwrap();
    net.run();
    assert!(net.take(1).is_empty());
    assert_eq!(net.nodes[1].set_session(1, SessionFlags::empty()), Err(crate::dp4::CommandError::WrongState));
}

/// Issue 27 item 10: an instance killed without a word (a new process at the same addresses)
/// joins again at once; the host drops the ghost that held its listener, with its players,
/// and tells the others.
#[test]
fn rejoin_from_the_same_address_after_a_crash() {
    let mut net = session_of(3, |_| {});
    let pilot = super::net::created(&mut net, 1, "pilot");
    let ghost = net.nodes[1].system_player().unwrap();
    (0..3).for_each(|i| drop(net.take(i)));
    net.nodes[1] = crate::dp4::Dp4Session::new(super::net::config(1)).unwrap();
    net.join(1, None);
    assert_eq!(net.nodes[1].role(), Role::Member);
    let new = net.nodes[1].system_player().unwrap();
    assert!(!net.nodes[0].players().contains_key(&ghost) && net.nodes[0].players().contains_key(&new));
    let left: Vec<_> = net.take(2).into_iter().filter(|e| matches!(e, Dp4Event::PlayerLeft { .. })).collect();
    assert_eq!(left, [Dp4Event::PlayerLeft { id: pilot }, Dp4Event::PlayerLeft { id: ghost }]);
}

/// MC-DPL4CS 3.1.4.2: after leaving, the same endpoint can join again as a new instance.
#[test]
fn rejoin_after_leaving() {
    let mut net = session_of(2, |_| {});
    let first = net.nodes[1].system_player().unwrap();
    net.nodes[1].leave().unwrap();
    net.run();
    net.join(1, None);
    let second = net.nodes[1].system_player().unwrap();
    assert_ne!(first, second);
    assert_eq!(net.nodes[1].role(), Role::Member);
    assert!(!net.nodes[0].players().contains_key(&first));
}

/// MC-DPL4CS 3.1.7.1: a host that cannot be reached any more (reported by the runtime) is gone:
/// with MH the lowest system player takes over; the host drops unreachable members and tells
/// the others.
#[test]
fn unreachable_peers_are_removed() {
    let mut net = session_of(3, |c| c.flags = SessionFlags::MIGRATE_HOST);
    let c = net.nodes[2].system_player().unwrap();
    (0..3).for_each(|i| drop(net.take(i)));
    let now = net.now;
    net.nodes[0].handle_unreachable(now, super::net::stream(2));
    net.run();
    assert_eq!(net.take(0), [Dp4Event::PlayerLeft { id: c }]);
    assert_eq!(net.take(1), [Dp4Event::PlayerLeft { id: c }]);
    let host = net.nodes[0].system_player().unwrap();
    net.nodes[1].handle_unreachable(now, super::net::stream(0));
    net.run();
    let me = net.nodes[1].system_player().unwrap();
    assert_eq!(
        net.take(1),
        [Dp4Event::PlayerLeft { id: host }, Dp4Event::HostMigrated { host: me, local: true }]
    );
}

/// MC-DPL4CS 3.1.5.14 (issue 27 item 10): a vanished instance's application players go with
/// it, and the host tells every other member about each of them, not only the system player.
#[test]
fn a_vanished_instance_is_removed_with_all_its_players() {
    let mut net = session_of(3, |_| {});
    let p = super::net::created(&mut net, 2, "pilot");
    let c = net.nodes[2].system_player().unwrap();
    (0..3).for_each(|i| drop(net.take(i)));
    net.log.clear();
    let now = net.now;
    net.nodes[0].handle_unreachable(now, super::net::stream(2));
    net.run();
    assert_eq!(net.trace(), ["0->1 Tcp DPSP_MSG_DELETEPLAYER", "0->1 Tcp DPSP_MSG_DELETEPLAYER"]);
    let left = [Dp4Event::PlayerLeft { id: p }, Dp4Event::PlayerLeft { id: c }];
    assert_eq!(net.take(0), left);
    assert_eq!(net.take(1), left);
    assert!(!net.nodes[1].players().contains_key(&p) && !net.nodes[1].players().contains_key(&c));
}

/// MC-DPL4CS 2.2.42, 2.2.43, 3.1.5.30: a probe PINGs every other instance, silent or not; the
/// PINGREPLY echoes our TickCount, which gives the round trip. Another probe within
/// `ROUND_TRIP_PROBE` sends nothing.
#[test]
fn probes_measure_round_trips() {
    use super::net::{DGRAM_PORT, ip};
    use std::net::SocketAddr;

    let mut net = session_of(2, |_| {});
    let b = net.nodes[1].system_player().unwrap();
    assert_eq!(net.nodes[0].players()[&b].round_trip, None);
    net.nodes[0].probe_round_trips(net.now);
    let ping = net.nodes[0].poll_transmit().expect("a PING");
    net.nodes[1].handle_udp(net.now, SocketAddr::new(ip(0).into(), DGRAM_PORT), &ping.bytes);
    let reply = net.nodes[1].poll_transmit().expect("a PINGREPLY");
    net.now += Duration::from_millis(30);
    net.nodes[0].handle_udp(net.now, SocketAddr::new(ip(1).into(), DGRAM_PORT), &reply.bytes);
    assert_eq!(net.nodes[0].players()[&b].round_trip, Some(Duration::from_millis(30)));
    net.nodes[0].probe_round_trips(net.now);
    assert!(net.nodes[0].poll_transmit().is_none(), "probed again too soon");
    // An echo older than a minute (forged, or very late) is no round trip of ours.
    net.now += Duration::from_secs(61);
    net.nodes[0].handle_udp(net.now, SocketAddr::new(ip(1).into(), DGRAM_PORT), &reply.bytes);
    assert_eq!(net.nodes[0].players()[&b].round_trip, Some(Duration::from_millis(30)));
    net.advance(crate::dp4::ROUND_TRIP_PROBE);
    net.log.clear();
    net.nodes[0].probe_round_trips(net.now);
    net.run();
    assert_eq!(net.names(), ["DPSP_MSG_PING", "DPSP_MSG_PINGREPLY"]);
}
