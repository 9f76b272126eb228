//! The stream model (docs/decisions.md, "dplay-sim streams"), checked with a toy node that
//! connects, writes, echoes and records what it hears.
#![allow(clippy::indexing_slicing, reason = "test code, as clippy.toml allows in unit tests")]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_sim::{
    LinkConfig, NatConfig, Node, NodeId, Sim, StreamCommand, StreamConfig, StreamEnd, StreamEvent, Transmit,
    run_seeds,
};

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

/// A client at 10.0.0.1 connected (connection 1) to a server listening at 10.0.0.2:2300, after
/// 100 ms of the sim: (client, server).
fn connected(sim: &mut Sim) -> (NodeId, NodeId) {
    let mut client = Peer::default();
    client.commands.push_back(StreamCommand::Connect { conn: 1, to: addr("10.0.0.2:2300") });
    let c = sim.add_node(addr("10.0.0.1:2350"), client);
    let s = sim.add_node(addr("10.0.0.2:2350"), Peer::default());
    sim.listen(s, addr("10.0.0.2:2300"));
    sim.run_for(Duration::from_millis(100));
    (c, s)
}

/// Issues the commands it is given; echoes what it reads when `echo` is set; records events.
#[derive(Default)]
struct Peer {
    commands: VecDeque<StreamCommand>,
    echo: bool,
    events: Vec<StreamEvent>,
}

