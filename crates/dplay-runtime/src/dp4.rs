//! [`Dp4Protocol`]: a DirectPlay 4 [`Dp4Session`] driven by the runtime over its sockets
//! (MC-DPL4CS 2.1), with commands for what an application asks of it (host, enumerate, join,
//! create a player, send, leave) and the session's events.
//!
//! [`Dp4Binding`] says which sockets to open: the UDP game socket ([`Dp4Binding::GAME_SOCKET`])
//! and the TCP listener ([`Dp4Binding::LISTENER`]) on the first free ports of 2300-2400, and,
//! for a host, the enumeration socket ([`Dp4Binding::ENUM_SOCKET`]) on UDP 47624 of every
//! address, so broadcast ENUMSESSIONS reach it. Datagrams of both UDP sockets go to
//! [`Dp4Session::handle_udp`]; every UDP transmit leaves from the game socket; every TCP
//! transmit goes on the connection the runtime keeps to its destination (a TCP listener).

use std::collections::{BTreeMap, VecDeque};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Instant;

use dplay_session::dp4::config::{ENUM_PORT, GAME_PORT_FIRST, GAME_PORT_LAST};
use dplay_session::dp4::{
    CommandError, Dp4Config, Dp4Event as SessionEvent, Dp4Session, Dp4Transmit, EnumRequest, HostConfig,
    ReliableStats, TcpStatus, Via,
};
use dplay_wire::WideString;
use dplay_wire::dp4::session::SessionFlags;

use crate::dp4_report::Report;
use crate::peer_bytes::PeerBytes;
use crate::voice::{VoiceEvent, VoiceLayer, VoiceRole};
use crate::{
    CloseReason, Path, Protocol, Runtime, RuntimeConfig, RuntimeError, SharedDp4Relay, SocketId, SocketSpec,
    StreamClosed, StreamId, StreamLimits, StreamStatus, Tap, Transmit,
};

/// Where a DirectPlay 4 endpoint opens its sockets (MC-DPL4CS 2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dp4Binding {
    /// The address of the game socket and the TCP listener (unspecified: all addresses,
    /// and peers answer to the address they see).
    pub ip: Ipv4Addr,
    /// The TCP listener's port; `None`: the first free one of 2300-2400.
    pub stream_port: Option<u16>,
    /// The UDP game socket's port; `None`: the first free one of 2300-2400.
    pub datagram_port: Option<u16>,
    /// The enumeration port, bound on every address (hosts: 47624); `None`: no enumeration
    /// socket (joining and enumerating need none). Port 0: any free port.
    pub enum_port: Option<u16>,
    /// The UDP game address peers are told in our SPData (MC-DPL4CS 2.2.2), when it is not
    /// the bound one: a relay or NAT forwards it to the game socket. `None`: the bound one.
    pub advertised_datagram: Option<SocketAddrV4>,
    /// Deadlines and the per-source cap of accepted TCP connections (docs/limits.md).
    pub stream_limits: StreamLimits,
    /// A port the TCP listener must not take when it picks the first free one: the port of
    /// the host a joiner connects to, so that with no host there the joiner never listens
    /// on it and connects to itself (issue 27 item 16).
    pub avoid_port: Option<u16>,
    /// The enumeration socket (`enum_port`) is opened only once this endpoint becomes the
    /// host by migration (MC-DPL4CS 3.1.7.1, 3.2.3): a joiner that takes over answers
    /// enumeration, and until then leaves the port to the host it joined.
    pub enum_when_host: bool,
    /// A relaying host's relay endpoints (a UDP socket and a TCP listener each), opened after
    /// the others ([`crate::dp4_relay_sockets`]; docs/relay.md).
    pub relay_endpoints: usize,
}

impl Dp4Binding {
    /// The UDP game socket: non-guaranteed messages and PINGs in and out, ENUMSESSIONS out.
    pub const GAME_SOCKET: SocketId = SocketId(0);
    /// The TCP listener: guaranteed messages in.
    pub const LISTENER: SocketId = SocketId(1);
    /// The enumeration socket, when there is one: ENUMSESSIONS in.
    pub const ENUM_SOCKET: SocketId = SocketId(2);

    /// A host on `ip`: game ports from 2300, enumeration on 47624.
    pub fn host(ip: Ipv4Addr) -> Self {
        Self {
            ip,
            stream_port: None,
            datagram_port: None,
            enum_port: Some(ENUM_PORT),
            advertised_datagram: None,
            stream_limits: StreamLimits::default(),
            avoid_port: None,
            enum_when_host: false,
            relay_endpoints: 0,
        }
    }

