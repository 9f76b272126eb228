//! [`Dp4Session`]: one DirectPlay 4 endpoint, host or client, sans-IO (MC-DPL4CS 3.1, 3.2).
//!
//! # Driving it
//!
//! Inputs: [`Dp4Session::handle_udp`] for every datagram on the enumeration port (47624) and
//! the game UDP socket, [`Dp4Session::handle_tcp`] for every read on an accepted or opened TCP
//! connection (close the connection when it returns an error), [`Dp4Session::handle_tcp_closed`]
//! when one closes, [`Dp4Session::handle_unreachable`] when a listener cannot be reached, and
//! [`Dp4Session::handle_timeout`] at [`Dp4Session::poll_timeout`].
//! Commands: [`Dp4Session::host`], [`Dp4Session::enum_sessions`], [`Dp4Session::join`],
//! [`Dp4Session::create_player`], [`Dp4Session::create_group`],
//! [`Dp4Session::add_player_to_group`], [`Dp4Session::send`], [`Dp4Session::set_session`],
//! [`Dp4Session::leave`]. After each, drain [`Dp4Session::poll_transmit`] and
//! [`Dp4Session::poll_event`] until `None`.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, SocketAddrV4};
use std::time::Instant;

use dplay_dpsp::reliable::{Reliable, Stats as ReliableStats};
use dplay_dpsp::{Dpsp, DpspMessage, Event as DpspEvent};
use dplay_wire::budget::Charge;
use dplay_wire::codec::Reader;
use dplay_wire::dp4::header::{SIGNATURE, SockAddrIn, Token};
use dplay_wire::dp4::message::{Dp4Body, Dp4Datagram, Dp4Message, Dp4UdpDatagram, ShortMessage};
use dplay_wire::dp4::player_message::DatagramPlayerMessage;
use dplay_wire::dp4::player_message::has_signature;
use dplay_wire::dp4::session::{SessionDesc2, SessionFlags};
use dplay_wire::{WideString, Wire};
use rand_chacha::ChaCha8Rng;
use rand_chacha::rand_core::SeedableRng;

use crate::dp4::config::Dp4Config;
use crate::dp4::event::{Dp4Event, Dp4Transmit, DropReason, Stats, Timer, TimerTable, Via};
use crate::dp4::group_table::GroupList;
use crate::dp4::guard::Guard;
use crate::dp4::ids::IdAllocator;
use crate::dp4::stream::{StreamError, StreamFramer, TcpStatus};
use crate::dp4::table::{Player, PlayerList, resolve};
use crate::memory::Memory;

/// Identifies one TCP connection for [`Dp4Session::handle_tcp`]; chosen by the runtime.
pub type ConnId = u64;

/// Where the endpoint is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Neither hosting nor in a session (enumeration is allowed).
    Idle,
    /// Sent REQUESTPLAYERID for our system player (MC-DPL4CS 3.1.4.2).
    RequestingId {
        /// The host's TCP listener.
        host: SocketAddr,
    },
    /// Sent ADDFORWARDREQUEST, waiting for SUPERENUMPLAYERSREPLY or ENUMPLAYERSREPLY (MC-DPL4CS
    /// 3.1.5.1, 2.2.28).
    AddingForward {
        /// The host's TCP listener.
        host: SocketAddr,
    },
    /// A joined instance that is not the host.
    Member,
    /// The name server (MC-DPL4CS 3.2).
    Host,
    /// Left, or dropped from, the session.
    Ended,
}

/// A join the host is completing: ADDFORWARDACKs still awaited (MC-DPL4CS 3.2.5.5, 3.2.5.6).
#[derive(Debug, Clone, Default)]
pub(crate) struct PendingJoin {
    pub(crate) awaiting: BTreeSet<u32>,
}

/// One TCP connection's framer, whether it belongs to a known instance, and its partial
/// message's charge on the memory budget.
#[derive(Debug)]
pub(crate) struct TcpConn {
    framer: StreamFramer,
    known: bool,
    charge: Charge,
    /// The TCP listener of the known instance whose messages it carried: when the connection
    /// closes, that instance is checked ([`Dp4Session::handle_tcp_lost`]).
    instance: Option<SocketAddr>,
}

