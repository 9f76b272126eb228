//! A DirectPlay 4 host's relay for members behind NAT, sans-IO (issue 23; docs/relay.md,
//! "DirectPlay 4").
//!
//! A DirectPlay 4 peer-to-peer session is a mesh too: every instance sends its guaranteed
//! messages over TCP to each other instance's listener and the others over UDP to its game
//! socket, both named in its system player's SPData (MC-DPL4CS 2.2.2), and answers each
//! message at the listener its header's SockAddr names (2.2.6). Behind NAT neither is
//! reachable. The relay gives each member `M` an endpoint `R(M)`, a TCP listener and a UDP
//! socket on the host, which the host's session hands out as `M`'s SPData (through
//! [`dplay_session::dp4::Dp4AddressMap`], which [`Dp4Relay`] implements).
//!
//! - **TCP.** A message from member `S` on a connection to `R(M)` goes to `M` over a
//!   connection `M` itself opened to the host (to its session's listener or to any endpoint):
//!   a NAT refuses connections the host opens, never the answers on one the member opened.
//!   Its header's SockAddr becomes `R(S)`'s listener, and the SPData of a CREATEPLAYER or
//!   CREATEPLAYERVERIFY (2.2.21, 2.2.22) `R(S)`'s addresses, so `M` answers `S` and reaches
//!   `S`'s new players through the relay; nothing else changes. The host's own session
//!   answers a member the same way ([`Dp4Relay::route_stream`]).
//! - **UDP.** A datagram from `S` at `R(M)` goes to `M` from `R(S)`, at the address `M` sent
//!   from to `R(S)` (an endpoint never sends first); the host's own datagrams to a member go
//!   to the address it sent from to the host's game socket ([`Dp4Relay::route_datagram`]).
//! - **Who sent it** (`dp4::sender`). A member is known by what the relay sees: the connection
//!   it opened (its first message says who opened it), the UDP source it sent from to each
//!   endpoint, and the public IP and header port of both. The header is a hint: two members
//!   behind one NAT that use the same listener port write the same one, and then the IDs the
//!   message names as its sender (idFrom, a PING's IDFrom, a CREATEPLAYER's system player)
//!   tell them apart, checked against the public IP. The host's session knows the second
//!   such member at another port of that IP (the public port of the connection it joined
//!   on), which the relay writes in the headers and SPData the session reads from it
//!   ([`Dp4Relay::handle_stream`]), so the session, which answers a member at its header's
//!   port (2.2.6), holds them apart too.
//! - Only members, only toward members: anything else is dropped and counted.

mod identify;
mod sender;
mod session_conn;

use std::collections::{HashMap, VecDeque};
use std::net::{SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_session::dp4::table::sp_data;
use dplay_session::dp4::{Dp4AddressMap, StreamFramer};
use dplay_wire::Writer;
use dplay_wire::budget::{Charge, MemoryBudget};
use dplay_wire::dp4::header::{MAX_MESSAGE_SIZE, SockAddrIn};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::log_limit::LogLimit;

use sender::{CREATE_PLAYER, CREATE_PLAYER_VERIFY};

use crate::outbox::{Outbox, Sender};
use crate::rate::Bucket;
use crate::{MemberStats, RateLimit, RelayStats};

/// How often one source's dropped messages are logged at most.
const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// At most this many application players' owners are kept per endpoint (a member creates
/// a few; docs/limits.md).
const OWNED_PER_ENDPOINT: usize = 64;

/// One TCP connection, as the runtime numbers it.
pub type ConnId = u64;

/// One relay endpoint's public addresses: its TCP listener and its UDP socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dp4Endpoint {
    /// The TCP listener, written as a member's stream address.
    pub stream: SocketAddr,
    /// The UDP socket, written as a member's datagram address.
    pub datagram: SocketAddr,
}

/// How a [`Dp4Relay`] is set up.
#[derive(Debug, Clone)]
pub struct Dp4RelayConfig {
    /// The endpoints, by index; a member takes a free one when admitted.
    pub endpoints: Vec<Dp4Endpoint>,
    /// Each member's rate cap.
    pub rate: RateLimit,
    /// At most this many messages waiting to be sent.
    pub max_queue: usize,
    /// The host's memory budget, which the waiting messages and partial TCP messages are
    /// charged to (docs/limits.md).
    pub budget: MemoryBudget,
}

