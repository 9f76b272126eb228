//! Client/server sessions (DPSESSION_CLIENTSERVER; MC-DPL4CS 1.3, 2.2.5, 2.2.28 note, 3.1.4.3)
//! between our own instances. Against Windows-shaped peers, on the simulated network under
//! loss: `crates/dplay-session/tests/dp4_client_server.rs`.

use dplay_wire::Wire;
use dplay_wire::dp4::session::SessionFlags;

use super::net::{Net, created, session};
use crate::dp4::{DPID_SERVERPLAYER, Dp4Event};

/// A client/server session "cs" with `more` flags.
fn cs(more: SessionFlags) -> crate::dp4::HostConfig {
    let mut c = session("cs");
    c.flags = SessionFlags::CLIENT_SERVER | more;
    c
}

/// Our server and our clients (2.2.28, 3.1.4.3): a client hears of the other client's system
/// player, never its application player, and an ENUMPLAYER from outside is answered with the
/// same table, without the password.
#[test]
fn our_clients_see_only_system_players_and_the_server_player() {
    let mut net = Net::new(3);
    net.host(cs(SessionFlags::empty()));
    created(&mut net, 0, "server");
    net.join(1, None);
    let one = created(&mut net, 1, "one");
    net.join(2, None);
    let two = created(&mut net, 2, "two");
    for (i, other) in [(1, two), (2, one)] {
        let players = net.nodes[i].players();
        assert!(players.contains_key(&DPID_SERVERPLAYER) && !players.contains_key(&other), "node {i}");
        assert_eq!(players.values().filter(|p| p.is_system()).count(), 3, "node {i}");
    }
    assert!(net.nodes[0].players().contains_key(&one) && net.nodes[0].players().contains_key(&two));
    net.take(2);
    net.log.clear();
    let now = net.now;
    net.nodes[1].send(now, one, two, b"via the server", true).unwrap();
    net.run();
    assert_eq!(net.trace(), ["1->0 Tcp PLAYERMESSAGE", "0->2 Tcp PLAYERMESSAGE"]);
    let got = Dp4Event::Message { from: Some(one), to: Some(two), data: b"via the server".to_vec() };
    assert_eq!(net.take(2), [got]);
}

/// MC-DPL4CS 1.3 with RP (MC-DPL4R): the server relays over MC-DPL4R as it received, RLY
/// when the client sent it guaranteed and without RLY when not.
#[test]
fn relay_over_the_reliable_protocol_keeps_rly() {
    use dplay_wire::dp4::reliable::{FrameBody, ReliableFlags, ReliableFrame};
    let mut net = Net::new(3);
    net.host(cs(SessionFlags::DIRECTPLAY_PROTOCOL));
    created(&mut net, 0, "server");
    net.join(1, None);
    let one = created(&mut net, 1, "one");
    net.join(2, None);
    let two = created(&mut net, 2, "two");
    for guaranteed in [true, false] {
        net.log.clear();
        let now = net.now;
        net.nodes[1].send(now, one, two, b"relayed", guaranteed).unwrap();
        net.run();
        let rly: Vec<bool> = net
            .log
            .iter()
            .filter(|s| (s.from, s.to) == (0, 2))
            .filter_map(|s| ReliableFrame::parse(&s.bytes).ok())
            .filter_map(|f| match f.body {
                FrameBody::Data(d) => Some(d.flags.contains(ReliableFlags::RLY)),
                _ => None,
            })
            .collect();
        assert_eq!(rly, [guaranteed], "guaranteed: {guaranteed}");
        let got = Dp4Event::Message { from: Some(one), to: Some(two), data: b"relayed".to_vec() };
        assert!(net.take(2).contains(&got));
    }
}
