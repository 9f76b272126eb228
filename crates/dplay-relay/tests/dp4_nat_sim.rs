//! The DirectPlay 4 relay on the simulated network, TCP streams included, behind simulated NATs
//! (issue 23; docs/relay.md, "DirectPlay 4"): a relaying host on the public side (its session
//! with [`Dp4Relay`] as its `Dp4AddressMap`, each relay endpoint a UDP socket and a TCP
//! listener), members each behind its own NAT, port-restricted cone or symmetric, all on one
//! private subnet; joins, a member that vanishes without leaving (its process killed, or its
//! cable pulled), a leave (its process gone, so its connections reset) and a join after it,
//! under 0, 5 or 15% loss, over `DPLAY_SIM_SEEDS` seeds. Every member and the host get every
//! other's guaranteed messages, none lost, duplicated or out of order; a vanished member is
//! removed with its players within the documented deadline and every other member told; no
//! datagram goes from one member's network to another's, nothing is sent toward a NATed
//! address the member did not open (no connect, no datagram the NAT filters); a leaver's
//! endpoint is freed; a stranger gets nothing.
#![allow(clippy::indexing_slicing, reason = "test code: a bad index is a failed test")]

use std::cell::RefCell;
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use dplay_relay::dp4::{Dp4Endpoint, Dp4Forward, Dp4Relay, Dp4RelayConfig, Dp4StreamRead};
use dplay_session::dp4::{Dp4AddressMap, Dp4AddressMapHandle, Dp4Config, Dp4Event, HostConfig, Via};
use dplay_sim::{
    LinkConfig, NatConfig, NatId, Node, NodeId, Sim, StreamCommand, StreamConfig, StreamEvent, Transmit,
    run_seeds,
};
use dplay_testkit::dp4_node::windows::{dwords, message, player_message_udp};
use dplay_testkit::dp4_node::{Dp4Node, WindowsPeer, add_dp4, add_windows, config_at};
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x5e1a_7ed0_d404_4b2a_9c11_0000_0000_0004);
const HOST_IP: Ipv4Addr = Ipv4Addr::new(203, 0, 113, 1);
const ENDPOINTS: u16 = 6;
/// How long a join or the name table's spread may take, whatever the loss.
const STEP: Duration = Duration::from_secs(60);
/// The Ping period (MC-DPL4CS 3.1.2.5): a silent peer that answered PINGs is gone within two
/// (docs/decisions.md, "A silent peer").
const PING_PERIOD: Duration = Duration::from_secs(35);
/// A killed member is gone within about a second (its connections reset; docs/decisions.md,
/// "Noticing a killed process"); loss delays the resets' segments.
const KILLED_GONE: Duration = Duration::from_secs(5);
/// A TCP connection to a silent peer fails after this (dplay-runtime
/// `StreamLimits::silent_peer`; docs/decisions.md, "A silent peer").
const SILENT_FAIL: Duration = Duration::from_secs(30);

fn host_at(port: u16) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(HOST_IP), port)
}

/// Endpoint `i`: a UDP socket and a TCP listener on port 2401 + `i` (dplay-runtime
/// `dp4_relay_sockets` takes them after the game ports).
fn endpoint(i: u16) -> Dp4Endpoint {
    Dp4Endpoint { stream: host_at(2401 + i), datagram: host_at(2401 + i) }
}

/// What the relay sends, drained from its one queue: datagrams by endpoint, stream messages
/// by the host's connection.
struct Hub {
    relay: Arc<Mutex<Dp4Relay>>,
    datagrams: Vec<VecDeque<Transmit>>,
    streams: VecDeque<(u64, Vec<u8>)>,
}

impl Hub {
    fn drain(&mut self) {
        let mut relay = self.relay.lock().unwrap();
        let mut buf = Vec::new();
        while let Some(f) = relay.poll_forward(&mut buf) {
            let bytes = std::mem::take(&mut buf);
            match f {
                Dp4Forward::Stream { conn, .. } => self.streams.push_back((conn, bytes)),
                Dp4Forward::Datagram { endpoint, to } => {
                    self.datagrams[endpoint].push_back(Transmit { destination: to, contents: bytes });
                }
            }
        }
    }
}

