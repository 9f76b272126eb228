//! A vanished instance, its process killed so its sockets close (issue 27 item 10; MC-DPL4CS
//! 3.1.2.5, 3.1.5.14, 3.1.7.1, 3.2.2.2): removed with all its players within one Ping period
//! (35 s) under default settings, with or without KEEPALIVE, every other member told about
//! each player.

use std::time::Duration;

use dplay_wire::dp4::session::SessionFlags;

use super::net::{Net, created, session_of, stream};
use crate::dp4::{Dp4Event, Role};

/// One Ping timer period under default settings (MC-DPL4CS 3.1.2.5, 3.2.2.2).
const PING_PERIOD: Duration = Duration::from_secs(35);

/// Node 2 of a three-instance session with `flags` creates "pilot" and is killed: (net, the
/// pilot, node 2's system player), every event so far taken.
fn killed_member(flags: SessionFlags) -> (Net, u32, u32) {
    let mut net = session_of(3, |c| c.flags = flags);
    let pilot = created(&mut net, 2, "pilot");
    let system = net.nodes[2].system_player().unwrap();
    (0..3).for_each(|i| drop(net.take(i)));
    net.killed.insert(2);
    (net, pilot, system)
}

/// The PlayerLeft events among `events`.
fn left(events: Vec<Dp4Event>) -> Vec<Dp4Event> {
    events.into_iter().filter(|e| matches!(e, Dp4Event::PlayerLeft { .. })).collect()
}

/// Without KEEPALIVE (3.2.2.2 runs no Ping timer then) the host still notices a killed member
/// within one period: its PING over TCP finds no listener. Both players go, and the other
/// member hears a DELETEPLAYER for each.
#[test]
fn a_killed_member_is_removed_within_one_ping_period_without_keepalive() {
    let (mut net, pilot, system) = killed_member(SessionFlags::empty());
    net.advance(PING_PERIOD - Duration::from_secs(1));
    assert!(left(net.take(0)).is_empty(), "removed before any check");
    net.advance(Duration::from_secs(1));
    let gone = [Dp4Event::PlayerLeft { id: pilot }, Dp4Event::PlayerLeft { id: system }];
    assert_eq!(left(net.take(0)), gone);
    assert_eq!(left(net.take(1)), gone);
    assert!(!net.nodes[1].players().contains_key(&system));
}

/// With KEEPALIVE the same deadline holds: eight unanswered PINGs (3.2.6.2) are not waited for.
#[test]
fn a_killed_member_is_removed_within_one_ping_period_with_keepalive() {
    let (mut net, pilot, system) = killed_member(SessionFlags::KEEP_ALIVE);
    net.advance(PING_PERIOD);
    let gone = [Dp4Event::PlayerLeft { id: pilot }, Dp4Event::PlayerLeft { id: system }];
    assert_eq!(left(net.take(0)), gone);
    assert_eq!(left(net.take(1)), gone);
}

/// A member notices a killed host within one period too (its Ping timer PINGs the host), and
/// with MH the lowest remaining system player takes over (3.1.7.1).
#[test]
fn a_killed_host_is_noticed_within_one_ping_period() {
    let mut net = session_of(3, |c| c.flags = SessionFlags::MIGRATE_HOST);
    let host = net.nodes[0].system_player().unwrap();
    (0..3).for_each(|i| drop(net.take(i)));
    net.killed.insert(0);
    net.advance(PING_PERIOD);
    let (b, c) = (net.nodes[1].system_player().unwrap(), net.nodes[2].system_player().unwrap());
    let new_host = if b < c { 1 } else { 2 };
    assert_eq!(net.nodes[new_host].role(), Role::Host);
    for i in [1, 2] {
        assert!(!net.nodes[i].players().contains_key(&host));
        assert_eq!(net.nodes[i].host_player(), net.nodes[new_host].system_player());
    }
}

/// A connection of a known instance closed by its peer (a killed process closes them all): the
/// instance is PINGed over TCP at once, and removed at once when that connect is refused.
#[test]
fn a_closed_connection_of_a_killed_member_removes_it_at_once() {
    let (mut net, pilot, system) = killed_member(SessionFlags::empty());
    let now = net.now;
    net.nodes[0].handle_tcp_lost(now, 77, Some(stream(2)));
    net.run();
    let gone = [Dp4Event::PlayerLeft { id: pilot }, Dp4Event::PlayerLeft { id: system }];
    assert_eq!(left(net.take(0)), gone);
    assert_eq!(left(net.take(1)), gone);
}

