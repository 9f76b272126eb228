//! A peer whose machine goes silent (a pulled cable: no socket closes, no error comes back;
//! issue 27 item 10; MC-DPL4CS 3.1.2.5, 3.1.6.2, 3.2.2.2, 3.2.6.2; docs/decisions.md, "A
//! silent peer"): under default settings (no KEEPALIVE) an instance that has answered PINGs
//! and then answers none of a period's 8 goes, with all its players, within two Ping periods
//! of its last message; one that never answers PING, or answers late, stays.

use std::time::Duration;

use dplay_wire::dp4::session::SessionFlags;

use super::net::{Net, created, send, session_of, stream};
use crate::dp4::{Dp4Event, EndReason};

/// One Ping timer period under default settings (MC-DPL4CS 3.1.2.5, 3.2.2.2).
const PING_PERIOD: Duration = Duration::from_secs(35);

/// The documented deadline for a silent peer: two Ping periods after its last message.
const SILENT_DEADLINE: Duration = Duration::from_secs(70);

/// A three-instance session with `flags` in which node 2 created "pilot" and every instance has
/// answered a tick's PINGs: (net, the pilot, node 2's system player), events and log cleared.
fn answered(flags: SessionFlags) -> (Net, u32, u32) {
    let mut net = session_of(3, |c| c.flags = flags);
    let pilot = created(&mut net, 2, "pilot");
    let system = net.nodes[2].system_player().unwrap();
    net.advance(PING_PERIOD);
    assert!(net.nodes[0].players()[&system].answers_pings, "{flags:?}");
    (0..3).for_each(|i| drop(net.take(i)));
    net.log.clear();
    (net, pilot, system)
}

/// Every link to and from node `i` loses its traffic from now on.
fn pull_cable(net: &mut Net, i: usize) {
    for j in (0..net.nodes.len()).filter(|&j| j != i) {
        net.cut.insert((i, j));
        net.cut.insert((j, i));
    }
}

/// The PlayerLeft events among `events`.
fn left(events: &[Dp4Event]) -> Vec<Dp4Event> {
    events.iter().filter(|e| matches!(e, Dp4Event::PlayerLeft { .. })).cloned().collect()
}

/// Advances a second at a time until node `i` reports an event `want` accepts; how long that
/// took, and node `i`'s events up to then. Panics after `limit`.
#[track_caller]
fn until(
    net: &mut Net,
    i: usize,
    limit: Duration,
    want: impl Fn(&Dp4Event) -> bool,
) -> (Duration, Vec<Dp4Event>) {
    let start = net.now;
    let mut seen = Vec::new();
    while net.now - start < limit {
        net.advance(Duration::from_secs(1));
        seen.extend(net.take(i));
        if seen.iter().any(&want) {
            return (net.now - start, seen);
        }
    }
    panic!("nothing wanted within {limit:?}: {seen:?}");
}

/// Default settings: the host notices a member whose cable was pulled within two periods of
/// its last message, after eight PINGs (one by TCP at the tick, seven follow-ups by UDP,
/// 3.2.6.2's count), removes both its players, and the other member hears a DELETEPLAYER for
/// each. It is not removed sooner than one period (a late answer has that long).
#[test]
fn a_silent_member_goes_within_two_ping_periods() {
    let (mut net, pilot, system) = answered(SessionFlags::empty());
    pull_cable(&mut net, 2);
    let (took, events) = until(&mut net, 0, SILENT_DEADLINE, |e| *e == Dp4Event::PlayerLeft { id: system });
    assert!(took > PING_PERIOD, "removed after only {took:?}");
    let gone = [Dp4Event::PlayerLeft { id: pilot }, Dp4Event::PlayerLeft { id: system }];
    assert_eq!(left(&events), gone);
    assert_eq!(left(&net.take(1)), gone);
    let pings = net.log.iter().filter(|s| (s.from, s.to, s.name) == (0, 2, "DPSP_MSG_PING")).count();
    assert_eq!(pings, 8, "{:?}", net.trace());
    let deletes: Vec<u32> = net
        .log
        .iter()
        .filter(|s| (s.from, s.to, s.name) == (0, 1, "DPSP_MSG_DELETEPLAYER"))
        .map(|s| super::wine_facts::dword(&s.bytes, 32))
        .collect();
    assert_eq!(deletes, [pilot, system]);
    // The connections the host opened to its listener are given up with what they hold.
    assert_eq!(net.nodes[0].poll_abandoned(), Some(stream(2)));
    assert_eq!(net.nodes[0].poll_abandoned(), None);
}

