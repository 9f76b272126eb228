//! DirectPlay 4 endpoints ([`Dp4Session`]) wired together in memory, with every datagram and
//! every TCP stream write recorded as a [`Capture`], so that a test can replay the traffic
//! into a packet capture (MC-DPL4CS 2.1). [`scenarios`] drives them through whole sessions.
//!
//! Node `i` has its own IPv4 address; its TCP listener and UDP game socket are the ports of
//! its [`Dp4Config`] (`stream_addr`, `datagram_addr`), and a host also hears the enumeration
//! port [`ENUM_PORT`]. A UDP transmit goes to the node with the destination address (to every
//! other node for 255.255.255.255); a TCP transmit goes over the connection the sender keeps
//! to that listener, opened on first use from an ephemeral port, as the runtime does. A TCP
//! transmit to a listener no node has is reported back with
//! [`Dp4Session::handle_unreachable`].
//!
//! To add a scenario, write a
//! [`scenarios::Scenario`] (it builds its own [`Dp4Net`], so it may choose the nodes'
//! configurations, drives it and checks the outcome) and list it in [`scenarios::ALL`]: the
//! tshark conformance test (`tests/tests/tshark_dp4_sessions.rs`) then checks its traffic
//! frame by frame, and its list of commands sent must name any new command.

pub mod scenarios;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_session::dp4::{
    ConnId, Dp4Config, Dp4Event, Dp4Session, Dp4Transmit, ENUM_PORT, EnumRequest, HostConfig, Via,
};

/// Where a TCP write sits in its connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamPos {
    /// The connection (one per sender and listener, opened on first use).
    pub conn: ConnId,
    /// Bytes the sender wrote on this connection before this write; 0 for the first write,
    /// which a capture precedes with the connection's handshake.
    pub offset: u64,
}

/// One datagram or one TCP write, as it would appear on the wire (MC-DPL4CS 2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// The sending node.
    pub from: usize,
    /// Source address: the sender's UDP game socket, or its end of the TCP connection.
    pub src: SocketAddrV4,
    /// Destination: a UDP socket (or broadcast), or the TCP listener.
    pub dst: SocketAddrV4,
    /// UDP or TCP.
    pub via: Via,
    /// For TCP: the connection and offset.
    pub stream: Option<StreamPos>,
    /// One whole DirectPlay 4 message (or player message).
    pub bytes: Vec<u8>,
}

/// First ephemeral port of the TCP connections nodes open.
pub const EPHEMERAL_PORT: u16 = 49152;

/// How many delivery rounds [`Dp4Net::run`] allows before calling the network stuck.
const MAX_ROUNDS: usize = 10_000;

/// A set of [`Dp4Session`]s on a simulated LAN.
#[derive(Debug)]
pub struct Dp4Net {
    /// The endpoints, by node index.
    pub nodes: Vec<Dp4Session>,
    /// Node addresses, by node index.
    pub ips: Vec<Ipv4Addr>,
    /// Every event each node reported, in order.
    pub events: Vec<Vec<Dp4Event>>,
    /// Everything sent, in order.
    pub captures: Vec<Capture>,
    /// Virtual time.
    pub now: Instant,
    /// Links `(from, to)` whose traffic is lost after it is captured at the sender.
    pub cut: BTreeSet<(usize, usize)>,
    /// Indexes into `captures` of datagrams lost after they are captured at the sender.
    pub lose: BTreeSet<usize>,
    /// Open TCP connections: (sender, listener) to (id, bytes written).
    conns: BTreeMap<(usize, SocketAddrV4), (ConnId, u64)>,
}

/// Node `i`'s address on the default LAN: 192.168.0.(10 + i).
pub fn lan_ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(192, 168, 0, u8::try_from(10 + i).unwrap_or(u8::MAX))
}

/// Node `i`'s configuration on the default LAN: TCP listener 2300 and UDP 2350 with address
/// 0 in the SockAddrs, as Windows writes them (Wine's dplayx tests), seed `100 + i`.
pub fn lan_config(i: usize) -> Dp4Config {
    let mut config = Dp4Config::default().with_seed(100 + i as u64);
    config.stream_addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2300);
    config.datagram_addr = SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2350);
    config
}

impl Dp4Net {
    /// `n` nodes on the default LAN ([`lan_ip`], [`lan_config`]), time starting at `start`.
    pub fn lan(n: usize, start: Instant) -> Result<Self, String> {
        Self::new((0..n).map(|i| (lan_ip(i), lan_config(i))).collect(), start)
    }