    /// A joining or enumerating endpoint on `ip`: game ports from 2300, no enumeration socket.
    pub fn client(ip: Ipv4Addr) -> Self {
        Self {
            ip,
            stream_port: None,
            datagram_port: None,
            enum_port: None,
            advertised_datagram: None,
            stream_limits: StreamLimits::default(),
            avoid_port: None,
            enum_when_host: false,
            relay_endpoints: 0,
        }
    }

    /// The bound sockets `local` as peers are told them: the game socket at
    /// `advertised_datagram` when set.
    pub(crate) fn told(&self, local: &[SocketAddr]) -> Vec<SocketAddr> {
        let mut told = local.to_vec();
        if let (Some(addr), Some(game)) = (self.advertised_datagram, told.get_mut(Self::GAME_SOCKET.0)) {
            *game = SocketAddr::V4(addr);
        }
        told
    }

    /// How many sockets the session itself has: the relay endpoints' come after them.
    pub fn session_sockets(&self) -> usize {
        2 + usize::from(self.enum_port.is_some())
    }

    /// The runtime configuration opening these sockets, in [`SocketId`] order.
    pub fn runtime_config(&self) -> RuntimeConfig {
        let ip = IpAddr::V4(self.ip);
        let game = |port: Option<u16>| port.map_or(GAME_PORT_FIRST..=GAME_PORT_LAST, |p| p..=p);
        // The range's part above the avoided port (below it when it is the last).
        let listener = match (self.stream_port, self.avoid_port) {
            (None, Some(a)) if (GAME_PORT_FIRST..GAME_PORT_LAST).contains(&a) => a + 1..=GAME_PORT_LAST,
            (None, Some(GAME_PORT_LAST)) => GAME_PORT_FIRST..=GAME_PORT_LAST - 1,
            (port, _) => game(port),
        };
        let mut sockets = vec![
            SocketSpec::udp(SocketAddr::new(ip, 0)).first_free(game(self.datagram_port)).broadcast(),
            SocketSpec::tcp_listener(SocketAddr::new(ip, 0)).first_free(listener),
        ];
        if let Some(port) = self.enum_port {
            // Broadcast ENUMSESSIONS reach only a socket bound to any address; a host bound
            // to loopback answers on loopback alone (issue 25 item 12, docs/decisions.md).
            let on = if self.ip.is_loopback() { self.ip } else { Ipv4Addr::UNSPECIFIED };
            let spec = SocketSpec::udp(SocketAddr::from((on, port))).broadcast();
            sockets.push(if self.enum_when_host { spec.on_demand() } else { spec });
        }
        sockets.extend(crate::dp4_relay_sockets(ip, self.relay_endpoints));
        let mut config = RuntimeConfig::with_sockets(sockets);
        config.thread_name = "dplay-dp4".into();
        config.stream_limits = self.stream_limits.clone();
        config
    }
}