impl Dp4RelayConfig {
    /// Endpoints at `endpoints`, default caps, no memory budget of its own.
    pub fn new(endpoints: Vec<Dp4Endpoint>) -> Self {
        Self { endpoints, rate: RateLimit::default(), max_queue: 4096, budget: MemoryBudget::unlimited() }
    }
}

/// Where a relayed message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dp4Forward {
    /// On this connection, which the receiver opened to the host from `peer`.
    Stream {
        /// The connection.
        conn: ConnId,
        /// Its remote end.
        peer: SocketAddr,
    },
    /// A datagram from endpoint `endpoint`'s UDP socket to `to`.
    Datagram {
        /// The endpoint's index.
        endpoint: usize,
        /// The receiver's latched address there.
        to: SocketAddr,
    },
}

/// Why a connection to an endpoint is to be closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dp4StreamError {
    /// Its bytes are not DirectPlay 4 messages (MC-DPL4CS 2.2.6).
    Framing,
    /// It comes from no member, or to an endpoint no member holds.
    Stranger,
    /// Its partial message does not fit the memory budget.
    OverBudget,
}

/// What became of a read on a connection ([`Dp4Relay::handle_stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dp4StreamRead {
    /// An endpoint's connection: its whole messages were relayed.
    Relayed,
    /// The session's: it gets the bytes as read.
    Session,
    /// The session's: it gets the bytes the relay wrote to `out` instead (the ports of a
    /// member known at another port, or nothing yet while the relay reads the first
    /// message's start); `held`: the relay holds part of a message.
    SessionRewritten {
        /// The relay holds part of a message.
        held: bool,
    },
}

impl std::fmt::Display for Dp4StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Framing => "not DirectPlay 4 messages",
            Self::Stranger => "not a member of the relayed session",
            Self::OverBudget => "a partial message over the memory budget",
        })
    }
}

#[derive(Debug)]
struct Member {
    /// Its listener as the host's session answers it: its public IP and the port its
    /// headers name, or, when a member there already has that one, another port (the public
    /// port of the connection it joined on) that the relay writes for it.
    stream: SocketAddr,
    /// The listener port its headers name.
    header_port: u16,
    /// Its game socket, as the host's session sends to it.
    datagram: SocketAddr,
    endpoint: usize,
    sender: Sender,
}

#[derive(Debug, Default)]
struct Endpoint {
    owner: Option<u32>,
    freed: u64,
    /// UDP: who latched where.
    by_source: HashMap<SocketAddr, u32>,
    by_member: HashMap<u32, SocketAddr>,
}

/// What the relay does with a connection the session's listener accepted.
#[derive(Debug)]
enum Mode {
    /// It reads the first message's start (up to [`sender::HINT_LEN`] bytes) to tell who opened it.
    Undecided(Vec<u8>),
    /// The session reads it as it comes.
    AsRead,
    /// Its member is known to the session at this port: the relay frames it and writes the
    /// port in each message ([`sender::set_ports`]).
    Ports(u16),
}

/// A connection to the host: the session's listener (`endpoint` `None`) or an endpoint's.
#[derive(Debug)]
struct Conn {
    endpoint: Option<usize>,
    /// Its member's listener as the session knows it, once its first message told who.
    sender: Option<SocketAddr>,
    /// The listener port its headers name.
    header_port: u16,
    /// Its remote end, once `sender` is known.
    peer: Option<SocketAddr>,
    mode: Mode,
    framer: StreamFramer,
    charge: Charge,
}