/// A connection closed by a live instance (its idle connection timed out) costs one PING over
/// TCP, which it answers; more closes within a second cost one more PING, a second later (the
/// first may have gone out on a connection that was closing).
#[test]
fn a_closed_connection_of_a_live_member_is_one_ping() {
    let mut net = session_of(2, |_| {});
    let b = net.nodes[1].system_player().unwrap();
    net.log.clear();
    let now = net.now;
    // The member's own connection to the host, accepted and known (it carried its join).
    net.nodes[0].handle_tcp_lost(now, 1000, None);
    net.nodes[0].handle_tcp_lost(now, 1, Some(stream(1)));
    net.nodes[0].handle_tcp_lost(now, 1, Some(stream(1)));
    net.run();
    assert_eq!(net.trace(), ["0->1 Tcp DPSP_MSG_PING", "1->0 Udp DPSP_MSG_PINGREPLY"]);
    net.log.clear();
    net.advance(Duration::from_secs(1));
    assert_eq!(net.trace(), ["0->1 Tcp DPSP_MSG_PING", "1->0 Udp DPSP_MSG_PINGREPLY"]);
    assert!(net.nodes[0].players().contains_key(&b));
}

/// The connection a member's messages came over is tied to it: when it closes, that member is
/// the one checked.
#[test]
fn an_accepted_connection_is_tied_to_its_instance() {
    let (mut net, _, system) = killed_member(SessionFlags::empty());
    // Net numbers node 2's connections to node 0 as 2 * 1000 + 0.
    let now = net.now;
    net.nodes[0].handle_tcp_lost(now, 2000, None);
    net.run();
    assert!(!net.nodes[0].players().contains_key(&system));
}

/// Issue 27 item 16: a join whose host listener refuses the connection fails at once, not
/// after the Reliable API timer (MC-DPL4CS 3.1.2.2).
#[test]
fn a_join_to_no_listener_fails_at_once() {
    let mut net = Net::new(2);
    net.killed.insert(0);
    net.join(1, None);
    assert_eq!(net.take(1), [Dp4Event::JoinFailed(crate::dp4::JoinError::Unreachable)]);
    assert_eq!(net.nodes[1].role(), Role::Idle);
}

/// Issue 25 item 19: a joiner whose address used up the per-source reply limit with
/// enumerations (a quick retry with another password) still gets its REQUESTPLAYERREPLY: the
/// request came over TCP, which proved its address (MC-DPL4CS 3.2.5.4; docs/limits.md).
#[test]
fn a_quick_retry_is_not_rate_limited_out() {
    use dplay_wire::dp4::enumeration::EnumSessionsFlags;

    let mut net = session_of(1, |_| {});
    net.nodes.push(crate::dp4::Dp4Session::new(super::net::config(1)).unwrap());
    net.events.push(Vec::new());
    let request = crate::dp4::EnumRequest {
        application_guid: super::net::APP,
        password: None,
        flags: EnumSessionsFlags::ALL,
    };
    for _ in 0..4 {
        net.enumerate(1, &request);
    }
    assert_eq!(net.take(1).iter().filter(|e| matches!(e, Dp4Event::SessionFound(_))).count(), 4);
    net.join(1, None);
    assert_eq!(net.nodes[1].role(), Role::Member);
}

/// Issue 27 item 15 (MC-DPL4CS 2.2.3, 3.1.7.1): a DirectPlay 6 instance (dialect 9) that
/// becomes host sends no IAMNAMESERVER; the others take it as host as soon as it has the
/// lowest system player ID, without waiting for one.
#[test]
fn a_directx_6_instance_that_takes_over_is_the_host() {
    let mut net = session_of(3, |c| c.flags = SessionFlags::MIGRATE_HOST);
    let (b, c) = (net.nodes[1].system_player().unwrap(), net.nodes[2].system_player().unwrap());
    let (new_host, other) = if b < c { (1, 2) } else { (2, 1) };
    let id = net.nodes[new_host].system_player().unwrap();
    net.nodes[other].players.get_mut(&id).unwrap().version = 9;
    // Whatever the new host sends the other is lost: no IAMNAMESERVER arrives.
    net.cut.insert((new_host, other));
    (0..3).for_each(|i| drop(net.take(i)));
    net.nodes[0].leave().unwrap();
    net.run();
    assert!(net.take(other).contains(&Dp4Event::HostMigrated { host: id, local: false }));
    assert_eq!(net.nodes[other].host_player(), Some(id));
}