/// What an application asks of a DirectPlay 4 session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dp4Command {
    /// Host the session described (MC-DPL4CS 3.2.3).
    Host(HostConfig),
    /// Look for sessions: ENUMSESSIONS to `target`'s enumeration socket, or broadcast to
    /// 255.255.255.255:47624 when `None` (MC-DPL4CS 3.1.4.1).
    EnumSessions {
        /// A host's enumeration socket (usually port 47624), or `None` to broadcast.
        target: Option<SocketAddr>,
        /// What to ask for.
        request: EnumRequest,
    },
    /// Join the session whose host listens on `host` (a found session's TCP listener,
    /// MC-DPL4CS 3.1.4.2).
    Join {
        /// The host's TCP listener.
        host: SocketAddr,
        /// The session's password, if it has one.
        password: Option<String>,
    },
    /// Create a local application player with this short name (MC-DPL4CS 3.1.4.4).
    CreatePlayer(String),
    /// [`Dp4Command::CreatePlayer`] with the player's data, sent in its CREATEPLAYER
    /// (MC-DPL4CS 2.2.21).
    CreatePlayerWithData {
        /// The short name.
        name: String,
        /// The player data.
        data: Vec<u8>,
    },
    /// Application data from one of our players to player `to` or
    /// [`dplay_session::dp4::DPID_ALLPLAYERS`] (MC-DPL4CS 3.1.4.16).
    Send {
        /// Our sending player; `None`: our first application player, else our system player.
        from: Option<u32>,
        /// The receiving player.
        to: u32,
        /// The bytes.
        data: Vec<u8>,
        /// Over TCP; else a UDP datagram, fragmented beyond the MTU (MC-DPL4CS 3.1.4.18).
        guaranteed: bool,
    },
    /// Host: change the session's player limit and flags (MC-DPL4CS 3.2.4).
    SetSession {
        /// `MaxPlayers`; 0: no limit.
        max_players: u32,
        /// `Flags`.
        flags: SessionFlags,
    },
    /// Leave: DELETEPLAYER for each of our players to every other instance (MC-DPL4CS 3.1.4.5).
    Leave,
    /// Report every drop and refusal so far and what is held for others now
    /// ([`Dp4Event::DropSummary`], then [`Dp4Event::MemoryHeld`]), as at the end.
    Stats,
    /// Host: remove the instance of this player with DELETEPLAYER (MC-DPL4CS 3.1.5.14;
    /// [`Dp4Session::remove_instance`]).
    RemoveInstance(u32),
    /// Host: the names and addresses refused at join from now on (DPERR_ACCESSDENIED;
    /// [`Dp4Session::set_bans`]).
    SetBans(dplay_session::Bans),
    /// Host: a new password (`None`: none), announced with SESSIONDESCCHANGED
    /// ([`Dp4Session::set_password`]).
    SetPassword(Option<String>),
    /// A chat line (DPSP_MSG_CHAT, MC-DPL4CS 2.2.18) from our first application player (else
    /// our system player) to everyone.
    Chat(String),
    /// One DirectPlay Voice message as given, from our first application player (else our
    /// system player) to player `to`, in a non-guaranteed DPSP_MSG_VOICE (MC-DPL4CS 2.2.54; [`Dp4Session::send_voice`]). For tools
    /// and tests that speak voice themselves (`cargo xtask hostile`'s voice cases).
    SendVoice {
        /// The receiving player.
        to: u32,
        /// The voice message's bytes.
        data: Vec<u8>,
    },
}

/// One row of the Player List, as [`Dp4Event::PlayerList`] reports it (MC-DPL4CS 3.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dp4Player {
    /// Player ID.
    pub id: u32,
    /// Short name.
    pub name: Option<String>,
    /// A system player: one per instance.
    pub system: bool,
    /// The system player of its instance (itself for a system player).
    pub system_player: u32,
    /// It belongs to the host's instance.
    pub is_host: bool,
    /// It is one of ours.
    pub is_local: bool,
}

/// What the session tells the application.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dp4Event {
    /// An event of the session, as it reported it.
    Session(SessionEvent),
    /// The whole Player List, right after hosting starts, [`SessionEvent::Joined`] and
    /// [`SessionEvent::HostMigrated`].
    PlayerList(Vec<Dp4Player>),
    /// Received messages were dropped (bad offsets, unknown players, names over the limits,
    /// replies over the rate limits ...; MC-DPL4CS 3.1.5) or TCP connections closed by a
    /// deadline or a cap (docs/limits.md), and counted; the session goes on. Reported at most
    /// once a second, one event per reason that grew.
    Dropped {
        /// Why: a [`dplay_session::dp4::DropReason::name`] or a [`CloseReason::guard_name`], or `tcp-rejected`.
        reason: &'static str,
        /// How many since the last report.
        count: u64,
        /// How many in all.
        total: u64,
    },
    /// The session ended (or [`Dp4Command::Stats`] asked): every drop and refusal counted, by
    /// reason (as [`Dp4Event::Dropped`] names them).
    DropSummary(BTreeMap<&'static str, u64>),
    /// Right after each [`Dp4Event::DropSummary`]: the bytes held for others now, charged to
    /// the memory budget (`Dp4Limits::memory_budget`; docs/limits.md).
    MemoryHeld {
        /// Bytes held now.
        held: usize,
        /// The most held at once so far.
        peak: usize,
        /// The budget.
        budget: usize,
    },
    /// A TCP connection was closed because its bytes cannot be DirectPlay 4 messages (bad
    /// size or token, no 'play' from an unknown sender; MC-DPL4CS 2.2.6); the session goes
    /// on. Reported for the first such connection per source per 10 s; all are counted as
    /// `tcp-rejected`.
    StreamRejected {
        /// The remote end.
        peer: SocketAddr,
        /// Why.
        reason: String,
    },
    /// The session ended after running MC-DPL4R (DPSESSION_DIRECTPLAYPROTOCOL): the reliable
    /// protocol's counters over the whole session.
    Reliable(ReliableStats),
    /// We became the host by migration and answer enumeration on this UDP address now
    /// ([`Dp4Binding::enum_when_host`]; MC-DPL4CS 3.2.3). Could it not be opened, a
    /// [`Dp4Event::CommandFailed`] for "answer enumeration" says why.
    Enumerating(SocketAddr),
    /// A command could not be carried out, and why.
    CommandFailed {
        /// The command, briefly.
        command: &'static str,
        /// Why.
        error: String,
    },
    /// An event of the voice layer (`dplay host --dp4 --voice`, `dplay join --dp4
    /// --voice-test`).
    Voice(VoiceEvent),
}