type SharedHub = Rc<RefCell<Hub>>;

/// The relaying host as the runtime runs it (dplay-runtime `relayed_dp4`): its session's game
/// socket (the node's address), its listener and every endpoint's listener; the relay sees
/// each connection and each datagram at the game socket first, and routes the session's
/// transmits to members over the connections they opened.
struct RelayHost {
    inner: Dp4Node,
    /// Connections the relay refused (closed).
    refused: u64,
    /// The session's TCP messages for a member with no connection left, reported unreachable.
    unreachable: u64,
    /// The session's datagrams for a member's game socket that never sent to the host's.
    undeliverable: u64,
    relay: Arc<Mutex<Dp4Relay>>,
    hub: SharedHub,
}

impl RelayHost {
    fn relay(&self) -> std::sync::MutexGuard<'_, Dp4Relay> {
        self.relay.lock().unwrap()
    }

    fn pump(&mut self, now: Instant) {
        while let Some(t) = self.inner.session.poll_transmit() {
            let relay = self.relay.lock().unwrap();
            match t.via {
                // A member with no connection of its own left: reported at once, as a refused
                // connect (dplay-runtime `relayed_dp4`), never a connect toward its NAT.
                Via::Tcp if relay.stream_unreachable(t.to) => {
                    drop(relay);
                    self.unreachable += 1;
                    self.inner.session.handle_unreachable(now, t.to);
                }
                Via::Tcp => match relay.route_stream(t.to) {
                    Some(conn) => self.inner.conns.write_on(conn, t.bytes),
                    None => self.inner.conns.write_to(t.to, t.bytes),
                },
                // A member's game socket it never opened toward the host's: dropped.
                Via::Udp if relay.datagram_unreachable(t.to) => self.undeliverable += 1,
                Via::Udp => {
                    let to = relay.route_datagram(t.to).unwrap_or(t.to);
                    self.inner.conns.send_datagram(to, t.bytes);
                }
            }
        }
        let mut hub = self.hub.borrow_mut();
        hub.drain();
        while let Some((conn, bytes)) = hub.streams.pop_front() {
            self.inner.conns.write_on(conn, bytes);
        }
        self.inner.pump_events();
    }
}

impl Node for RelayHost {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.relay().observe_game_datagram(from, data);
        self.inner.handle_datagram(now, from, data);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        self.pump(now);
        self.inner.poll_transmit(now)
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn handle_stream(&mut self, now: Instant, event: StreamEvent) {
        match event {
            StreamEvent::Accepted { conn, listener, peer } => {
                let at = (0..ENDPOINTS).position(|i| endpoint(i).stream == listener);
                self.relay().accepted(conn, at);
                self.inner.stream_event(now, StreamEvent::Accepted { conn, listener, peer });
            }
            StreamEvent::Data { conn, data } => {
                let Some(peer) = self.inner.conns.remote(conn) else { return };
                let mut out = Vec::new();
                let read = self.relay().handle_stream(now, conn, peer, &data, &mut out);
                match read {
                    Ok(Dp4StreamRead::Relayed) => {}
                    Ok(Dp4StreamRead::Session) => {
                        self.inner.stream_event(now, StreamEvent::Data { conn, data })
                    }
                    // The relay's rewrite of the bytes (or nothing yet).
                    Ok(Dp4StreamRead::SessionRewritten { .. }) if out.is_empty() => {}
                    Ok(Dp4StreamRead::SessionRewritten { .. }) => {
                        self.inner.stream_event(now, StreamEvent::Data { conn, data: out });
                    }
                    Err(_) => {
                        self.refused += 1;
                        self.relay().stream_closed(conn);
                        self.inner.conns.close(conn);
                    }
                }
            }
            StreamEvent::Ended { conn, how } => {
                if self.relay().stream_closed(conn) {
                    self.inner.conns.forget(conn);
                    let lost: Vec<SocketAddr> = std::iter::from_fn(|| self.relay().poll_lost()).collect();
                    for listener in lost {
                        self.inner.session.handle_tcp_lost(now, conn, Some(listener));
                    }
                } else {
                    self.inner.stream_event(now, StreamEvent::Ended { conn, how });
                }
            }
            StreamEvent::Connected { .. } => {}
        }
    }