/// The DirectPlay 4 relay: endpoints, members, the connections they opened, and what waits.
#[derive(Debug)]
pub struct Dp4Relay {
    cfg: Dp4RelayConfig,
    endpoints: Vec<Endpoint>,
    members: HashMap<u32, Member>,
    frees: u64,
    conns: HashMap<ConnId, Conn>,
    /// The connection the host answers each member (by its listener as the session knows it)
    /// on, and its remote end: the newest it opened to the session's listener, else the first
    /// of those to endpoints still open.
    back: HashMap<SocketAddr, (ConnId, SocketAddr)>,
    /// Members' listeners whose last connection closed ([`Self::poll_lost`]).
    lost: VecDeque<SocketAddr>,
    /// The listeners of the members that left last, at most one per endpoint: the host opens
    /// no connection to them either ([`Self::stream_unreachable`]).
    left: VecDeque<SocketAddr>,
    /// Where each member's datagrams to the host's game socket come from.
    game_sources: HashMap<u32, SocketAddr>,
    /// The system player of each application player a member's CREATEPLAYER named.
    owners: HashMap<u32, u32>,
    outbox: Outbox<Dp4Forward>,
    stats: RelayStats,
    log: LogLimit,
}

impl Dp4Relay {
    /// A relay with every endpoint free.
    pub fn new(cfg: Dp4RelayConfig) -> Self {
        let endpoints = cfg.endpoints.iter().map(|_| Endpoint::default()).collect();
        let outbox = Outbox::new(&cfg.budget, cfg.max_queue, cfg.rate);
        Self {
            cfg,
            endpoints,
            members: HashMap::new(),
            frees: 0,
            conns: HashMap::new(),
            back: HashMap::new(),
            lost: VecDeque::new(),
            left: VecDeque::new(),
            game_sources: HashMap::new(),
            owners: HashMap::new(),
            outbox,
            stats: RelayStats::default(),
            log: LogLimit::default(),
        }
    }

    /// Charges what waits from now on to `budget` (the host session's).
    pub fn set_budget(&mut self, budget: &MemoryBudget) {
        self.outbox.set_budget(budget);
        self.cfg.budget = budget.clone();
    }

    /// The endpoints' public addresses, by index.
    pub fn endpoints(&self) -> &[Dp4Endpoint] {
        &self.cfg.endpoints
    }

    /// The instance of system player `player`, answered at `stream` and `datagram`, joins: it
    /// takes the free endpoint freed longest ago, whose addresses are returned; `None` when
    /// every one is taken (the others then get its own).
    pub fn admit(&mut self, player: u32, stream: SocketAddr, datagram: SocketAddr) -> Option<Dp4Endpoint> {
        self.remove(player);
        let (index, _) = self
            .endpoints
            .iter()
            .enumerate()
            .filter(|(_, e)| e.owner.is_none())
            .min_by_key(|(_, e)| e.freed)?;
        let endpoint = *self.cfg.endpoints.get(index)?;
        self.endpoints.get_mut(index)?.owner = Some(player);
        let header_port = self
            .back
            .get(&stream)
            .and_then(|(c, _)| self.conns.get(c))
            .map_or(stream.port(), |c| c.header_port);
        let stats = MemberStats {
            dpnid: Dpnid(player),
            addr: stream,
            endpoint: endpoint.stream,
            datagrams_from: 0,
            bytes_from: 0,
            datagrams_to: 0,
            bytes_to: 0,
            rate_limited: 0,
        };
        let sender = Sender { bucket: Bucket::new(), stats };
        self.left.retain(|l| *l != stream);
        self.members.insert(player, Member { stream, header_port, datagram, endpoint: index, sender });
        tracing::debug!(player, %stream, header_port, endpoint = %endpoint.stream, "DP4 relay endpoint taken");
        Some(endpoint)
    }

    /// The instance of `player` left: its endpoint is free again, its latches forgotten.
    pub fn remove(&mut self, player: u32) {
        let Some(member) = self.members.remove(&player) else { return };
        self.frees += 1;
        if let Some(e) = self.endpoints.get_mut(member.endpoint) {
            *e = Endpoint { freed: self.frees, ..Endpoint::default() };
        }
        for e in &mut self.endpoints {
            if let Some(addr) = e.by_member.remove(&player) {
                e.by_source.remove(&addr);
            }
        }
        self.game_sources.remove(&player);
        self.lost.retain(|l| *l != member.stream);
        if self.left.len() >= self.endpoints.len() {
            self.left.pop_front();
        }
        self.left.push_back(member.stream);
        self.owners.retain(|_, system| *system != player);
        tracing::debug!(player, "DP4 relay endpoint freed");
    }