    /// Nodes with the given addresses and configurations.
    pub fn new(nodes: Vec<(Ipv4Addr, Dp4Config)>, start: Instant) -> Result<Self, String> {
        let mut sessions = Vec::new();
        let mut ips = Vec::new();
        for (ip, config) in nodes {
            sessions.push(Dp4Session::new(config).map_err(|e| format!("node config: {e:?}"))?);
            ips.push(ip);
        }
        Ok(Self {
            events: vec![Vec::new(); sessions.len()],
            nodes: sessions,
            ips,
            captures: Vec::new(),
            now: start,
            cut: BTreeSet::new(),
            lose: BTreeSet::new(),
            conns: BTreeMap::new(),
        })
    }

    /// Node `i`'s TCP listener.
    pub fn stream_addr(&self, i: usize) -> Option<SocketAddrV4> {
        Some(SocketAddrV4::new(*self.ips.get(i)?, self.nodes.get(i)?.config().stream_addr.port()))
    }

    /// Node `i`'s UDP game socket.
    pub fn datagram_addr(&self, i: usize) -> Option<SocketAddrV4> {
        Some(SocketAddrV4::new(*self.ips.get(i)?, self.nodes.get(i)?.config().datagram_addr.port()))
    }

    fn node(&mut self, i: usize) -> Result<&mut Dp4Session, String> {
        self.nodes.get_mut(i).ok_or_else(|| format!("no node {i}"))
    }

    /// Node `i` hosts `config`.
    pub fn host(&mut self, i: usize, config: HostConfig) -> Result<(), String> {
        let now = self.now;
        self.node(i)?.host(now, config).map_err(|e| format!("node {i} host: {e}"))?;
        self.run()
    }

    /// Node `i` enumerates, by broadcast when `to` is `None`, and the replies arrive.
    pub fn enumerate(&mut self, i: usize, to: Option<usize>, request: &EnumRequest) -> Result<(), String> {
        let now = self.now;
        let to = match to {
            Some(j) => Some(IpAddr::V4(*self.ips.get(j).ok_or_else(|| format!("no node {j}"))?)),
            None => None,
        };
        self.node(i)?.enum_sessions(now, to, request);
        self.run()
    }

    /// Node `i` joins the session node `host` runs; the exchange runs to its end.
    pub fn join(&mut self, i: usize, host: usize, password: Option<&str>) -> Result<(), String> {
        let now = self.now;
        let listener = self.stream_addr(host).ok_or_else(|| format!("no node {host}"))?;
        self.node(i)?
            .join(now, SocketAddr::V4(listener), password)
            .map_err(|e| format!("node {i} join: {e}"))?;
        self.run()
    }

    /// Node `i` creates a local player named `name`; its ID, or `None` when refused.
    pub fn create_player(&mut self, i: usize, name: &str) -> Result<Option<u32>, String> {
        let now = self.now;
        let seen = self.events.get(i).map_or(0, Vec::len);
        self.node(i)?.create_player(now, name).map_err(|e| format!("node {i} create_player: {e}"))?;
        self.run()?;
        let new = self.events.get(i).and_then(|e| e.get(seen..)).unwrap_or_default();
        Ok(new.iter().find_map(|e| match e {
            Dp4Event::PlayerCreated { id } => Some(*id),
            _ => None,
        }))
    }

    /// Node `i` sends `data` from its player `from` to `to`.
    pub fn send(
        &mut self,
        i: usize,
        from: u32,
        to: u32,
        data: &[u8],
        guaranteed: bool,
    ) -> Result<(), String> {
        let now = self.now;
        self.node(i)?.send(now, from, to, data, guaranteed).map_err(|e| format!("node {i} send: {e}"))?;
        self.run()
    }

    /// Node `i` leaves its session.
    pub fn leave(&mut self, i: usize) -> Result<(), String> {
        self.node(i)?.leave().map_err(|e| format!("node {i} leave: {e}"))?;
        self.run()
    }

    /// Whether node `i` reported an event matching `pred`.
    pub fn saw(&self, i: usize, pred: impl Fn(&Dp4Event) -> bool) -> bool {
        self.events.get(i).is_some_and(|e| e.iter().any(pred))
    }