/// A DirectPlay 4 session as a runtime [`Protocol`].
#[derive(Debug)]
pub struct Dp4Protocol {
    session: Dp4Session,
    events: VecDeque<Dp4Event>,
    /// Drops and refusals, counted and reported.
    report: Report,
    /// Set once [`SessionEvent::Ended`] was reported.
    ended: bool,
    /// Our TCP listener and UDP game socket, as peers are told them.
    addrs: (SocketAddrV4, SocketAddrV4),
    /// Bytes to and from each instance.
    bytes: PeerBytes,
    /// DirectPlay Voice above the session, if asked for.
    voice: Option<VoiceLayer>,
    /// The enumeration socket waits for a migration ([`Dp4Binding::enum_when_host`]); then it
    /// is asked for once.
    enum_on_demand: EnumSocket,
}

/// The enumeration socket of an endpoint that may become host by migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EnumSocket {
    /// Opened at start, or none.
    Fixed,
    /// Closed until we become host.
    Waiting,
    /// To be opened now.
    Wanted,
    /// Asked for.
    Asked,
}

impl Dp4Protocol {
    /// A participant in no session. `local` are the bound sockets of a
    /// [`Dp4Binding::runtime_config`] (as [`Runtime::try_spawn_with`] gives them): they become
    /// `config.datagram_addr` and `config.stream_addr`, the addresses peers are told.
    pub fn new(mut config: Dp4Config, local: &[SocketAddr]) -> Result<Self, RuntimeError> {
        set_bound_addrs(&mut config, local)?;
        let addrs = (config.stream_addr, config.datagram_addr);
        let session = Dp4Session::new(config).map_err(|e| RuntimeError::Protocol(e.to_string()))?;
        Ok(Self {
            session,
            events: VecDeque::new(),
            report: Report::default(),
            ended: false,
            addrs,
            bytes: PeerBytes::default(),
            voice: None,
            enum_on_demand: EnumSocket::Fixed,
        })
    }

    /// Runs DirectPlay Voice in `role` above the session (DPSP_MSG_VOICE, MC-DPL4CS 2.2.54);
    /// false (and no voice) for a voice session type we do not run.
    pub fn set_voice(&mut self, role: VoiceRole) -> bool {
        self.voice = VoiceLayer::new(role);
        self.voice.is_some()
    }

    /// The voice server, when `dplay host --dp4 --voice` runs one.
    pub fn voice_server(&self) -> Option<&dplay_voice::VoiceServer> {
        self.voice.as_ref()?.server()
    }

    /// Opens the sockets of `binding` (with `tap`, if any) and starts a runtime driving a new
    /// endpoint configured by `config`; peers are told `binding.advertised_datagram` as our
    /// game socket when it is set.
    pub fn spawn(
        binding: &Dp4Binding,
        config: Dp4Config,
        tap: Option<Box<dyn Tap>>,
    ) -> Result<Runtime<Self>, RuntimeError> {
        Self::spawn_wrapped(binding, config, tap, |p| p)
    }

    /// [`Dp4Protocol::spawn`], with the endpoint inside a protocol `wrap` makes of it (a
    /// dashboard's observer, say).
    pub fn spawn_wrapped<W: Protocol>(
        binding: &Dp4Binding,
        config: Dp4Config,
        tap: Option<Box<dyn Tap>>,
        wrap: impl FnOnce(Self) -> W,
    ) -> Result<Runtime<W>, RuntimeError> {
        let mut rc = binding.runtime_config();
        rc.tap = tap;
        Runtime::try_spawn_with(rc, |local| Self::bound(config, binding, local).map(wrap))
    }