    fn poll_stream(&mut self, now: Instant) -> Option<StreamCommand> {
        self.pump(now);
        self.inner.poll_stream(now)
    }
}

/// One endpoint's UDP socket: what arrives goes to the relay; what the relay sends from this
/// endpoint leaves from here.
struct EndpointSocket {
    index: usize,
    hub: SharedHub,
}

impl Node for EndpointSocket {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        let relay = self.hub.borrow().relay.clone();
        relay.lock().unwrap().handle_datagram(now, self.index, from, data);
    }

    fn handle_timeout(&mut self, _now: Instant) {}

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        let mut hub = self.hub.borrow_mut();
        hub.drain();
        hub.datagrams[self.index].pop_front()
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        None
    }
}

struct World {
    sim: Sim,
    relay: Arc<Mutex<Dp4Relay>>,
    host: NodeId,
    /// Members by node, with their player.
    members: Vec<(NodeId, u32)>,
    nats: Vec<NatId>,
    host_player: u32,
    /// Joins tried.
    tries: u64,
    /// Members that vanished, and how long the host took to remove each.
    vanished: Vec<(NodeId, Duration)>,
}

fn member_config(sim: &Sim, stream: u64) -> Dp4Config {
    config_at(Dp4Config::default().with_seed(sim.derive_seed(stream)), 2300, 2350)
}

impl World {
    fn new(seed: u64, loss: f64) -> Self {
        let mut sim = Sim::new(seed);
        sim.set_default_link(LinkConfig::lossy(loss).with_latency(Duration::from_millis(15)));
        sim.set_stream_config(StreamConfig { keepalive: Some(SILENT_FAIL), ..StreamConfig::default() });
        let endpoints: Vec<Dp4Endpoint> = (0..ENDPOINTS).map(endpoint).collect();
        let relay = Arc::new(Mutex::new(Dp4Relay::new(Dp4RelayConfig::new(endpoints.clone()))));
        let mut config = member_config(&sim, 1000);
        let map: Arc<Mutex<dyn Dp4AddressMap>> = relay.clone();
        config.address_map = Some(Dp4AddressMapHandle::new(map));
        let session = dplay_session::dp4::Dp4Session::new(config).unwrap();
        let hub = Rc::new(RefCell::new(Hub {
            relay: relay.clone(),
            datagrams: vec![VecDeque::new(); endpoints.len()],
            streams: VecDeque::new(),
        }));
        let host = sim.add_node(
            host_at(2350),
            RelayHost {
                inner: Dp4Node::new(session),
                refused: 0,
                unreachable: 0,
                undeliverable: 0,
                relay: relay.clone(),
                hub: hub.clone(),
            },
        );
        sim.listen(host, host_at(2300));
        for (index, e) in endpoints.iter().enumerate() {
            sim.add_node(e.datagram, EndpointSocket { index, hub: hub.clone() });
            sim.listen(host, e.stream);
        }
        let now = sim.now();
        let inner = &mut sim.node_mut::<RelayHost>(host).inner;
        inner.session.host(now, HostConfig::new("relayed", APP)).unwrap();
        let mut w = Self {
            sim,
            relay,
            host,
            members: Vec::new(),
            nats: Vec::new(),
            host_player: 0,
            tries: 0,
            vanished: Vec::new(),
        };
        w.host_player = w.create(host, "host");
        w
    }

    /// `node` creates a player named `name`; its ID. A creation that times out (the 5 s
    /// Reliable API timer, MC-DPL4CS 3.1.2.2, ran out while a lost segment was sent again) is
    /// tried again, as a game would, at most twice.
    fn create(&mut self, node: NodeId, name: &str) -> u32 {
        let host = self.host;
        let outcome = |s: &Sim| {
            Self::inner_ref(s, host, node).events.iter().find_map(|e| match e {
                Dp4Event::PlayerCreated { id } => Some(Some(*id)),
                Dp4Event::PlayerCreateFailed(_) => Some(None),
                _ => None,
            })
        };
        for _ in 0..3 {
            self.inner(node).events.clear();
            let now = self.sim.now();
            self.inner(node).session.create_player(now, name).unwrap();
            // Events of commands given just now are collected at the next step: take them first.
            self.sim.run_for(Duration::ZERO);
            let deadline = self.sim.now() + STEP;
            self.sim.run_until_with(deadline, |s| outcome(s).is_some());
            if let Some(Some(id)) = outcome(&self.sim) {
                return id;
            }
        }
        panic!("{name} never has a player (seed {})", self.sim.seed())
    }