/// Issue 27 item 4 of the brief, the client side: a member whose host went silent ends the
/// session (no MH) within the same two periods.
#[test]
fn a_member_whose_host_goes_silent_ends_within_two_ping_periods() {
    let (mut net, _, _) = answered(SessionFlags::empty());
    pull_cable(&mut net, 0);
    let (took, _) = until(&mut net, 1, SILENT_DEADLINE, |e| *e == Dp4Event::Ended(EndReason::HostLost));
    assert!(took > PING_PERIOD, "ended after only {took:?}");
}

/// With MH, the members migrate from a silent host within the same two periods (3.1.7.1).
#[test]
fn a_silent_host_is_migrated_from_within_two_ping_periods() {
    let (mut net, _, _) = answered(SessionFlags::MIGRATE_HOST);
    let host = net.nodes[0].system_player().unwrap();
    pull_cable(&mut net, 0);
    let migrated = |e: &Dp4Event| matches!(e, Dp4Event::HostMigrated { .. });
    until(&mut net, 1, SILENT_DEADLINE, migrated);
    net.advance(Duration::from_secs(1));
    for i in [1, 2] {
        assert!(!net.nodes[i].players().contains_key(&host));
    }
    assert_eq!(net.nodes[1].host_player(), net.nodes[2].host_player());
}

/// A member that never answers PING (as Wine's dplayx before it learnt PINGREPLY) but keeps
/// sending is never removed, KEEPALIVE or not: its messages are its ChatterCount (3.1.1).
#[test]
fn a_member_that_never_answers_but_sends_stays() {
    for flags in [SessionFlags::empty(), SessionFlags::KEEP_ALIVE] {
        let mut net = session_of(2, |c| c.flags = flags);
        net.lost.insert((1, "DPSP_MSG_PINGREPLY"));
        let a = created(&mut net, 0, "alice");
        let b = created(&mut net, 1, "bob");
        for _ in 0..40 {
            send(&mut net, 1, b, a, b"still here", false);
            net.advance(PING_PERIOD / 3);
        }
        assert!(net.nodes[0].players().contains_key(&b), "{flags:?}");
        assert!(left(&net.take(0)).is_empty(), "{flags:?}");
    }
}

/// A member that never answers PING and sends nothing is not removed for that alone under
/// default settings; with KEEPALIVE the spec's rule removes it after 8 unanswered PINGs, one a
/// period (3.2.6.2).
#[test]
fn a_member_that_never_answers_stays_unless_keepalive() {
    for (flags, kept) in [(SessionFlags::empty(), true), (SessionFlags::KEEP_ALIVE, false)] {
        let mut net = session_of(2, |c| c.flags = flags);
        net.lost.extend([(1, "DPSP_MSG_PINGREPLY"), (1, "DPSP_MSG_PING")]);
        let b = net.nodes[1].system_player().unwrap();
        net.advance(PING_PERIOD * 9 + Duration::from_secs(1));
        assert_eq!(net.nodes[0].players().contains_key(&b), kept, "{flags:?}");
        assert_eq!(net.nodes[1].role(), crate::dp4::Role::Member, "{flags:?}");
    }
}

/// A member that answers late (nothing from it for 25 s after a tick, then it answers a
/// follow-up PING) stays; so does one that answered before and goes quiet for less than a
/// period at a time.
#[test]
fn a_member_that_answers_late_stays() {
    let (mut net, _, system) = answered(SessionFlags::empty());
    for _ in 0..5 {
        net.lost.insert((2, "DPSP_MSG_PINGREPLY"));
        net.advance(Duration::from_secs(25));
        net.lost.clear();
        net.advance(PING_PERIOD - Duration::from_secs(25));
    }
    assert!(net.nodes[0].players().contains_key(&system));
    assert!(left(&net.take(0)).is_empty());
    assert!(left(&net.take(1)).is_empty());
}

/// The same deadline in a session with MC-DPL4R (its PINGs go on the link) and in a
/// client/server session (the server PINGs each client), both members told of each player.
#[test]
fn a_silent_member_goes_within_two_ping_periods_in_other_sessions() {
    for flags in [SessionFlags::DIRECTPLAY_PROTOCOL, SessionFlags::CLIENT_SERVER] {
        let (mut net, pilot, system) = answered(flags);
        pull_cable(&mut net, 2);
        let (took, events) =
            until(&mut net, 0, SILENT_DEADLINE, |e| *e == Dp4Event::PlayerLeft { id: system });
        assert!(took > PING_PERIOD, "{flags:?}: removed after only {took:?}");
        let gone = [Dp4Event::PlayerLeft { id: pilot }, Dp4Event::PlayerLeft { id: system }];
        assert_eq!(left(&events), gone, "{flags:?}");
        if flags != SessionFlags::CLIENT_SERVER {
            assert_eq!(left(&net.take(1)), gone, "{flags:?}");
        }
    }
}