    /// [`Dp4Protocol::spawn_wrapped`] for a host that relays for members behind NAT through
    /// `binding.relay_endpoints` endpoints (none: no relay), advertised at the IP `public`
    /// gives for the bound listener (docs/relay.md, "DirectPlay 4"); the relay comes back too.
    pub fn spawn_relayed<W: Protocol>(
        binding: &Dp4Binding,
        config: Dp4Config,
        tap: Option<Box<dyn Tap>>,
        public: impl FnOnce(SocketAddr) -> IpAddr,
        wrap: impl FnOnce(crate::Relayed<Self, SharedDp4Relay>) -> W,
    ) -> Result<(Runtime<W>, Option<SharedDp4Relay>), RuntimeError> {
        let mut rc = binding.runtime_config();
        rc.tap = tap;
        crate::relayed_dp4::spawn(
            binding,
            rc,
            config,
            public,
            |c, local| Self::bound(c, binding, local),
            wrap,
        )
    }

    /// A participant on the sockets `local` bound as `binding` says: told at its advertised
    /// game socket, its enumeration socket waiting for a migration when asked for.
    fn bound(config: Dp4Config, binding: &Dp4Binding, local: &[SocketAddr]) -> Result<Self, RuntimeError> {
        let mut p = Self::new(config, &binding.told(local))?;
        if binding.enum_when_host && binding.enum_port.is_some() {
            p.enum_on_demand = EnumSocket::Waiting;
        }
        Ok(p)
    }

    /// The session (read-only: commands go through [`Dp4Command`]).
    pub fn session(&self) -> &Dp4Session {
        &self.session
    }

    /// Bytes to and from each remote instance, by its addresses.
    pub fn peer_bytes(&self) -> &PeerBytes {
        &self.bytes
    }

    /// PINGs the other instances not probed lately, for their round trips
    /// ([`Dp4Session::probe_round_trips`]; a dashboard's, on the protocol thread).
    pub fn probe_round_trips(&mut self, now: Instant) {
        self.session.probe_round_trips(now);
    }

    /// Our TCP listener and UDP game socket, as peers are told them in every header's SockAddr
    /// and our SPData (MC-DPL4CS 2.2.2, 2.2.6).
    pub fn addrs(&self) -> (SocketAddrV4, SocketAddrV4) {
        self.addrs
    }

    /// The Player List as [`Dp4Player`] rows.
    pub fn players(&self) -> Vec<Dp4Player> {
        let host = self.session.host_player();
        self.session
            .players()
            .values()
            .map(|p| Dp4Player {
                id: p.id,
                name: p.short_name.as_ref().map(WideString::to_string_lossy),
                system: p.is_system(),
                system_player: p.system_player_id,
                is_host: Some(p.system_player_id) == host,
                is_local: p.local,
            })
            .collect()
    }

    /// Our first application player, else our system player.
    pub fn local_player(&self) -> Option<u32> {
        let players = self.session.players();
        players.values().find(|p| p.local && !p.is_system()).map(|p| p.id).or(self.session.system_player())
    }

    /// Moves the session's events into our queue, adding the Player List where useful and
    /// reporting new drops (at most once per [`crate::dp4_report::REPORT_INTERVAL`]).
    fn drain(&mut self, now: Instant) {
        while let Some(event) = self.session.poll_event() {
            if let Some(v) = &mut self.voice
                && v.on_dp4_event(now, &self.session, &event)
            {
                continue;
            }
            let snapshot = matches!(event, SessionEvent::Joined { .. } | SessionEvent::HostMigrated { .. });
            if matches!(event, SessionEvent::HostMigrated { local: true, .. })
                && self.enum_on_demand == EnumSocket::Waiting
            {
                self.enum_on_demand = EnumSocket::Wanted;
            }
            let ended = matches!(event, SessionEvent::Ended(_));
            self.events.push_back(Dp4Event::Session(event));
            let reliable = self.session.reliable_stats();
            if ended && !self.ended && reliable.frames_sent + reliable.frames_received > 0 {
                self.events.push_back(Dp4Event::Reliable(reliable.clone()));
            }
            if ended && !self.ended {
                self.summary();
            }
            self.ended |= ended;
            if snapshot {
                self.events.push_back(Dp4Event::PlayerList(self.players()));
            }
        }
        if let Some(v) = &mut self.voice {
            let mut voice = VecDeque::new();
            v.pump_dp4(now, &mut self.session, &mut voice);
            self.events.extend(voice.into_iter().map(Dp4Event::Voice));
        }
        let events = &mut self.events;
        self.report.report(now, self.session.stats(), |e| events.push_back(e));
    }