    /// A new member behind a new NAT of `nat`'s kind joins and creates a player. A join that
    /// fails (a connect whose SYNs are lost for longer than the 5 s Reliable API timer, MC-DPL4CS
    /// 3.1.2.2) is tried again from a new node, as a player would, at most twice.
    fn join(&mut self, nat: NatConfig) {
        let nat = self.sim.add_nat(nat);
        self.nats.push(nat);
        for _ in 0..3 {
            self.tries += 1;
            let n = self.tries;
            let config = member_config(&self.sim, n);
            let ip = IpAddr::V4(Ipv4Addr::new(192, 168, 1, u8::try_from(10 + n).unwrap()));
            let id = add_dp4(&mut self.sim, ip, config);
            self.sim.put_behind_nat(id, nat);
            let now = self.sim.now();
            self.sim.node_mut::<Dp4Node>(id).session.join(now, host_at(2300), None).unwrap();
            let deadline = self.sim.now() + STEP;
            let over = |s: &Sim| {
                let events = &s.node::<Dp4Node>(id).events;
                events.iter().any(|e| matches!(e, Dp4Event::Joined { .. } | Dp4Event::JoinFailed(_)))
            };
            self.sim.run_until_with(deadline, over);
            let joined =
                self.sim.node::<Dp4Node>(id).events.iter().any(|e| matches!(e, Dp4Event::Joined { .. }));
            if joined {
                let player = self.create(id, &format!("m{n}"));
                self.members.push((id, player));
                return;
            }
            self.sim.kill_streams(id);
            self.sim.isolate(id);
        }
        panic!("a member behind NAT {} never joins (seed {})", self.nats.len(), self.sim.seed());
    }

    fn inner(&mut self, id: NodeId) -> &mut Dp4Node {
        if id == self.host {
            &mut self.sim.node_mut::<RelayHost>(id).inner
        } else {
            self.sim.node_mut::<Dp4Node>(id)
        }
    }

    fn inner_ref(sim: &Sim, host: NodeId, id: NodeId) -> &Dp4Node {
        if id == host { &sim.node::<RelayHost>(id).inner } else { sim.node::<Dp4Node>(id) }
    }

    /// The host and `live` members each send `count` numbered guaranteed messages to every
    /// other's player; each must get them all, once each, in order.
    fn exchange(&mut self, live: &[(NodeId, u32)], round: u32, count: u32) {
        self.send_round(live, round, count);
        self.sim.run_for(Duration::from_secs(30));
        self.check_round(live, round, count);
    }

    /// The host and `live` members: their nodes and players.
    fn with_host(&self, live: &[(NodeId, u32)]) -> Vec<(NodeId, u32)> {
        let mut all = vec![(self.host, self.host_player)];
        all.extend_from_slice(live);
        all
    }

    /// The sending half of [`Self::exchange`], once everyone knows everyone's player.
    fn send_round(&mut self, live: &[(NodeId, u32)], round: u32, count: u32) {
        let all = self.with_host(live);
        // Everyone knows everyone's player first (the name table spreads through the host).
        let (host, deadline) = (self.host, self.sim.now() + STEP);
        let players: Vec<u32> = all.iter().map(|(_, p)| *p).collect();
        let known = self.sim.run_until_with(deadline, |s| {
            all.iter().all(|(id, _)| {
                let table = Self::inner_ref(s, host, *id).session.players();
                players.iter().all(|p| table.contains_key(p))
            })
        });
        assert!(known, "the name table never spread (seed {})", self.sim.seed());
        for (id, _) in &all {
            self.inner(*id).events.clear();
        }
        for k in 0..count {
            for (i, (from, me)) in all.iter().enumerate() {
                for (j, (_, to)) in all.iter().enumerate() {
                    if i != j {
                        let now = self.sim.now();
                        let data = format!("{round}:{me}:{k}").into_bytes();
                        self.inner(*from).session.send(now, *me, *to, &data, true).unwrap();
                    }
                }
            }
            self.sim.run_for(Duration::from_millis(25));
        }
    }