    /// Connection `conn` was accepted by endpoint `endpoint`'s listener (`None`: by the
    /// session's).
    pub fn accepted(&mut self, conn: ConnId, endpoint: Option<usize>) {
        let conn_state = Conn {
            endpoint,
            sender: None,
            header_port: 0,
            peer: None,
            mode: if endpoint.is_some() { Mode::AsRead } else { Mode::Undecided(Vec::new()) },
            framer: StreamFramer::new(MAX_MESSAGE_SIZE),
            charge: self.cfg.budget.account(),
        };
        self.conns.insert(conn, conn_state);
    }

    /// Bytes read on connection `conn` from `peer`. On an endpoint's connection its messages
    /// are relayed; the session's (one its listener accepted) tell the relay who opened it,
    /// and, for a member the session knows at another port than its header names, the
    /// session gets them from `out` with that port (and `out` holds nothing while the first
    /// message's start is read); one the host opened is the session's as read. An error
    /// closes it.
    pub fn handle_stream(
        &mut self,
        now: Instant,
        conn: ConnId,
        peer: SocketAddr,
        data: &[u8],
        out: &mut Vec<u8>,
    ) -> Result<Dp4StreamRead, Dp4StreamError> {
        let Some(c) = self.conns.get_mut(&conn) else { return Ok(Dp4StreamRead::Session) };
        let Some(at) = c.endpoint else { return self.session_read(conn, peer, data, out) };
        let messages = c.framer.push(data).map_err(|_| Dp4StreamError::Framing)?;
        if !c.charge.set(c.framer.buffered()) {
            self.stats.over_budget += 1;
            return Err(Dp4StreamError::OverBudget);
        }
        for mut m in messages {
            self.relay_message(now, conn, at, peer, &mut m)?;
        }
        Ok(Dp4StreamRead::Relayed)
    }

    /// Connection `conn` closed: it carries nothing more either way. True when it was an
    /// endpoint's.
    pub fn stream_closed(&mut self, conn: ConnId) -> bool {
        let Some(c) = self.conns.remove(&conn) else { return false };
        if let Some(listener) = c.sender
            && self.back.get(&listener).is_some_and(|(c, _)| *c == conn)
        {
            // The newest other connection of that instance takes over, if any.
            let next = self
                .conns
                .iter()
                .filter(|(_, o)| o.sender == Some(listener))
                .filter_map(|(id, o)| Some((*id, o.peer?)))
                .max_by_key(|(id, _)| *id);
            match next {
                Some(next) => self.back.insert(listener, next),
                None => self.back.remove(&listener),
            };
            // At most one entry per member, so nothing grows if nobody asks.
            let report = next.is_none() && c.endpoint.is_some() && self.member_at(listener).is_some();
            if report && !self.lost.contains(&listener) && self.lost.len() < self.endpoints.len() {
                self.lost.push_back(listener);
            }
        }
        c.endpoint.is_some()
    }

    /// The listener of a member whose last connection to the host, one to an endpoint, closed
    /// since the last call: the session, which never saw that connection, is to check the
    /// instance at once (`Dp4Session::handle_tcp_lost`), as it does when one of its own
    /// closes; its PING then finds it [`Self::stream_unreachable`]. A killed process resets
    /// all its connections together, and the session's own may close first, while the relay
    /// still answers the member on another that is about to go.
    pub fn poll_lost(&mut self) -> Option<SocketAddr> {
        self.lost.pop_front()
    }

    /// The connection to send the host session's TCP message for the listener `to` on: one
    /// that listener's instance opened to the host, the same while it is open (`None`: open
    /// one to `to`).
    pub fn route_stream(&self, to: SocketAddr) -> Option<ConnId> {
        self.back.get(&to).map(|(c, _)| *c)
    }