    /// The drops-and-refusals summary, the voice server's drops among them after its
    /// per-talker speech counts.
    fn summary(&mut self) {
        let mut summary = self.report.summary(self.session.stats());
        if let Some(speech) = VoiceLayer::dp4_summary(self.voice.as_ref(), &mut summary) {
            self.events.push_back(Dp4Event::Voice(speech));
        }
        self.events.extend(summary);
    }

    fn fail(&mut self, command: &'static str, error: impl ToString) {
        self.events.push_back(Dp4Event::CommandFailed { command, error: error.to_string() });
    }
}

impl Protocol for Dp4Protocol {
    type Command = Dp4Command;
    type Event = Dp4Event;

    fn memory_budget(&self) -> Option<dplay_wire::budget::MemoryBudget> {
        Some(self.session.memory_budget().clone())
    }

    fn handle_udp(&mut self, now: Instant, _socket: SocketId, from: SocketAddr, data: &[u8]) {
        self.bytes.datagram(from, data.len());
        self.session.handle_udp(now, from, data);
        self.bytes.prune(&self.session);
        self.drain(now);
    }

    fn handle_stream(
        &mut self,
        now: Instant,
        stream: StreamId,
        peer: SocketAddr,
        data: &[u8],
    ) -> Result<StreamStatus, String> {
        self.bytes.stream(stream, peer, data);
        let result = self.session.handle_tcp(now, stream.0, peer, data);
        if let Err(e) = &result
            && self.report.stream_rejected(now, peer, &e.to_string())
        {
            self.events.push_back(Dp4Event::StreamRejected { peer, reason: e.to_string() });
        }
        self.drain(now);
        result.map(stream_status).map_err(|e| e.to_string())
    }