    /// The checking half of [`Self::exchange`]: every message of the round arrived once, in
    /// order.
    fn check_round(&self, live: &[(NodeId, u32)], round: u32, count: u32) {
        let (all, host) = (self.with_host(live), self.host);
        for (j, (node, to)) in all.iter().enumerate() {
            let events = &Self::inner_ref(&self.sim, host, *node).events;
            for (i, (_, sender)) in all.iter().enumerate() {
                if i == j {
                    continue;
                }
                let got: Vec<String> = events
                    .iter()
                    .filter_map(|e| match e {
                        Dp4Event::Message { from: Some(f), to: Some(t), data } if f == sender && t == to => {
                            Some(String::from_utf8_lossy(data).into_owned())
                        }
                        _ => None,
                    })
                    .collect();
                let want: Vec<String> = (0..count).map(|k| format!("{round}:{sender}:{k}")).collect();
                assert_eq!(got, want, "player {to:#x} from {sender:#x} (seed {})", self.sim.seed());
            }
        }
    }

    /// The players of `node`'s instance, as the host knows them.
    fn players_of(&self, node: NodeId) -> Vec<u32> {
        let system = self.sim.node::<Dp4Node>(node).session.system_player().expect("a member has joined");
        let table = self.sim.node::<RelayHost>(self.host).inner.session.players();
        table.values().filter(|p| p.system_player_id == system).map(|p| p.id).collect()
    }

    /// Member `gone` vanishes without leaving, under loss, while the others exchange round
    /// `round`: its process killed (its connections reset, its sockets closed) or its cable
    /// pulled (cut from everyone; nothing closes, its connections stall and fail after
    /// [`SILENT_FAIL`]). The host removes it with all its players within the documented
    /// deadline (docs/decisions.md, "Noticing a killed process" and "A silent peer"), every
    /// other member is told (DELETEPLAYER, MC-DPL4CS 3.1.5.14, for each player), its relay
    /// endpoint is freed, and the round among the others loses, repeats or reorders nothing.
    fn vanish(&mut self, gone: NodeId, killed: bool, round: u32) {
        let seed = self.sim.seed();
        let players = self.players_of(gone);
        assert_eq!(players.len(), 2, "a system player and one player (seed {seed})");
        let live: Vec<(NodeId, u32)> = self.members.iter().copied().filter(|(id, _)| *id != gone).collect();
        let start = self.sim.now();
        if killed {
            self.sim.kill(gone);
        } else {
            self.sim.isolate(gone);
        }
        self.send_round(&live, round, 8);
        let deadline = start + if killed { KILLED_GONE } else { 2 * PING_PERIOD };
        let host = self.host;
        let removed = |s: &Sim| {
            let table = s.node::<RelayHost>(host).inner.session.players();
            players.iter().all(|p| !table.contains_key(p))
        };
        assert!(
            self.sim.run_until_with(deadline, removed),
            "the host kept a vanished member (killed: {killed}) past {:?} (seed {seed})",
            deadline - start
        );
        let took = self.sim.now() - start;
        // Every other member is told, one DELETEPLAYER a player.
        let told = |s: &Sim| {
            live.iter().all(|(id, _)| {
                let node = s.node::<Dp4Node>(*id);
                players.iter().all(|p| {
                    !node.session.players().contains_key(p)
                        && node.events.iter().any(|e| matches!(e, Dp4Event::PlayerLeft { id } if id == p))
                })
            })
        };
        assert!(self.sim.run_until_with(self.sim.now() + STEP, told), "a member was not told (seed {seed})");
        let s = self.relay.lock().unwrap().stats();
        assert_eq!(s.endpoints_held, live.len(), "the vanished member's endpoint is freed (seed {seed})");
        assert!(s.members.iter().all(|m| !players.contains(&m.dpnid.0)), "seed {seed}");
        self.sim.run_for(Duration::from_secs(30));
        self.check_round(&live, round, 8);
        self.members.retain(|(id, _)| *id != gone);
        self.vanished.push((gone, took));
    }
}

