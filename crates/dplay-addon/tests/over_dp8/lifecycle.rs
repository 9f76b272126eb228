//! The host removes a player and ends the session (seed 004 rows LEAVE_SESSION, HOST_QUIT) over
//! DirectPlay 8 (MS-DPDX 3.1.5.3; MC-DPL8CS 2.2.2.1).

use std::time::Duration;

use dplay_addon::{DisconnectReason, Event, HostPolicy, OverDp8Event, Role};
use dplay_session::{EndReason, Event as SessionEvent};
use dplay_sim::run_seeds;

use crate::support::{Kind, Net, link};

fn ended(net: &Net, i: usize) -> Option<EndReason> {
    net.node(i).events.iter().find_map(|e| match e {
        OverDp8Event::Session(SessionEvent::SessionEnded { reason }) => Some(*reason),
        _ => None,
    })
}

fn two_players(seed: u64) -> Net {
    let kinds = [
        Kind::Host(Role::Observer, HostPolicy::default()),
        Kind::Client(Role::Player),
        Kind::Client(Role::Player),
    ];
    let mut net = Net::new(seed, link(0.05), &kinds);
    net.start();
    assert!(net.run_until_addon_joined(&[1, 2], Duration::from_secs(30)), "seed {seed}");
    net.sim.run_for(Duration::from_secs(2));
    net
}

/// Seed 004 row LEAVE_SESSION: the removed player closes its connection; the others see it go.
#[test]
fn the_host_removes_a_player() {
    run_seeds(10, |seed| {
        let mut net = two_players(seed);
        let victim = net.node(2).id();
        net.with(0, |n, now| n.bridge.with_host(now, |h, now| h.remove_player(now, victim))).expect("a host");
        net.sim.run_for(Duration::from_secs(10));

        assert!(net.node(2).saw(&Event::Disconnect(DisconnectReason::RemovedByHost)), "seed {seed}");
        assert_eq!(ended(&net, 2), Some(EndReason::Left));
        assert!(net.node(0).saw(&Event::PlayerLeft { id: victim }), "seed {seed}");
        assert!(net.node(1).tracker().get(victim).is_none(), "seed {seed}: node 1 still tracks node 2");
        assert!(net.node(1).bridge.session().is_joined());
    });
}

/// Seed 004 row HOST_QUIT and MC-DPL8CS 2.2.2.1: the host ends the session for everyone.
#[test]
fn the_host_ends_the_session() {
    run_seeds(10, |seed| {
        let mut net = two_players(seed);
        net.with(0, |n, now| n.bridge.with_host(now, |h, now| h.end_session(now))).expect("a host");
        net.sim.run_for(Duration::from_secs(10));

        assert!(net.node(0).saw(&Event::Disconnect(DisconnectReason::SessionEnded)));
        assert_eq!(ended(&net, 0), Some(EndReason::Left));
        for i in [1, 2] {
            assert_eq!(ended(&net, i), Some(EndReason::Terminated), "seed {seed}: node {i}");
        }
        // Ended: the add-ons are no longer driven, so their positions stop.
        let sent = |net: &Net| [1, 2].map(|i| net.node(i).bridge.stats().sent);
        let before = sent(&net);
        net.sim.run_for(Duration::from_secs(5));
        assert_eq!(sent(&net), before, "seed {seed}");
    });
}