    /// Advances time by `d`, running each timer when it falls due and delivering what follows.
    pub fn advance(&mut self, d: Duration) -> Result<(), String> {
        let end = self.now + d;
        loop {
            let next = self.nodes.iter().filter_map(Dp4Session::poll_timeout).min();
            match next {
                Some(at) if at <= end => {
                    self.now = self.now.max(at);
                    let now = self.now;
                    for node in &mut self.nodes {
                        if node.poll_timeout().is_some_and(|t| t <= now) {
                            node.handle_timeout(now);
                        }
                    }
                    self.run()?;
                }
                _ => break,
            }
        }
        self.now = end;
        Ok(())
    }

    /// Delivers every transmit, and every one that follows, until the network is quiet.
    pub fn run(&mut self) -> Result<(), String> {
        for _ in 0..MAX_ROUNDS {
            let mut queue = Vec::new();
            for (i, node) in self.nodes.iter_mut().enumerate() {
                while let Some(t) = node.poll_transmit() {
                    queue.push((i, t));
                }
                while let Some(e) = node.poll_event() {
                    if let Some(events) = self.events.get_mut(i) {
                        events.push(e);
                    }
                }
            }
            if queue.is_empty() {
                return Ok(());
            }
            for (from, t) in queue {
                self.deliver(from, t)?;
            }
        }
        Err(format!("the network never went quiet after {MAX_ROUNDS} rounds"))
    }

    fn deliver(&mut self, from: usize, t: Dp4Transmit) -> Result<(), String> {
        let SocketAddr::V4(dst) = t.to else { return Err(format!("node {from} sent to {}", t.to)) };
        match t.via {
            Via::Udp => self.deliver_udp(from, dst, t.bytes),
            Via::Tcp => self.deliver_tcp(from, dst, t.bytes),
        }
    }

    fn deliver_udp(&mut self, from: usize, dst: SocketAddrV4, bytes: Vec<u8>) -> Result<(), String> {
        let src = self.datagram_addr(from).ok_or_else(|| format!("no node {from}"))?;
        let targets: Vec<usize> = (0..self.nodes.len())
            .filter(|&j| j != from)
            .filter(|&j| {
                let hears =
                    |port: u16| port == ENUM_PORT || Some(port) == self.datagram_addr(j).map(|a| a.port());
                (*dst.ip() == Ipv4Addr::BROADCAST || self.ips.get(j) == Some(dst.ip())) && hears(dst.port())
            })
            .collect();
        let now = self.now;
        let lost = self.lose.contains(&self.captures.len());
        for j in targets.into_iter().filter(|&j| !lost && !self.cut.contains(&(from, j))) {
            if let Some(node) = self.nodes.get_mut(j) {
                node.handle_udp(now, SocketAddr::V4(src), &bytes);
            }
        }
        self.captures.push(Capture { from, src, dst, via: Via::Udp, stream: None, bytes });
        Ok(())
    }

    fn deliver_tcp(&mut self, from: usize, dst: SocketAddrV4, bytes: Vec<u8>) -> Result<(), String> {
        let now = self.now;
        let Some(to) = (0..self.nodes.len()).find(|&j| self.stream_addr(j) == Some(dst)) else {
            self.node(from)?.handle_unreachable(now, SocketAddr::V4(dst));
            return Ok(());
        };
        let next_id = ConnId::try_from(self.conns.len()).unwrap_or(ConnId::MAX).saturating_add(1);
        let (conn, written) = self.conns.entry((from, dst)).or_insert((next_id, 0));
        let stream = StreamPos { conn: *conn, offset: *written };
        *written += bytes.len() as u64;
        let ip = *self.ips.get(from).ok_or_else(|| format!("no node {from}"))?;
        let port = u16::try_from(stream.conn).ok().and_then(|c| EPHEMERAL_PORT.checked_add(c));
        let src = SocketAddrV4::new(ip, port.ok_or("too many TCP connections")?);
        self.captures.push(Capture {
            from,
            src,
            dst,
            via: Via::Tcp,
            stream: Some(stream),
            bytes: bytes.clone(),
        });
        if self.cut.contains(&(from, to)) {
            return Ok(());
        }
        let result = self.node(to)?.handle_tcp(now, stream.conn, SocketAddr::V4(src), &bytes);
        result.map(|_| ()).map_err(|e| format!("node {to} rejected the stream from node {from}: {e}"))
    }
}