    /// Whether the host session's TCP message for the listener `to` cannot be sent at all: `to`
    /// is a member's, and no connection that member opened to the host is open any more (its
    /// process was killed, its cable pulled, or it closed them). The runtime then reports `to`
    /// unreachable to the session at once, as for a refused connect (MC-DPL4CS 3.1.7.1; the
    /// session removes the instance), instead of opening a connection to it: a member is
    /// answered only on connections it opened (docs/decisions.md, "Relay"), and a connect
    /// toward its NATed listener is dropped by its NAT and fails only after the connect
    /// timeout, traffic aimed at an address the member never opened. The same holds for a
    /// member that left (one of the last as many as there are endpoints): a removed member
    /// that sends again is answered (YOUAREDEAD, 3.2.5.10) on a connection it still has open,
    /// never on a new one toward its NAT (docs/decisions.md, "Relay: a removed member that
    /// comes back").
    pub fn stream_unreachable(&self, to: SocketAddr) -> bool {
        !self.back.contains_key(&to) && (self.member_at(to).is_some() || self.left.contains(&to))
    }

    /// A datagram at the host's game socket from `from`: a member's tells where its NAT maps
    /// it toward the host.
    pub fn observe_game_datagram(&mut self, from: SocketAddr, data: &[u8]) {
        if let Some(id) = self.identify_datagram(None, from, data) {
            self.game_sources.insert(id, from);
        }
    }

    /// Where to send the host session's datagram for the game socket `to`: the address its
    /// member's datagrams to the host's game socket come from (`None`: `to` itself).
    pub fn route_datagram(&self, to: SocketAddr) -> Option<SocketAddr> {
        let (id, _) = self.members.iter().find(|(_, m)| m.datagram == to)?;
        self.game_sources.get(id).copied()
    }

    /// Whether the host session's datagram for the game socket `to` is to be dropped: `to` is a
    /// member's, and that member never sent from its game socket to the host's, so its NAT
    /// has no mapping toward the host's game socket and would filter it (an address the member
    /// never opened; Linux NAT may even give the member's next datagram another port). What
    /// the host sends a member by UDP (a silent-peer follow-up PING, docs/decisions.md, "A
    /// silent peer"; a non-guaranteed message) may be lost anyway; its guaranteed messages go
    /// on the member's connections.
    pub fn datagram_unreachable(&self, to: SocketAddr) -> bool {
        self.members.iter().any(|(id, m)| m.datagram == to && !self.game_sources.contains_key(id))
    }

    /// A datagram at endpoint `endpoint`'s UDP socket from `from`: forwarded to the
    /// endpoint's owner when it comes from another member, else dropped and counted.
    pub fn handle_datagram(&mut self, now: Instant, endpoint: usize, from: SocketAddr, data: &[u8]) {
        let Some(owner) = self.endpoints.get(endpoint).and_then(|e| e.owner) else {
            return self.stranger(now, from, "an endpoint no member holds");
        };
        let known = self.endpoints.get(endpoint).and_then(|e| e.by_source.get(&from)).copied();
        let Some(sender) = known.or_else(|| self.identify_datagram(Some(owner), from, data)) else {
            return self.stranger(now, from, "not a member");
        };
        if known.is_none()
            && let Some(e) = self.endpoints.get_mut(endpoint)
        {
            e.by_source.insert(from, sender);
            e.by_member.insert(sender, from);
            self.stats.latched += 1;
        }
        let Some(via) = self.members.get(&sender).map(|m| m.endpoint) else { return };
        let Some(to) = self.endpoints.get(via).and_then(|e| e.by_member.get(&owner)).copied() else {
            self.stats.unlatched += 1;
            return;
        };
        let mut bytes = data.to_vec();
        if let Some(r) = self.cfg.endpoints.get(via).copied() {
            rewrite(&mut bytes, r, false);
        }
        self.offer(now, sender, owner, Dp4Forward::Datagram { endpoint: via, to }, &bytes);
    }

    /// The next message to send: its bytes into `buf` (cleared by the caller).
    pub fn poll_forward(&mut self, buf: &mut Vec<u8>) -> Option<Dp4Forward> {
        self.outbox.pop(buf)
    }

    /// What the relay did so far, members by system player ID (in `dpnid`).
    pub fn stats(&self) -> RelayStats {
        let mut members: Vec<MemberStats> = self.members.values().map(|m| m.sender.stats).collect();
        members.sort_by_key(|m| m.dpnid);
        RelayStats {
            endpoints: self.endpoints.len(),
            endpoints_held: self.members.len(),
            members,
            ..self.stats.clone()
        }
    }