fn relayed_session(seed: u64) {
    let loss = [0.0, 0.05, 0.15][(seed % 3) as usize];
    let mut w = World::new(seed, loss);
    let public = |last| IpAddr::V4(Ipv4Addr::new(198, 51, 100, last));
    for (k, symmetric) in [false, false, true].into_iter().enumerate() {
        let ip = public(u8::try_from(k + 1).unwrap());
        w.join(if symmetric { NatConfig::symmetric(ip) } else { NatConfig::port_restricted_cone(ip) });
    }
    let live = w.members.clone();
    w.exchange(&live, 1, 8);

    assert_eq!(w.sim.node::<RelayHost>(w.host).refused, 0, "a member's connection refused (seed {seed})");

    // One vanishes without leaving: killed, or its cable pulled (every kind at every loss
    // over six seeds).
    let killed = (seed / 3).is_multiple_of(2);
    w.vanish(live[(seed % 3) as usize].0, killed, 2);
    assert_eq!(w.sim.node::<RelayHost>(w.host).refused, 0, "a member's connection refused (seed {seed})");

    // Another leaves and its process ends; a new member joins behind a symmetric NAT; the
    // others go on.
    let (gone, _) = w.members[(seed % 2) as usize];
    w.sim.node_mut::<Dp4Node>(gone).session.leave().unwrap();
    w.sim.run_for(Duration::from_secs(5));
    w.sim.kill(gone);
    w.join(NatConfig::symmetric(public(9)));
    let live: Vec<(NodeId, u32)> = w.members.iter().copied().filter(|(id, _)| *id != gone).collect();
    w.exchange(&live, 3, 8);

    // No datagram from one member's network to another's; no connect aimed at a NAT.
    let nodes: Vec<NodeId> =
        w.members.iter().map(|(id, _)| *id).chain(w.vanished.iter().map(|(id, _)| *id)).collect();
    for a in &nodes {
        for b in &nodes {
            assert_eq!(w.sim.stats(*a, *b).sent, 0, "a datagram went member to member (seed {seed})");
        }
    }
    let streams = w.sim.stream_stats();
    assert_eq!(streams.nat_dropped, 0, "a connect was aimed at a NAT (seed {seed}): {streams:?}");
    for nat in &w.nats {
        assert_eq!(w.sim.nat_filtered(*nat), 0, "a datagram toward a NAT it never opened (seed {seed})");
    }
    let s = w.relay.lock().unwrap().stats();
    assert_eq!(s.endpoints_held, 2, "the leaver's endpoint was freed (seed {seed})");
    assert!(s.members.iter().all(|m| m.datagrams_from > 0), "every member relayed (seed {seed})");

    // A stranger on the public side gets nothing from any endpoint, over TCP or UDP; its
    // connections are closed and its datagrams counted.
    let (before, refused) = (s.strangers, w.sim.node::<RelayHost>(w.host).refused);
    let stranger = add_windows(&mut w.sim, IpAddr::V4(Ipv4Addr::new(192, 0, 2, 99)), 2300, 2350);
    for i in 0..ENDPOINTS {
        let e = endpoint(i);
        let stranger = w.sim.node_mut::<WindowsPeer>(stranger);
        stranger.send_tcp(e.stream, message(2300, 0x05, &dwords(&[0x9])));
        stranger.send_udp(e.datagram, player_message_udp(1, 2, b"let me in"));
    }
    w.sim.run_for(STEP);
    assert!(w.sim.node::<WindowsPeer>(stranger).received.is_empty(), "seed {seed}");
    assert!(w.relay.lock().unwrap().stats().strangers >= before + u64::from(ENDPOINTS));
    assert_eq!(w.sim.node::<RelayHost>(w.host).refused, refused + u64::from(ENDPOINTS), "seed {seed}");
}

#[test]
fn dp4_relayed_sessions_behind_nats() {
    run_seeds(6, relayed_session);
}