    /// A connection we opened that could not be opened, broke, or closed with bytes still
    /// queued means its listener is unreachable: the session drops that instance
    /// ([`Dp4Session::handle_unreachable`]). One its peer closed or reset makes the session
    /// check that instance at once ([`Dp4Session::handle_tcp_lost`]: a killed process closes
    /// them all). One we closed is only forgotten.
    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        self.bytes.stream_closed(stream);
        self.report.stream_closed(now, closed.peer, &closed.reason);
        match stream_end(closed) {
            StreamEnd::Unreachable(to) => {
                self.session.handle_tcp_closed(stream.0);
                self.session.handle_unreachable(now, to);
            }
            StreamEnd::Lost => self.session.handle_tcp_lost(now, stream.0, closed.opened_to),
            StreamEnd::Ours => self.session.handle_tcp_closed(stream.0),
        }
        self.drain(now);
    }

    fn handle_command(&mut self, now: Instant, command: Dp4Command) {
        let hosting = matches!(command, Dp4Command::Host(_));
        let s = &mut self.session;
        let result = match command {
            Dp4Command::Host(config) => s.host(now, config).map_err(|e| ("host", e)),
            Dp4Command::EnumSessions { target: Some(to), request } => {
                s.enum_sessions_at(now, to, &request);
                Ok(())
            }
            Dp4Command::EnumSessions { target: None, request } => {
                s.enum_sessions(now, None, &request);
                Ok(())
            }
            Dp4Command::Join { host, password } => {
                s.join(now, host, password.as_deref()).map_err(|e| ("join", e))
            }
            Dp4Command::CreatePlayer(name) => s.create_player(now, &name).map_err(|e| ("create player", e)),
            Dp4Command::CreatePlayerWithData { name, data } => {
                s.create_player_with_data(now, &name, &data).map_err(|e| ("create player", e))
            }
            Dp4Command::Send { from, to, data, guaranteed } => match from.or_else(|| self.local_player()) {
                Some(from) => self.session.send(now, from, to, &data, guaranteed).map_err(|e| ("send", e)),
                None => Err(("send", CommandError::WrongState)),
            },
            Dp4Command::SetSession { max_players, flags } => {
                s.set_session(max_players, flags).map_err(|e| ("set session", e))
            }
            Dp4Command::Leave => {
                // SESSIONLOST to the voice clients first (MC-DPLVP 3.2.4).
                if let Some(v) = &mut self.voice {
                    let voice = v.shutdown_dp4(now, &mut self.session);
                    self.events.extend(voice.into_iter().map(Dp4Event::Voice));
                }
                self.session.leave().map_err(|e| ("leave", e))
            }
            Dp4Command::Stats => {
                self.summary();
                Ok(())
            }
            Dp4Command::RemoveInstance(id) => s.remove_instance(now, id).map_err(|e| ("remove player", e)),
            Dp4Command::SetBans(bans) => {
                s.set_bans(bans);
                Ok(())
            }
            Dp4Command::SetPassword(p) => s.set_password(p.as_deref()).map_err(|e| ("password", e)),
            Dp4Command::Chat(text) => match self.local_player() {
                Some(from) => self.session.send_chat_all(from, &text).map(drop).map_err(|e| ("chat", e)),
                None => Err(("chat", CommandError::WrongState)),
            },
            Dp4Command::SendVoice { to, data } => match self.local_player() {
                Some(from) => self.session.send_voice(now, from, to, &data, false).map_err(|e| ("voice", e)),
                None => Err(("voice", CommandError::WrongState)),
            },
        };
        match result {
            Err((command, error)) => self.fail(command, error),
            Ok(()) if hosting => self.events.push_back(Dp4Event::PlayerList(self.players())),
            Ok(()) => {}
        }
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.session.poll_timeout().is_some_and(|t| t <= now) {
            self.session.handle_timeout(now);
        }
        self.drain(now);
    }

    fn poll_send(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let t = self.session.poll_transmit()?;
        self.bytes.sent(t.to, t.bytes.len());
        Some(transmit(t, buf))
    }

    fn poll_event(&mut self) -> Option<Dp4Event> {
        self.events.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let voice = self.voice.as_ref().and_then(VoiceLayer::poll_timeout);
        [self.session.poll_timeout(), self.report.deadline(), voice].into_iter().flatten().min()
    }

    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        self.session.poll_abandoned()
    }

    /// The enumeration socket, once we became host by migration (MC-DPL4CS 3.2.3).
    fn poll_open(&mut self) -> Option<SocketId> {
        (self.enum_on_demand == EnumSocket::Wanted).then(|| {
            self.enum_on_demand = EnumSocket::Asked;
            Dp4Binding::ENUM_SOCKET
        })
    }

    fn handle_opened(&mut self, _now: Instant, _id: SocketId, result: Result<SocketAddr, String>) {
        match result {
            Ok(addr) => {
                tracing::info!(%addr, "DP4: the host by migration answers enumeration");
                self.events.push_back(Dp4Event::Enumerating(addr));
            }
            Err(error) => self.fail("answer enumeration", error),
        }
    }

    /// Out of the session: the loop ends once every queued message (the DELETEPLAYERs of a
    /// leave) is written.
    fn is_finished(&self) -> bool {
        self.ended
    }
}

/// Sets `config.datagram_addr` and `config.stream_addr`, the addresses peers are told, to the
/// bound sockets `local` of a [`Dp4Binding::runtime_config`].
pub(crate) fn set_bound_addrs(config: &mut Dp4Config, local: &[SocketAddr]) -> Result<(), RuntimeError> {
    let v4 = |id: SocketId| match local.get(id.0) {
        Some(SocketAddr::V4(a)) => Ok(*a),
        Some(SocketAddr::V6(a)) => Err(RuntimeError::Protocol(format!(
            "DirectPlay 4 runs over IPv4 only, not {a}: bind an IPv4 address"
        ))),
        None => Err(RuntimeError::Protocol("the DirectPlay 4 sockets are missing".into())),
    };
    config.datagram_addr = v4(Dp4Binding::GAME_SOCKET)?;
    config.stream_addr = v4(Dp4Binding::LISTENER)?;
    Ok(())
}

/// A session's transmit as the runtime's: its bytes into `buf`, UDP from the game socket.
pub(crate) fn transmit(t: Dp4Transmit, buf: &mut Vec<u8>) -> Transmit {
    buf.extend_from_slice(&t.bytes);
    let path = match t.via {
        Via::Udp => Path::Udp(Dp4Binding::GAME_SOCKET),
        Via::Tcp => Path::Tcp,
    };
    Transmit { to: t.to, path }
}

/// The session's view of a connection after a read, as the runtime's deadlines take it.
pub(crate) fn stream_status(s: TcpStatus) -> StreamStatus {
    StreamStatus { message: s.messages > 0, partial: s.buffered > 0, known: s.known }
}