impl Peer {
    fn bytes(&self, conn: u64) -> Vec<u8> {
        self.events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Data { conn: c, data } if *c == conn => Some(data.clone()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    fn ended(&self) -> Option<StreamEnd> {
        self.events.iter().find_map(|e| match e {
            StreamEvent::Ended { how, .. } => Some(*how),
            _ => None,
        })
    }

    fn accepted(&self) -> Option<(u64, SocketAddr)> {
        self.events.iter().find_map(|e| match e {
            StreamEvent::Accepted { conn, peer, .. } => Some((*conn, *peer)),
            _ => None,
        })
    }
}

impl Node for Peer {
    fn handle_datagram(&mut self, _now: Instant, _from: SocketAddr, _data: &[u8]) {}
    fn handle_timeout(&mut self, _now: Instant) {}
    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
        None
    }
    fn handle_stream(&mut self, _now: Instant, event: StreamEvent) {
        if let (true, StreamEvent::Data { conn, data }) = (self.echo, &event) {
            self.commands.push_back(StreamCommand::Write { conn: *conn, data: data.clone() });
        }
        self.events.push(event);
    }
    fn poll_stream(&mut self, _now: Instant) -> Option<StreamCommand> {
        self.commands.pop_front()
    }
}

/// 64 KiB written in pieces of 1000 from a client to an echo server, under `loss`.
fn echo_run(seed: u64, loss: f64) -> (Sim, Vec<u8>) {
    let mut sim = Sim::new(seed);
    sim.enable_trace();
    sim.set_default_link(LinkConfig::lossy(loss).with_jitter(Duration::from_millis(5)));
    let payload: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
    let mut client = Peer::default();
    client.commands.push_back(StreamCommand::Connect { conn: 1, to: addr("10.0.0.2:2300") });
    for chunk in payload.chunks(1000) {
        client.commands.push_back(StreamCommand::Write { conn: 1, data: chunk.to_vec() });
    }
    let c = sim.add_node(addr("10.0.0.1:2350"), client);
    let s = sim.add_node(addr("10.0.0.2:2350"), Peer { echo: true, ..Peer::default() });
    sim.listen(s, addr("10.0.0.2:2300"));
    sim.run_for(Duration::from_secs(120));
    let got = sim.node::<Peer>(c).bytes(1);
    let (conn, peer) = sim.node::<Peer>(s).accepted().unwrap();
    assert_eq!(peer.ip(), addr("10.0.0.1:0").ip());
    assert_eq!(sim.node::<Peer>(s).bytes(conn), payload, "seed {seed}");
    assert!(sim.node::<Peer>(c).events.contains(&StreamEvent::Connected { conn: 1 }));
    (sim, got)
}

/// Every byte arrives once and in order, at 0, 5 and 15% loss: loss is only delay; the
/// segments are cut where the seed says.
#[test]
fn bytes_arrive_once_in_order_under_loss() {
    let payload: Vec<u8> = (0..65_536u32).map(|i| (i % 251) as u8).collect();
    run_seeds(4, |seed| {
        for loss in [0.0, 0.05, 0.15] {
            let (sim, got) = echo_run(seed, loss);
            assert_eq!(got, payload, "seed {seed} loss {loss}");
            let stats = sim.stream_stats();
            assert!(stats.segments > 2 * 66, "cut in segments: {stats:?}");
            assert_eq!(stats.retransmits == 0, loss == 0.0, "{stats:?}");
        }
    });
}

/// The same seed gives the same run, segment for segment.
#[test]
fn a_seed_replays() {
    let (a, _) = echo_run(7, 0.1);
    let (b, _) = echo_run(7, 0.1);
    assert_eq!(a.trace(), b.trace());
    let (c, _) = echo_run(8, 0.1);
    assert_ne!(a.trace(), c.trace());
}

/// A connect to a host with no listener on that port is refused after a round trip; one to
/// an address nobody has is never answered and times out.
#[test]
fn refused_and_unanswered_connects() {
    let mut sim = Sim::new(1);
    let mut client = Peer::default();
    client.commands.push_back(StreamCommand::Connect { conn: 1, to: addr("10.0.0.2:2301") });
    client.commands.push_back(StreamCommand::Connect { conn: 2, to: addr("10.0.0.9:2300") });
    let c = sim.add_node(addr("10.0.0.1:2350"), client);
    sim.add_node(addr("10.0.0.2:2350"), Peer::default());
    sim.run_for(Duration::from_millis(25));
    let ends = |sim: &Sim| {
        sim.node::<Peer>(c)
            .events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Ended { conn, how } => Some((*conn, *how)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(ends(&sim), [(1, StreamEnd::Refused)], "after 20 ms");
    sim.run_for(Duration::from_secs(30));
    assert_eq!(ends(&sim), [(1, StreamEnd::Refused), (2, StreamEnd::TimedOut)]);
    let stats = sim.stream_stats();
    assert_eq!((stats.refused, stats.timed_out), (1, 1));
}

/// Through a NAT: an outbound connection comes from the NAT's public address (a new port per
/// destination behind a symmetric NAT); an inbound connect to the NAT is never answered.
#[test]
fn nats_map_outbound_and_drop_inbound_connects() {
    let public = "198.51.100.1".parse().unwrap();
    for config in [NatConfig::port_restricted_cone(public), NatConfig::symmetric(public)] {
        let mut sim = Sim::new(2);
        let nat = sim.add_nat(config);
        let mut inside = Peer::default();
        for (conn, to) in [(1, "203.0.113.1:2300"), (2, "203.0.113.1:2301")] {
            inside.commands.push_back(StreamCommand::Connect { conn, to: addr(to) });
            inside.commands.push_back(StreamCommand::Write { conn, data: b"hello".to_vec() });
        }
        let i = sim.add_node(addr("192.168.1.10:2350"), inside);
        sim.listen(i, addr("192.168.1.10:2300"));
        sim.put_behind_nat(i, nat);
        let host = sim.add_node(addr("203.0.113.1:2350"), Peer::default());
        sim.listen(host, addr("203.0.113.1:2300"));
        sim.listen(host, addr("203.0.113.1:2301"));
        sim.run_for(Duration::from_secs(1));
        let peers: Vec<SocketAddr> = sim
            .node::<Peer>(host)
            .events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::Accepted { peer, .. } => Some(*peer),
                _ => None,
            })
            .collect();
        assert_eq!(peers.len(), 2);
        assert!(peers.iter().all(|p| p.ip() == config.public_ip), "{peers:?}");
        assert_ne!(peers[0].port(), peers[1].port(), "a connection is its own flow");
        // The host connects back to the peer's public address, and to its own listener's
        // port at the NAT: neither is answered.
        let back = [peers[0], SocketAddr::new(config.public_ip, 2300)];
        for (k, to) in back.into_iter().enumerate() {
            sim.node_mut::<Peer>(host).commands.push_back(StreamCommand::Connect { conn: 10 + k as u64, to });
        }
        sim.run_for(Duration::from_secs(30));
        let timed_out = |k: u64| StreamEvent::Ended { conn: 10 + k, how: StreamEnd::TimedOut };
        let events = &sim.node::<Peer>(host).events;
        assert!(events.contains(&timed_out(0)) && events.contains(&timed_out(1)), "{events:?}");
        assert_eq!(sim.nat_refused_connects(nat), 2);
        assert!(sim.node::<Peer>(i).accepted().is_none());
    }
}

/// A pulled link: the stream stalls, the bytes wait; healed in time they arrive, in order;
/// not healed, the end with bytes to send is reset after the stall bound. A killed process
/// resets its connections.
#[test]
fn partitions_stall_then_reset_and_killed_peers_reset() {
    let mut sim = Sim::new(3);
    sim.enable_trace();
    let (c, s) = connected(&mut sim);
    let (conn, _) = sim.node::<Peer>(s).accepted().unwrap();
    let write = |sim: &mut Sim, data: &[u8]| {
        sim.node_mut::<Peer>(c).commands.push_back(StreamCommand::Write { conn: 1, data: data.to_vec() });
    };
    write(&mut sim, b"one ");
    sim.run_for(Duration::from_millis(5));
    sim.partition(c, s);
    write(&mut sim, b"two ");
    sim.run_for(Duration::from_secs(10));
    assert_eq!(sim.node::<Peer>(s).bytes(conn), b"", "stalled");
    sim.heal(c, s);
    write(&mut sim, b"three");
    sim.run_for(Duration::from_secs(20));
    assert_eq!(sim.node::<Peer>(s).bytes(conn), b"one two three");
    assert!(sim.trace().contains("stalled") && sim.trace().contains("resumed"));

    sim.partition(c, s);
    write(&mut sim, b"lost");
    sim.run_for(Duration::from_secs(59));
    assert_eq!(sim.node::<Peer>(c).ended(), None);
    sim.run_for(Duration::from_secs(70));
    assert_eq!(sim.node::<Peer>(c).ended(), Some(StreamEnd::Reset));
    assert_eq!(sim.node::<Peer>(s).ended(), None, "the silent end knows nothing");
    sim.heal(c, s);

    // A new connection, then the server's process dies.
    sim.node_mut::<Peer>(c).commands.push_back(StreamCommand::Connect { conn: 2, to: addr("10.0.0.2:2300") });
    sim.run_for(Duration::from_millis(100));
    sim.kill_streams(s);
    sim.run_for(Duration::from_millis(100));
    assert!(sim.node::<Peer>(c).events.contains(&StreamEvent::Ended { conn: 2, how: StreamEnd::Reset }));
    sim.node_mut::<Peer>(c).commands.push_back(StreamCommand::Connect { conn: 3, to: addr("10.0.0.2:2300") });
    sim.run_for(Duration::from_millis(100));
    assert!(sim.node::<Peer>(c).events.contains(&StreamEvent::Ended { conn: 3, how: StreamEnd::Refused }));
}

/// A close arrives after the last byte; the closer hears nothing more.
#[test]
fn close_follows_the_data() {
    let mut sim = Sim::new(4);
    sim.set_default_link(LinkConfig::lossy(0.2));
    let mut client = Peer::default();
    client.commands.extend([
        StreamCommand::Connect { conn: 1, to: addr("10.0.0.2:2300") },
        StreamCommand::Write { conn: 1, data: vec![7; 5000] },
        StreamCommand::Close { conn: 1 },
    ]);
    sim.add_node(addr("10.0.0.1:2350"), client);
    let s = sim.add_node(addr("10.0.0.2:2350"), Peer::default());
    sim.listen(s, addr("10.0.0.2:2300"));
    sim.run_for(Duration::from_secs(30));
    let server = sim.node::<Peer>(s);
    let (conn, _) = server.accepted().unwrap();
    assert_eq!(server.bytes(conn), vec![7; 5000]);
    assert!(matches!(server.events.last(), Some(StreamEvent::Ended { how: StreamEnd::Closed, .. })));
}

/// A killed process (`Sim::kill`): its connections reset, its listeners gone, and it is never
/// run again: its commands are not carried out and datagrams that reach it are lost.
#[test]
fn a_killed_node_is_never_run_again() {
    let mut sim = Sim::new(8);
    let (c, s) = connected(&mut sim);
    sim.kill(c);
    sim.run_for(Duration::from_millis(100));
    assert_eq!(sim.node::<Peer>(s).ended(), Some(StreamEnd::Reset));
    let connects = sim.stream_stats().connects;
    sim.node_mut::<Peer>(c).commands.push_back(StreamCommand::Connect { conn: 2, to: addr("10.0.0.2:2300") });
    let now = sim.now();
    sim.inject(now, addr("10.0.0.2:2350"), c, b"anyone?".to_vec());
    sim.run_for(Duration::from_secs(1));
    assert_eq!(sim.stream_stats().connects, connects);
    assert_eq!(sim.unroutable(), 1);
}

/// With keepalive (`StreamConfig::keepalive`), an idle connection cut by a partition is reset
/// at both ends that long after the partition began; without it, it stays open.
#[test]
fn keepalive_ends_an_idle_connection_across_a_partition() {
    for keepalive in [None, Some(Duration::from_secs(30))] {
        let mut sim = Sim::new(9);
        sim.set_stream_config(StreamConfig { keepalive, ..StreamConfig::default() });
        let (c, s) = connected(&mut sim);
        sim.partition(c, s);
        sim.run_for(Duration::from_secs(29));
        assert_eq!(sim.node::<Peer>(c).ended(), None);
        sim.run_for(Duration::from_secs(2));
        let want = keepalive.map(|_| StreamEnd::Reset);
        assert_eq!((sim.node::<Peer>(c).ended(), sim.node::<Peer>(s).ended()), (want, want));
    }
}