/// One DirectPlay 4 endpoint (MC-DPL4CS 3.1, 3.2). See the module documentation for the order
/// of calls.
#[derive(Debug)]
pub struct Dp4Session {
    pub(crate) config: Dp4Config,
    pub(crate) rng: ChaCha8Rng,
    pub(crate) epoch: Option<Instant>,
    pub(crate) role: Role,
    pub(crate) desc: Option<SessionDesc2>,
    pub(crate) session_name: Option<WideString>,
    pub(crate) password: Option<WideString>,
    pub(crate) players: PlayerList,
    pub(crate) ids: Option<IdAllocator>,
    pub(crate) me: Option<u32>,
    pub(crate) host_id: Option<u32>,
    /// Instances the host forwarded while our own join was pending (MC-DPL4CS 3.1.5.10),
    /// acknowledged at once and added with the name table; at most
    /// [`crate::dp4::client::MAX_EARLY_FORWARDS`].
    pub(crate) early_forwards: Vec<Player>,
    /// Host: system player IDs handed out by REQUESTPLAYERID, awaiting ADDFORWARDREQUEST.
    pub(crate) reserved: BTreeSet<u32>,
    pub(crate) joins: BTreeMap<u32, PendingJoin>,
    /// The Group List (MC-DPL4CS 3.1.1; see `dp4::groups`).
    pub(crate) groups: GroupList,
    /// When each local application player was created, for CREATEPLAYERVERIFY (2.2.22).
    pub(crate) recent: BTreeMap<u32, Instant>,
    /// Client: short name and player data of a player asked for with REQUESTPLAYERID (no SP).
    pub(crate) creating: Option<(String, Vec<u8>)>,
    /// Member: name of a group asked for with REQUESTGROUPID (MC-DPL4CS 3.1.4.6).
    pub(crate) creating_group: Option<String>,
    /// Our TCP connections' framers, by connection.
    pub(crate) tcp: HashMap<ConnId, TcpConn>,
    pub(crate) dpsp: Dpsp,
    /// MC-DPL4R, for sessions with DPSESSION_DIRECTPLAYPROTOCOL (see `dp4::reliable`).
    pub(crate) reliable: Reliable,
    pub(crate) timers: TimerTable,
    pub(crate) transmits: VecDeque<Dp4Transmit>,
    pub(crate) events: VecDeque<Dp4Event>,
    pub(crate) stats: Stats,
    /// Rate limits for unknown sources (see `dp4::guard`).
    pub(crate) guard: Guard,
    /// When each instance was last PINGed over TCP because a connection of its closed
    /// ([`Dp4Session::handle_tcp_lost`]).
    pub(crate) checked: BTreeMap<u32, Instant>,
    /// Follow-up PINGs left before the next Ping timer tick ([`Dp4Session::on_ping_retry`]).
    pub(crate) ping_retries: u32,
    /// When the Ping timer last elapsed; the follow-ups are spaced from it.
    pub(crate) ping_tick: Option<Instant>,
    /// Listeners of instances removed as silent, for [`Dp4Session::poll_abandoned`].
    pub(crate) abandoned: VecDeque<SocketAddr>,
    /// The memory budget and the Player List's charge on it (docs/limits.md).
    pub(crate) memory: Memory,
    /// Host: the SPData addresses the address map gave instances, by system player
    /// (`dp4::address_map`).
    pub(crate) advertised: BTreeMap<u32, (SocketAddr, SocketAddr)>,
}