    /// One whole message from `peer` on connection `conn` to endpoint `at`.
    fn relay_message(
        &mut self,
        now: Instant,
        conn: ConnId,
        at: usize,
        peer: SocketAddr,
        m: &mut [u8],
    ) -> Result<(), Dp4StreamError> {
        let Some(owner) = self.endpoints.get(at).and_then(|e| e.owner) else {
            self.stranger(now, peer, "an endpoint no member holds");
            return Err(Dp4StreamError::Stranger);
        };
        let sender = match self.conns.get(&conn).and_then(|c| c.sender) {
            Some(listener) => self.member_at(listener),
            None => {
                let id =
                    sender::header_port(m).and_then(|p| self.identify_stream(peer.ip(), p, Some(owner), m));
                if let Some((listener, header_port)) =
                    id.and_then(|id| self.members.get(&id)).map(|x| (x.stream, x.header_port))
                {
                    self.claim(conn, peer, listener, header_port);
                }
                id
            }
        };
        let Some(sender) = sender else {
            self.stranger(now, peer, "not a member");
            return Err(Dp4StreamError::Stranger);
        };
        self.learn(Some(sender), m);
        let Some((stream, to)) = self.members.get(&owner).and_then(|o| self.back.get(&o.stream)).copied()
        else {
            self.stats.unlatched += 1;
            return Ok(());
        };
        if let Some(r) = self.members.get(&sender).and_then(|s| self.cfg.endpoints.get(s.endpoint)).copied() {
            rewrite(m, r, true);
        }
        self.offer(now, sender, owner, Dp4Forward::Stream { conn: stream, peer: to }, m);
        Ok(())
    }

    fn offer(&mut self, now: Instant, sender: u32, owner: u32, to: Dp4Forward, data: &[u8]) {
        if sender == owner {
            return;
        }
        let [Some(s), o] = self.members.get_disjoint_mut([&sender, &owner]) else { return };
        let receiver = o.map(|o| &mut o.sender.stats);
        self.outbox.offer(now, &mut s.sender, receiver, &mut self.stats, to, data);
    }

    fn stranger(&mut self, now: Instant, from: SocketAddr, why: &str) {
        self.stats.strangers += 1;
        if self.log.may_log(now, from.ip(), LOG_INTERVAL) {
            tracing::info!(%from, why, "DP4 relay: message dropped (logged once per source per 10 s)");
        }
    }
}

/// Writes `r`'s listener as the header's SockAddr of message `m` (MC-DPL4CS 2.2.6), and, in a
/// CREATEPLAYER or CREATEPLAYERVERIFY, `r`'s addresses as its player's SPData (2.2.2, 2.2.21).
/// Every message on a stream has the SockAddr, player messages too; a datagram only with the
/// signature (a player datagram is only its IDs and data; docs/decisions.md).
fn rewrite(m: &mut [u8], r: Dp4Endpoint, stream: bool) {
    if (stream || sender::signed(m))
        && let (Some(h), SocketAddr::V4(l)) = (m.get_mut(4..20), r.stream)
    {
        write_sock_addr(h, l);
    }
    if matches!(sender::command(m), Some(CREATE_PLAYER | CREATE_PLAYER_VERIFY))
        && let Some(range) = sender::sp_data_range(m)
        && let Some(out) = m.get_mut(range)
    {
        out.copy_from_slice(&sp_data(r.stream, r.datagram).0);
    }
}

fn write_sock_addr(out: &mut [u8], addr: SocketAddrV4) {
    if let Ok(mut w) = Writer::new(out, SockAddrIn::LEN) {
        SockAddrIn::new(addr).write(&mut w);
    }
}

impl Dp4AddressMap for Dp4Relay {
    fn admitted(
        &mut self,
        player: u32,
        stream: SocketAddr,
        datagram: SocketAddr,
    ) -> Option<(SocketAddr, SocketAddr)> {
        self.admit(player, stream, datagram).map(|e| (e.stream, e.datagram))
    }

    fn removed(&mut self, player: u32) {
        self.remove(player);
    }
}

#[cfg(test)]
mod tests;
