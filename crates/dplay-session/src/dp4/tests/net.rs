//! A tiny in-memory network: node `i` is at 10.0.0.(i+1), TCP listener 2300, UDP game port
//! 2350; each node's transmits are handed to the node with the destination IP.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_wire::dp4::message::Dp4Datagram;
use dplay_wire::dp4::session::SessionFlags;
use uuid::Uuid;

use crate::dp4::{Dp4Config, Dp4Event, Dp4Session, EnumRequest, HostConfig, Via};

pub(crate) const APP: Uuid = Uuid::from_u128(0xA052A50B_FFE0_CF11_9C4E_00A0C905425E);
pub(crate) const STREAM_PORT: u16 = 2300;
pub(crate) const DGRAM_PORT: u16 = 2350;

#[allow(clippy::disallowed_methods)] // tests need one real starting instant; time then advances by hand
pub(crate) fn start() -> Instant {
    <Instant>::now()
}

pub(crate) fn ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, u8::try_from(i + 1).unwrap())
}

pub(crate) fn stream(i: usize) -> SocketAddr {
    SocketAddr::new(IpAddr::V4(ip(i)), STREAM_PORT)
}

pub(crate) fn config(i: usize) -> Dp4Config {
    let mut config = Dp4Config::default().with_seed(100 + i as u64);
    config.stream_addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, STREAM_PORT);
    config.datagram_addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, DGRAM_PORT);
    config
}

/// One line of the traffic log: from, to, transport, message name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) from: usize,
    pub(crate) to: usize,
    pub(crate) via: Via,
    pub(crate) name: &'static str,
    pub(crate) bytes: Vec<u8>,
}

pub(crate) struct Net {
    pub(crate) nodes: Vec<Dp4Session>,
    pub(crate) events: Vec<Vec<Dp4Event>>,
    pub(crate) log: Vec<Sent>,
    pub(crate) now: Instant,
    /// Links (from, to) whose traffic is lost.
    pub(crate) cut: BTreeSet<(usize, usize)>,
    /// Nodes whose process was killed: they run no more, their datagrams are lost and a
    /// connect to their listener is refused (the sender hears `handle_unreachable`).
    pub(crate) killed: BTreeSet<usize>,
    /// Messages (sender, name) that are lost: a peer that never answers PING, say.
    pub(crate) lost: BTreeSet<(usize, &'static str)>,
}

fn name(bytes: &[u8], via: Via) -> &'static str {
    if via == Via::Udp && bytes.get(20..24) != Some(b"play") {
        return "PLAYERMESSAGE";
    }
    match Dp4Datagram::parse(bytes, true).or_else(|_| Dp4Datagram::parse(bytes, false)) {
        Ok(Dp4Datagram::System(m)) => m.name(),
        Ok(Dp4Datagram::Player(_)) => "PLAYERMESSAGE",
        Err(_) => "UNPARSED",
    }
}

impl Net {
    pub(crate) fn new(n: usize) -> Self {
        Self {
            nodes: (0..n).map(|i| Dp4Session::new(config(i)).unwrap()).collect(),
            events: vec![Vec::new(); n],
            log: Vec::new(),
            now: start(),
            cut: BTreeSet::new(),
            killed: BTreeSet::new(),
            lost: BTreeSet::new(),
        }
    }

    /// Node 0 hosts `cfg`.
    pub(crate) fn host(&mut self, cfg: HostConfig) {
        let now = self.now;
        self.nodes[0].host(now, cfg).unwrap();
        self.run();
    }

    /// Node `i` joins node 0's session and the exchange runs to the end.
    pub(crate) fn join(&mut self, i: usize, password: Option<&str>) {
        let now = self.now;
        self.nodes[i].join(now, stream(0), password).unwrap();
        self.run();
    }

    pub(crate) fn enumerate(&mut self, i: usize, request: &EnumRequest) {
        let now = self.now;
        self.nodes[i].enum_sessions(now, None, request);
        self.run();
    }