/// What a closed connection tells about its instance.
pub(crate) enum StreamEnd {
    /// A connection we opened could not be opened, broke, or closed with bytes still queued:
    /// the listener it went to is unreachable.
    Unreachable(SocketAddr),
    /// Its peer closed or reset it: is that instance still there?
    Lost,
    /// We closed it (a deadline, a cap, a refused stream): nothing to learn.
    Ours,
}

/// How `closed` ended, for the session.
pub(crate) fn stream_end(closed: &StreamClosed) -> StreamEnd {
    if closed.reason == CloseReason::Abandoned {
        return StreamEnd::Ours;
    }
    let broken = matches!(
        closed.reason,
        CloseReason::ConnectFailed(_) | CloseReason::Failed(_) | CloseReason::Overflow
    );
    match closed.opened_to {
        Some(to) if broken || closed.unsent > 0 => {
            tracing::info!(%to, reason = ?closed.reason, "DP4 listener unreachable");
            StreamEnd::Unreachable(to)
        }
        _ if matches!(closed.reason, CloseReason::Closed | CloseReason::Failed(_)) => StreamEnd::Lost,
        _ => StreamEnd::Ours,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SocketKind;

    /// MC-DPL4CS 2.1: game TCP and UDP ports from 2300-2400; a host adds UDP 47624 (on every
    /// address but for a loopback host), able to broadcast; a client has no enumeration socket.
    #[test]
    fn binding_opens_the_sockets_of_2_1() {
        let host = Dp4Binding::host(Ipv4Addr::LOCALHOST).runtime_config();
        let kinds: Vec<SocketKind> = host.sockets.iter().map(|s| s.kind).collect();
        assert_eq!(
            kinds,
            [
                SocketKind::Udp { broadcast: true },
                SocketKind::TcpListener,
                SocketKind::Udp { broadcast: true }
            ]
        );
        assert_eq!(host.sockets[0].ports, GAME_PORT_FIRST..=GAME_PORT_LAST);
        assert_eq!(host.sockets[1].ports, GAME_PORT_FIRST..=GAME_PORT_LAST);
        assert_eq!(host.sockets[2].ports, ENUM_PORT..=ENUM_PORT);
        // On loopback, enumeration on loopback alone (issue 25 item 12); else on every address,
        // where broadcasts arrive.
        assert_eq!(host.sockets[2].ip, IpAddr::V4(Ipv4Addr::LOCALHOST));
        let lan = Dp4Binding::host(Ipv4Addr::new(192, 168, 1, 10)).runtime_config();
        assert_eq!(lan.sockets[2].ip, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        let fixed = Dp4Binding { stream_port: Some(2345), ..Dp4Binding::client(Ipv4Addr::LOCALHOST) };
        let client = fixed.runtime_config();
        assert_eq!(client.sockets.len(), 2);
        assert_eq!(client.sockets[1].ports, 2345..=2345);
    }

    /// Issue 27 item 16: a joiner's listener never takes the port of the host it joins.
    #[test]
    fn a_joiner_avoids_the_hosts_port() {
        let ports = |avoid| {
            let b = Dp4Binding { avoid_port: Some(avoid), ..Dp4Binding::client(Ipv4Addr::LOCALHOST) };
            b.runtime_config().sockets[1].ports.clone()
        };
        assert_eq!(ports(2300), 2301..=2400);
        assert_eq!(ports(2350), 2351..=2400);
        assert_eq!(ports(2400), 2300..=2399);
        assert_eq!(ports(6073), 2300..=2400);
    }

    /// MC-DPL4CS 2.2.6: the bound addresses become the SockAddr peers are told; IPv6 is refused.
    #[test]
    fn protocol_takes_its_addresses_from_the_sockets() {
        let local: Vec<SocketAddr> =
            vec!["127.0.0.1:2350".parse().unwrap(), "127.0.0.1:2300".parse().unwrap()];
        let p = Dp4Protocol::new(Dp4Config::default(), &local).unwrap();
        assert_eq!(p.session().role(), dplay_session::dp4::Role::Idle);
        assert!(p.players().is_empty());
        assert_eq!(p.addrs(), ("127.0.0.1:2300".parse().unwrap(), "127.0.0.1:2350".parse().unwrap()));
        let v6: Vec<SocketAddr> = vec!["[::1]:2350".parse().unwrap(), "[::1]:2300".parse().unwrap()];
        assert!(matches!(Dp4Protocol::new(Dp4Config::default(), &v6), Err(RuntimeError::Protocol(_))));
    }
}