impl Dp4Session {
    /// An idle endpoint; fails when `mtu` is too small for the fragmentation layer.
    pub fn new(config: Dp4Config) -> Result<Self, dplay_dpsp::ConfigError> {
        let mut dpsp_config = dplay_dpsp::Config::default().with_seed(config.seed ^ 0x6470_7370);
        dpsp_config.mtu = config.mtu;
        dpsp_config.sock_addr = SockAddrIn::new(config.stream_addr);
        dpsp_config.version = config.version;
        let mut dpsp = Dpsp::new(dpsp_config)?;
        let mut reliable_config = dplay_dpsp::reliable::Config::default();
        reliable_config.mtu = config.mtu;
        let mut reliable =
            Reliable::new(reliable_config).map_err(|_| dplay_dpsp::ConfigError::MtuTooSmall {
                mtu: config.mtu,
                min: dplay_dpsp::reliable::FRAME_OVERHEAD + 1,
            })?;
        let memory = Memory::new(config.limits.memory_budget);
        dpsp.set_memory_budget(&memory.budget);
        reliable.set_memory_budget(&memory.budget);
        Ok(Self {
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            config,
            epoch: None,
            role: Role::Idle,
            desc: None,
            session_name: None,
            password: None,
            players: PlayerList::new(),
            ids: None,
            me: None,
            host_id: None,
            early_forwards: Vec::new(),
            reserved: BTreeSet::new(),
            joins: BTreeMap::new(),
            groups: GroupList::new(),
            recent: BTreeMap::new(),
            creating: None,
            creating_group: None,
            tcp: HashMap::new(),
            dpsp,
            reliable,
            timers: TimerTable::default(),
            transmits: VecDeque::new(),
            events: VecDeque::new(),
            stats: Stats::default(),
            guard: Guard::default(),
            checked: BTreeMap::new(),
            ping_retries: 0,
            ping_tick: None,
            abandoned: VecDeque::new(),
            memory,
            advertised: BTreeMap::new(),
        })
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &Dp4Config {
        &self.config
    }

    /// Where the endpoint is.
    pub fn role(&self) -> Role {
        self.role
    }

    /// The session description, once hosting or joined.
    pub fn session_desc(&self) -> Option<&SessionDesc2> {
        self.desc.as_ref()
    }

    /// The Player List (MC-DPL4CS 3.1.1).
    pub fn players(&self) -> &PlayerList {
        &self.players
    }

    /// Our system player.
    pub fn system_player(&self) -> Option<u32> {
        self.me
    }

    /// The host's system player.
    pub fn host_player(&self) -> Option<u32> {
        self.host_id
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The memory budget that what we hold for others is charged to
    /// (`Dp4Limits::memory_budget`; docs/limits.md): a clone shares the counter.
    pub fn memory_budget(&self) -> &dplay_wire::budget::MemoryBudget {
        &self.memory.budget
    }

    /// Charges the Player List to the budget and copies the budget's figures into the stats
    /// (after every input and command, with `sync_links`).
    pub(crate) fn sync_memory(&mut self) {
        let table: usize = self.players.values().map(Player::held_bytes).sum();
        self.memory.set_table(table);
        let budget = &self.memory.budget;
        self.stats.bytes_held = budget.held();
        self.stats.bytes_peak = budget.peak();
        self.stats.memory_budget = budget.limit();
    }

    /// MC-DPL4R's counters (frames sent, resent, acknowledged, dropped ...): all zero unless
    /// the session has DPSESSION_DIRECTPLAYPROTOCOL.
    pub fn reliable_stats(&self) -> &ReliableStats {
        self.reliable.stats()
    }

    /// The next bytes to send.
    pub fn poll_transmit(&mut self) -> Option<Dp4Transmit> {
        self.transmits.pop_front()
    }

    /// The TCP listener of an instance removed because it went silent (docs/decisions.md, "A
    /// silent peer"): the runtime closes the connections it opened there at once, with what
    /// they still hold. A dead link keeps its queue for minutes, and the same machine back on
    /// the same port must not have its join's replies wait behind it.
    pub fn poll_abandoned(&mut self) -> Option<SocketAddr> {
        self.abandoned.pop_front()
    }

    /// The next event.
    pub fn poll_event(&mut self) -> Option<Dp4Event> {
        self.events.pop_front()
    }

    /// When [`Dp4Session::handle_timeout`] must next be called.
    pub fn poll_timeout(&self) -> Option<Instant> {
        [self.timers.next(), self.dpsp.poll_timeout(), self.reliable.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }

    /// A datagram from `from`, on the enumeration port or the game socket.
    pub fn handle_udp(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.epoch.get_or_insert(now);
        let dropped = self.stats.dropped_total();
        if !self.handle_reliable_datagram(now, from, bytes) {
            self.receive(now, from, bytes, Via::Udp);
        }
        self.log_drops(now, from, dropped);
        self.sync_links();
    }

    /// Bytes read from TCP connection `conn`, whose peer is `from`. On an error the stream
    /// is unusable: the caller closes the connection (MC-DPL4CS 2.1, 2.2.6). The status says
    /// how many messages the read completed, what is held of the next, and whether the
    /// connection belongs to a known instance, for the caller's deadlines (docs/limits.md).
    ///
    /// A connection that belongs to no known instance may carry messages of at most
    /// `limits.max_unjoined_message` bytes, and, at a host or a joiner, only system messages
    /// ('play' at offset 20): a player message there closes it.
    pub fn handle_tcp(
        &mut self,
        now: Instant,
        conn: ConnId,
        from: SocketAddr,
        bytes: &[u8],
    ) -> Result<TcpStatus, StreamError> {
        self.epoch.get_or_insert(now);
        let trusted_ip = self.known_ip(from.ip());
        let (full, unjoined) = (self.config.max_stream_message, self.config.limits.max_unjoined_message);
        let c = self.tcp.entry(conn).or_insert_with(|| TcpConn {
            framer: StreamFramer::new(unjoined),
            known: false,
            charge: self.memory.budget.account(),
            instance: None,
        });
        c.framer.set_max_size(if c.known || trusted_ip { full } else { unjoined });
        let messages = match c.framer.push(bytes) {
            Ok(messages) => messages,
            Err(e) => return Err(self.reject_stream(conn, e)),
        };
        // What stays buffered is charged; a connection whose partial message does not fit is
        // closed (its peer may connect again once there is room).
        if !c.charge.set(c.framer.buffered()) {
            *self.stats.dropped.entry(DropReason::OverBudget).or_default() += 1;
            return Err(self.reject_stream(conn, StreamError::OverBudget));
        }
        let count = messages.len();
        for m in messages {
            let known = self.tcp.get(&conn).is_some_and(|c| c.known) || self.is_known_sender(from, &m);
            // A member may hear from a joiner before the host's ADDFORWARD about it, and one
            // that left from those who do not know yet: such a message is dropped
            // (UnknownPlayer), the connection kept. A host or a joiner only gets player
            // messages from instances it knows (docs/decisions.md).
            let strict = !matches!(self.role, Role::Member | Role::Ended);
            if !known && !has_signature(&m) && strict {
                return Err(self.reject_stream(conn, StreamError::NoSignature));
            }
            let dropped = self.stats.dropped_total();
            self.receive(now, from, &m, Via::Tcp);
            self.log_drops(now, from, dropped);
            // After the message: an ADDFORWARDREQUEST makes its sender known.
            let known = known || self.is_known_sender(from, &m);
            let instance = self.sender_listener(from, &m).filter(|l| self.instance_at(*l).is_some());
            if let Some(c) = self.tcp.get_mut(&conn) {
                c.known |= known;
                c.instance = instance.or(c.instance);
            }
        }
        self.sync_links();
        let c = self.tcp.get(&conn);
        Ok(TcpStatus {
            messages: count,
            buffered: c.map_or(0, |c| c.framer.buffered()),
            known: c.is_some_and(|c| c.known),
        })
    }

    /// Forgets connection `conn` after `e`, counts it, and gives `e` back.
    fn reject_stream(&mut self, conn: ConnId, e: StreamError) -> StreamError {
        self.tcp.remove(&conn);
        self.stats.streams_rejected += 1;
        // Not logged here: the caller closes the connection and says why.
        e
    }

    /// Whether `ip` is the address of a known remote instance or of the host we are joining:
    /// its connections may carry messages up to `max_stream_message`.
    fn known_ip(&self, ip: IpAddr) -> bool {
        self.joining_host().is_some_and(|h| h.ip() == ip)
            || self.players.values().any(|p| !p.local && p.addrs.is_some_and(|(s, _)| s.ip() == ip))
    }

    /// The TCP listener of the host we are joining, while we are.
    pub(crate) fn joining_host(&self) -> Option<SocketAddr> {
        match self.role {
            Role::RequestingId { host } | Role::AddingForward { host } => Some(host),
            _ => None,
        }
    }

    /// Whether message `m`, received from `from`, comes from a known instance: the listener
    /// its header names (as [`Dp4Session::reply_addr`] reads it) is in the Player List, or is
    /// the host we are joining.
    fn is_known_sender(&self, from: SocketAddr, m: &[u8]) -> bool {
        let Some(listener) = self.sender_listener(from, m) else { return false };
        self.joining_host() == Some(listener) || self.instance_at(listener).is_some()
    }

    /// The listener the header of stream message `m`, received from `from`, names.
    fn sender_listener(&self, from: SocketAddr, m: &[u8]) -> Option<SocketAddr> {
        let sock_addr = m.get(4..20).and_then(|b| SockAddrIn::read(&mut Reader::new(b)).ok())?;
        Some(self.reply_addr(sock_addr.addr, from.ip()))
    }

    /// Where to answer a message whose header SockAddr is `addr`, received from `seen`: the
    /// header's port at the sender's IP address; the header's IP too only with
    /// `limits.follow_header_addresses`, else a forged header could aim us at a third party
    /// (MC-DPL4CS 2.2.6, 3.2.5.3; docs/decisions.md). A zero address always means the sender's.
    pub(crate) fn reply_addr(&self, addr: SocketAddrV4, seen: IpAddr) -> SocketAddr {
        if self.config.limits.follow_header_addresses {
            resolve(addr, seen)
        } else {
            SocketAddr::new(seen, addr.port())
        }
    }

    /// TCP connection `conn` closed; its partial message is forgotten.
    pub fn handle_tcp_closed(&mut self, conn: ConnId) {
        self.tcp.remove(&conn);
    }

    /// TCP connection `conn` was closed or reset by its peer: forgotten as by
    /// [`Dp4Session::handle_tcp_closed`], and the instance it belonged to (the listener it was
    /// opened to, `opened_to`, or the one whose messages it carried) is PINGed over TCP at
    /// once. A killed process closes every socket it had: the PING's connect is refused, the
    /// runtime calls [`Dp4Session::handle_unreachable`], and the instance is removed with all
    /// its players in well under a Ping period (issue 27 item 10; docs/decisions.md).
    pub fn handle_tcp_lost(&mut self, now: Instant, conn: ConnId, opened_to: Option<SocketAddr>) {
        let carried = self.tcp.remove(&conn).and_then(|c| c.instance);
        let Some(id) = opened_to.or(carried).and_then(|l| self.instance_at(l)) else { return };
        self.check_instance(now, id);
    }

    /// Runs every timer due at `now` (MC-DPL4CS 3.1.6, 3.2.6).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.dpsp.handle_timeout(now);
        self.pump_dpsp(now);
        self.reliable.handle_timeout(now);
        self.pump_reliable(now);
        while let Some(timer) = self.timers.pop_due(now) {
            match timer {
                Timer::Enumeration => self.events.push_back(Dp4Event::EnumDone),
                Timer::ReliableApi => self.on_reliable_api_timeout(),
                Timer::NameTable(id) => self.finish_join(id),
                Timer::Ping => self.on_ping_timer(now),
                Timer::PingRetry => self.on_ping_retry(now),
                Timer::Reservation(id) => self.on_reservation_expired(id),
                Timer::Check(id) => self.check_instance(now, id),
            }
        }
        self.sync_links();
    }

    pub(crate) fn drop_msg(&mut self, reason: DropReason, what: &str) {
        *self.stats.dropped.entry(reason).or_default() += 1;
        // Trace: a flood must not flood a debug log; the caller logs once per source.
        tracing::trace!(?reason, what, "DP4 message dropped");
    }

    /// Whether player messages carry idFrom/idTo (no NM flag, MC-DPL4CS 2.2.45).
    pub(crate) fn ids_present(&self) -> bool {
        !self.desc.is_some_and(|d| d.flags.contains(SessionFlags::NO_MESSAGE_ID))
    }

    /// The receive path for one whole message (MC-DPL4CS 3.1.5; demux by 'play' at 20, F-21).
    ///
    /// A player message on a stream carries the size/token and SockAddr prefix; in a datagram
    /// it is only `idFrom`, `idTo` and the data (docs/decisions.md, from Wine's dplayx tests).
    pub(crate) fn receive(&mut self, now: Instant, from: SocketAddr, bytes: &[u8], via: Via) {
        self.stats.received += 1;
        if self.take_voice(bytes) {
            return;
        }
        let ids = self.ids_present();
        let parsed = match via {
            Via::Tcp => Dp4Datagram::parse(bytes, ids).map(|d| match d {
                Dp4Datagram::System(m) => Dp4UdpDatagram::System(m),
                Dp4Datagram::Player(pm) => {
                    Dp4UdpDatagram::Player(DatagramPlayerMessage::new(pm.ids, pm.payload))
                }
            }),
            // A short-form CHAT ('play' first, no size/token/SockAddr) sent non-guaranteed
            // (2.2.19): a system message, not a player message.
            Via::Udp if bytes.get(..4) == Some(&SIGNATURE[..]) && !has_signature(bytes) => {
                match ShortMessage::parse(bytes) {
                    Ok(ShortMessage { body: Dp4Body::Chat(m), .. }) => return self.on_chat(m),
                    _ => Dp4UdpDatagram::parse(bytes, ids),
                }
            }
            Via::Udp => Dp4UdpDatagram::parse(bytes, ids),
        };
        match parsed {
            Err(e) => self.drop_msg(DropReason::Malformed, &e.to_string()),
            Ok(Dp4UdpDatagram::Player(pm)) => self.on_routed_player_message(now, from, via == Via::Tcp, pm),
            Ok(Dp4UdpDatagram::System(msg)) => self.dispatch(now, from, msg, via),
        }
    }

    pub(crate) fn dispatch(&mut self, now: Instant, from: SocketAddr, msg: Dp4Message, via: Via) {
        let reply_to = self.reply_addr(msg.header.sock_addr.addr, from.ip());
        let header = msg.header;
        match msg.body {
            // "to the port specified in the SockAddr field ... and to the IP address that sent
            // the request" (3.2.5.3), whatever address the SockAddr holds.
            Dp4Body::EnumSessions(m) => {
                let to = SocketAddr::new(from.ip(), header.sock_addr.addr.port());
                self.on_enum_sessions(now, to, &m)
            }
            Dp4Body::EnumSessionsReply(m) => self.on_enum_sessions_reply(reply_to, m),
            // Answered as ENUMSESSIONS is: by TCP to the SockAddr's port at the sender's IP.
            Dp4Body::EnumPlayer(_) => {
                self.on_enum_player(now, SocketAddr::new(from.ip(), header.sock_addr.addr.port()))
            }
            Dp4Body::RequestPlayerId(m) => self.on_request_player_id(now, reply_to, m, via),
            Dp4Body::RequestPlayerReply(m) => self.on_request_player_reply(now, &m),
            Dp4Body::AddForwardRequest(m) => {
                self.on_add_forward_request(now, from.ip(), reply_to, &header, &m)
            }
            Dp4Body::AddForward(m) => self.on_add_forward(from.ip(), &m),
            Dp4Body::AddForwardAck(m) => self.on_add_forward_ack(reply_to, m.0),
            Dp4Body::AddForwardReply(m) => self.on_add_forward_reply(m.0),
            Dp4Body::SuperEnumPlayersReply(m) => self.on_super_enum_players_reply(now, from.ip(), m),
            Dp4Body::EnumPlayersReply(m) => self.on_enum_players_reply(now, from.ip(), m),
            Dp4Body::CreatePlayer(m) => self.on_create_player(now, from.ip(), reply_to, header.version, &m),
            Dp4Body::CreatePlayerVerify(m) => self.on_create_player(now, from.ip(), reply_to, 0, &m),
            Dp4Body::DeletePlayer(m) => self.on_delete_player(now, reply_to, m.player_id),
            Dp4Body::Ping(m) => self.on_ping(now, from, reply_to, m),
            Dp4Body::PingReply(m) => self.on_ping_reply(now, from, reply_to, m),
            Dp4Body::YouAreDead(_) => self.on_you_are_dead(),
            Dp4Body::RequestGroupId(_) => self.on_request_group_id(reply_to),
            Dp4Body::CreateGroup(m) => self.on_create_group(reply_to, &m),
            Dp4Body::DeleteGroup(m) => self.on_delete_group(&m),
            Dp4Body::AddPlayerToGroup(m) => self.on_add_player_to_group(&m),
            Dp4Body::DeletePlayerFromGroup(m) => self.on_delete_player_from_group(&m),
            Dp4Body::GroupDataChanged(m) => self.on_group_data_changed(m),
            Dp4Body::GroupNameChanged(m) => self.on_group_name_changed(m),
            Dp4Body::AddShortcutToGroup(m) => self.on_add_shortcut_to_group(&m),
            Dp4Body::DeleteGroupFromGroup(m) => self.on_delete_group_from_group(&m),
            Dp4Body::PlayerDataChanged(m) => self.on_player_data_changed(m),
            Dp4Body::PlayerNameChanged(m) => self.on_player_name_changed(m),
            Dp4Body::Chat(m) => self.on_chat(m),
            Dp4Body::SessionDescChanged(m) => self.on_session_desc_changed(m),
            Dp4Body::IAmNameServer(m) => self.on_i_am_name_server(now, reply_to, &m),
            // Short-form, over MC-DPL4R (a whole message goes to `take_voice` first).
            Dp4Body::Voice(m) => match m.message.to_vec() {
                Ok(data) => self.on_voice(m.id_from, m.id_to, data),
                Err(e) => self.drop_msg(DropReason::Malformed, &e.to_string()),
            },
            Dp4Body::PlayerWrapper(w) => {
                let ids = self.ids_present();
                let inner = match via {
                    Via::Tcp => w.inner(ids).map(|pm| DatagramPlayerMessage::new(pm.ids, pm.payload)),
                    Via::Udp => w.inner_datagram(ids),
                };
                match inner {
                    Ok(pm) => self.on_routed_player_message(now, from, via == Via::Tcp, pm),
                    Err(e) => self.drop_msg(DropReason::Malformed, &e.to_string()),
                }
            }
            body @ (Dp4Body::Packet(_) | Dp4Body::Packet2Data(_) | Dp4Body::Packet2Ack(_)) => {
                if let Some(m) = DpspMessage::from_body(&body) {
                    // Over TCP the peer is its listener, where its PACKET2_ACK goes back
                    // (`pump_dpsp`), not the connection's ephemeral port (MC-DPL4CS 2.2.41).
                    let peer = if via == Via::Tcp { reply_to } else { from };
                    self.dpsp.handle_message(now, peer, &m);
                    self.pump_dpsp(now);
                }
            }
            body => self.drop_msg(DropReason::Unsupported, body.name()),
        }
    }

    /// Sends what dplay-dpsp queued and feeds back what it reassembled (MC-DPL4CS 2.2.41).
    pub(crate) fn pump_dpsp(&mut self, now: Instant) {
        while let Some(t) = self.dpsp.poll_transmit() {
            // To an instance's TCP listener (a PACKET2_DATA came over TCP): back over TCP.
            let to_stream =
                self.players.values().any(|p| p.is_system() && p.addrs.is_some_and(|(s, _)| s == t.to));
            let via = if to_stream { Via::Tcp } else { Via::Udp };
            match t.to_vec() {
                Ok(bytes) => self.transmits.push_back(Dp4Transmit { via, to: t.to, bytes }),
                Err(e) => tracing::warn!(error = %e, "fragment not encodable"),
            }
        }
        let mut delivered = Vec::new();
        while let Some(ev) = self.dpsp.poll_event() {
            match ev {
                DpspEvent::Delivered { from, message, .. } => delivered.push((from, message)),
                DpspEvent::ReassemblyAbandoned { .. } | DpspEvent::LimitExceeded { .. } => {
                    self.drop_msg(DropReason::Fragment, "fragmented message abandoned");
                }
                DpspEvent::SendComplete { .. } | DpspEvent::SendAborted { .. } => {}
            }
        }
        for (from, message) in delivered {
            self.receive(now, from, &message, Via::Udp);
        }
    }

    /// The header of everything we send: our TCP listener as SockAddr (MC-DPL4CS 2.2.6).
    pub(crate) fn message(&self, body: Dp4Body) -> Dp4Message {
        Dp4Message::new(
            Token::FROM_REMOTE,
            SockAddrIn::new(self.config.stream_addr),
            self.config.version,
            body,
        )
    }

    /// Queues a system message.
    pub(crate) fn send_body(&mut self, via: Via, to: SocketAddr, body: Dp4Body) {
        match self.message(body).to_vec() {
            Ok(bytes) => self.transmits.push_back(Dp4Transmit { via, to, bytes }),
            Err(e) => tracing::warn!(error = %e, "DP4 message not encodable"),
        }
    }

    /// The other instances: remote system players and their TCP listeners.
    pub(crate) fn other_instances(&self) -> Vec<(u32, SocketAddr)> {
        self.players
            .values()
            .filter(|p| p.is_system() && !p.local && self.reaches(p))
            .filter_map(|p| p.addrs.map(|(stream, _)| (p.id, stream)))
            .collect()
    }

    /// Sends `body` over TCP to every other instance but `except`.
    pub(crate) fn send_to_instances(&mut self, body: &Dp4Body, except: Option<u32>) -> BTreeSet<u32> {
        let mut sent = BTreeSet::new();
        for (id, to) in self.other_instances() {
            if Some(id) != except {
                self.send_body(Via::Tcp, to, body.clone());
                sent.insert(id);
            }
        }
        sent
    }

    /// The system player whose TCP listener is `stream`.
    pub(crate) fn instance_at(&self, stream: SocketAddr) -> Option<u32> {
        self.players
            .values()
            .find(|p| p.is_system() && p.addrs.is_some_and(|(s, _)| s == stream))
            .map(|p| p.id)
    }

    /// Milliseconds since the first input, as a TickCount (MC-DPL4CS 2.2.42).
    pub(crate) fn tick(&self, now: Instant) -> u32 {
        let ms = self.epoch.map_or(0, |e| now.saturating_duration_since(e).as_millis());
        u32::try_from(ms % (u128::from(u32::MAX) + 1)).unwrap_or_default()
    }

    /// Adds a player and reports it.
    pub(crate) fn add_player(&mut self, player: Player) {
        if !player.local {
            self.events.push_back(Dp4Event::PlayerJoined {
                id: player.id,
                name: player.short_name.as_ref().map(WideString::to_string_lossy),
                system: player.is_system(),
            });
        }
        self.players.insert(player.id, player);
    }

    /// Our own system player record.
    pub(crate) fn local_system_player(
        &self,
        id: u32,
        flags: dplay_wire::dp4::session::PlayerFlags,
    ) -> Player {
        let addr = |a: std::net::SocketAddrV4| SocketAddr::V4(a);
        Player {
            id,
            flags,
            system_player_id: id,
            version: u32::from(self.config.version),
            short_name: None,
            long_name: None,
            player_data: dplay_wire::Blob::default(),
            addrs: Some((addr(self.config.stream_addr), addr(self.config.datagram_addr))),
            local: true,
            chatter: 0,
            missed_pings: 0,
            answers_pings: false,
            round_trip: None,
            probed_at: None,
        }
    }
}