    /// Delivers every transmit until the network is quiet.
    pub(crate) fn run(&mut self) {
        for _ in 0..1000 {
            let mut queue = Vec::new();
            for (i, node) in self.nodes.iter_mut().enumerate().filter(|(i, _)| !self.killed.contains(i)) {
                while let Some(t) = node.poll_transmit() {
                    queue.push((i, t));
                }
                while let Some(e) = node.poll_event() {
                    self.events[i].push(e);
                }
            }
            if queue.is_empty() {
                return;
            }
            for (from, t) in queue {
                let targets: Vec<usize> = if t.to.ip() == IpAddr::V4(Ipv4Addr::BROADCAST) {
                    (0..self.nodes.len()).filter(|&j| j != from).collect()
                } else {
                    (0..self.nodes.len()).filter(|&j| IpAddr::V4(ip(j)) == t.to.ip()).collect()
                };
                for to in targets {
                    self.log.push(Sent {
                        from,
                        to,
                        via: t.via,
                        name: name(&t.bytes, t.via),
                        bytes: t.bytes.clone(),
                    });
                    if self.cut.contains(&(from, to)) || self.lost.contains(&(from, name(&t.bytes, t.via))) {
                        continue;
                    }
                    let now = self.now;
                    if self.killed.contains(&to) {
                        if t.via == Via::Tcp {
                            self.nodes[from].handle_unreachable(now, t.to);
                        }
                        continue;
                    }
                    match t.via {
                        Via::Udp => {
                            let src = SocketAddr::new(IpAddr::V4(ip(from)), DGRAM_PORT);
                            self.nodes[to].handle_udp(now, src, &t.bytes);
                        }
                        Via::Tcp => {
                            let src =
                                SocketAddr::new(IpAddr::V4(ip(from)), 40000 + u16::try_from(from).unwrap());
                            let conn = (from * 1000 + to) as u64;
                            self.nodes[to].handle_tcp(now, conn, src, &t.bytes).unwrap();
                        }
                    }
                }
            }
        }
        panic!("the network never went quiet");
    }

    /// Advances time by `d`, running every timer that falls due, a second at a time.
    pub(crate) fn advance(&mut self, d: Duration) {
        let end = self.now + d;
        while self.now < end {
            self.now = (self.now + Duration::from_secs(1)).min(end);
            let now = self.now;
            for (_, node) in self.nodes.iter_mut().enumerate().filter(|(i, _)| !self.killed.contains(i)) {
                if node.poll_timeout().is_some_and(|t| t <= now) {
                    node.handle_timeout(now);
                }
            }
            self.run();
        }
    }

    /// Takes the events node `i` reported so far.
    pub(crate) fn take(&mut self, i: usize) -> Vec<Dp4Event> {
        std::mem::take(&mut self.events[i])
    }

    /// Names of the messages sent, from the log, as "a->b NAME".
    pub(crate) fn trace(&self) -> Vec<String> {
        self.log.iter().map(|s| format!("{}->{} {:?} {}", s.from, s.to, s.via, s.name)).collect()
    }

    /// The log since the last call, as names.
    pub(crate) fn names(&mut self) -> Vec<&'static str> {
        let names = self.log.iter().map(|s| s.name).collect();
        self.log.clear();
        names
    }
}

/// A host config for application [`APP`].
pub(crate) fn session(name: &str) -> HostConfig {
    HostConfig::new(name, APP)
}

/// Node 0 hosts "Test" (with `edit` applied); all other nodes join in turn.
pub(crate) fn session_of(n: usize, edit: impl FnOnce(&mut HostConfig)) -> Net {
    session_in(n, n, edit)
}

/// `nodes` nodes; node 0 hosts "Test" (with `edit` applied); nodes 1..`joined` join in turn.
pub(crate) fn session_in(nodes: usize, joined: usize, edit: impl FnOnce(&mut HostConfig)) -> Net {
    let mut net = Net::new(nodes);
    let mut cfg = session("Test");
    edit(&mut cfg);
    net.host(cfg);
    for i in 1..joined {
        net.join(i, None);
    }
    net
}

/// The player ID of the event `PlayerCreated` node `i` reported last.
#[track_caller]
pub(crate) fn created(net: &mut Net, i: usize, name: &str) -> u32 {
    let now = net.now;
    net.nodes[i].create_player(now, name).unwrap();
    net.run();
    let events = net.take(i);
    events
        .iter()
        .find_map(|e| match e {
            Dp4Event::PlayerCreated { id } => Some(*id),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no PlayerCreated in {events:?}"))
}

/// Two joined instances of a session with `flags`, one application player each, their events
/// and the log cleared: (net, host's player, member's).
pub(crate) fn pair(flags: SessionFlags) -> (Net, u32, u32) {
    let mut net = session_of(2, |c| c.flags = flags);
    let a = created(&mut net, 0, "alice");
    let b = created(&mut net, 1, "bob");
    net.take(0);
    net.take(1);
    net.log.clear();
    (net, a, b)
}

/// Node `i` sends `data` from its player `from` to `to`; then the network runs.
#[track_caller]
pub(crate) fn send(net: &mut Net, i: usize, from: u32, to: u32, data: &[u8], guaranteed: bool) {
    let now = net.now;
    net.nodes[i].send(now, from, to, data, guaranteed).unwrap();
    net.run();
}
