//! [`AddonDp4Protocol`]: the Flight Simulator add-on (FS98 dialect) over a DirectPlay 4
//! session, i.e. [`dplay_addon::AddonOverDp4`], driven by the runtime over the sockets of a
//! [`Dp4Binding`] (MC-DPL4CS 2.1; FS-MULTIPLAYER.md 1.5).
//!
//! The sockets are [`crate::Dp4Protocol`]'s: datagrams of the game and enumeration sockets go
//! to the session, UDP transmits leave from the game socket, TCP transmits go on the connection
//! the runtime keeps to their listener, and a connection we opened that breaks makes its
//! instance unreachable. On top, the commands an add-on needs: host an FS98 session, find one
//! by enumeration and join it, fly (set the position sent four times a second), chat, leave.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_addon::packet::ZString;
use dplay_addon::{
    AddonOverDp4, Client, ClientConfig, Event, HostConfig, OverDp4Event, PlayerId, Position, TrafficSnapshot,
    Velocity,
};
use dplay_session::dp4::{Dp4Config, Dp4Event as SessionEvent, Dp4Session, HostConfig as SessionHostConfig};

use crate::dp4::{StreamEnd, set_bound_addrs, stream_end, stream_status, transmit};
use crate::dp4_report::Report;
use crate::peer_bytes::PeerBytes;
use crate::voice::{VoiceLayer, VoiceRole};
use crate::{
    Dp4Binding, Dp4Event, Protocol, Runtime, RuntimeError, SocketId, StreamClosed, StreamId, StreamStatus,
    Tap, Transmit,
};

/// Which side of the add-on protocol we run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddonDp4Role {
    /// The session's host, answering joins.
    Host(HostConfig),
    /// A player or an observer joining a session.
    Client(ClientConfig),
}

/// What an application asks of the add-on over DirectPlay 4.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AddonDp4Command {
    /// Host this session ([`dplay_addon::over_dp4::fs98_host_config`] for FS98's); our player
    /// is created at once (MC-DPL4CS 3.2.3).
    Host(SessionHostConfig),
    /// Look for FS98 sessions at `target` (a host's enumeration socket, usually port 47624),
    /// or by broadcast when `None`, and join the first one found (FS-MULTIPLAYER.md 1.5 steps
    /// 1-2; MC-DPL4CS 3.1.4.1, 3.1.4.2).
    FindAndJoin {
        /// The host's enumeration socket, or `None` to broadcast.
        target: Option<SocketAddr>,
        /// The session's password, if it has one.
        password: Option<String>,
    },
    /// Join the session whose host listens on `host` (its TCP listener).
    Join {
        /// The host's TCP listener.
        host: SocketAddr,
        /// The session's password, if it has one.
        password: Option<String>,
    },
    /// A player's position from now on (sent four times a second once joined as a player).
    SetPosition(Position, Option<Velocity>),
    /// CHAT_TEXT to everyone.
    Chat(String),
    /// Report every tracked aircraft now ([`AddonDp4Event::Traffic`]).
    Traffic,
    /// Leave: a client leaves the session, a host ends it (HOST_QUIT, then leave).
    Leave,
    /// Report every drop and refusal so far and what is held for others now, as at the end.
    Stats,
    /// Host: remove instance `id` (a system player, or the instance of an application player)
    /// with DELETEPLAYER for each of its players, to it and to every other instance
    /// ([`dplay_session::dp4::Dp4Session::remove_instance`]; MC-DPL4CS 2.2.25, 3.1.5.14).
    RemoveInstance(u32),
    /// Host: the names and addresses refused at join from now on (DPERR_ACCESSDENIED;
    /// [`dplay_session::dp4::Dp4Session::set_bans`]).
    SetBans(dplay_session::Bans),
    /// Host: change `MaxPlayers` and the flags, announced with SESSIONDESCCHANGED
    /// (MC-DPL4CS 2.2.51).
    SetSession {
        /// `MaxPlayers`; 0: no limit.
        max_players: u32,
        /// `Flags`.
        flags: dplay_wire::dp4::session::SessionFlags,
    },
    /// Host: a new password (`None`: none), announced with SESSIONDESCCHANGED
    /// ([`dplay_session::dp4::Dp4Session::set_password`]).
    SetPassword(Option<String>),
}

/// What the add-on and its session tell the application.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AddonDp4Event {
    /// From the DirectPlay 4 layer: session events (application messages go to the add-on
    /// instead), rejected streams, failed commands.
    Dp4(Dp4Event),
    /// An event of the add-on (accepted positions become [`AddonDp4Event::Position`]).
    Addon(Event),
    /// The answer to [`AddonDp4Command::Traffic`]: every tracked aircraft, with short names.
    Traffic(TrafficSnapshot),
    /// A newer position of another player was accepted.
    Position {
        /// Whose.
        id: PlayerId,
        /// Its DirectPlay short name.
        name: Option<String>,
        /// Where.
        position: Position,
        /// Its velocities, if sent.
        velocity: Option<Velocity>,
    },
}

/// The add-on over a DirectPlay 4 session, as a runtime [`Protocol`].
#[derive(Debug)]
pub struct AddonDp4Protocol {
    bridge: AddonOverDp4,
    /// A [`AddonDp4Command::FindAndJoin`] under way: its password.
    finding: Option<Option<String>>,
    events: VecDeque<AddonDp4Event>,
    /// Drops and refusals, counted and reported as for [`crate::Dp4Protocol`].
    report: Report,
    /// Bytes to and from each instance.
    bytes: PeerBytes,
    /// DirectPlay Voice above the session, if asked for (`dplay fs host --dp4 --voice`).
    voice: Option<VoiceLayer>,
}

impl AddonDp4Protocol {
    /// An add-on in no session, whose DirectPlay player will be called `name`. `local` are the
    /// bound sockets of a [`Dp4Binding::runtime_config`]: they become `config.datagram_addr`
    /// and `config.stream_addr`, the addresses peers are told.
    pub fn new(
        mut config: Dp4Config,
        local: &[SocketAddr],
        role: AddonDp4Role,
        name: &str,
    ) -> Result<Self, RuntimeError> {
        set_bound_addrs(&mut config, local)?;
        let session = Dp4Session::new(config).map_err(|e| RuntimeError::Protocol(e.to_string()))?;
        let bridge = match role {
            AddonDp4Role::Host(config) => AddonOverDp4::host(session, config, name),
            AddonDp4Role::Client(config) => AddonOverDp4::client(session, Client::new(config), name),
        };
        Ok(Self {
            bridge,
            finding: None,
            events: VecDeque::new(),
            report: Report::default(),
            bytes: PeerBytes::default(),
            voice: None,
        })
    }

    /// Runs DirectPlay Voice in `role` above the session; false (and no voice) for a voice
    /// session type we do not run.
    pub fn set_voice(&mut self, role: VoiceRole) -> bool {
        self.voice = VoiceLayer::new(role);
        self.voice.is_some()
    }

    /// The voice server, when `dplay fs host --dp4 --voice` runs one.
    pub fn voice_server(&self) -> Option<&dplay_voice::VoiceServer> {
        self.voice.as_ref()?.server()
    }

    /// Opens the sockets of `binding` (with `tap`, if any) and starts a runtime driving a new
    /// add-on.
    pub fn spawn(
        binding: &Dp4Binding,
        config: Dp4Config,
        role: AddonDp4Role,
        name: &str,
        tap: Option<Box<dyn Tap>>,
    ) -> Result<Runtime<Self>, RuntimeError> {
        Self::spawn_wrapped(binding, config, role, name, tap, |p| p)
    }

    /// [`AddonDp4Protocol::spawn`], with the add-on inside a protocol `wrap` makes of it (a
    /// dashboard's observer, say).
    pub fn spawn_wrapped<W: Protocol>(
        binding: &Dp4Binding,
        config: Dp4Config,
        role: AddonDp4Role,
        name: &str,
        tap: Option<Box<dyn Tap>>,
        wrap: impl FnOnce(Self) -> W,
    ) -> Result<Runtime<W>, RuntimeError> {
        let mut rc = binding.runtime_config();
        rc.tap = tap;
        rc.thread_name = "dplay-fs-dp4".into();
        Runtime::try_spawn_with(rc, |local| Self::new(config, local, role, name).map(wrap))
    }

    /// [`AddonDp4Protocol::spawn_wrapped`] for a host that relays for members behind NAT
    /// ([`crate::Dp4Protocol::spawn_relayed`]; docs/relay.md, "DirectPlay 4").
    pub fn spawn_relayed<W: Protocol>(
        binding: &Dp4Binding,
        config: Dp4Config,
        role: AddonDp4Role,
        name: &str,
        tap: Option<Box<dyn Tap>>,
        public: impl FnOnce(SocketAddr) -> std::net::IpAddr,
        wrap: impl FnOnce(crate::Relayed<Self, crate::SharedDp4Relay>) -> W,
    ) -> Result<(Runtime<W>, Option<crate::SharedDp4Relay>), RuntimeError> {
        let mut rc = binding.runtime_config();
        rc.tap = tap;
        rc.thread_name = "dplay-fs-dp4".into();
        crate::relayed_dp4::spawn(
            binding,
            rc,
            config,
            public,
            |c, local| Self::new(c, local, role, name),
            wrap,
        )
    }

    /// The bridge (read-only: commands go through [`AddonDp4Command`]).
    pub fn bridge(&self) -> &AddonOverDp4 {
        &self.bridge
    }

    /// Bytes to and from each remote instance, by its addresses.
    pub fn peer_bytes(&self) -> &PeerBytes {
        &self.bytes
    }

    /// PINGs the other instances not probed lately, for their round trips
    /// ([`dplay_session::dp4::Dp4Session::probe_round_trips`]; a dashboard's, on the protocol
    /// thread).
    pub fn probe_round_trips(&mut self, now: Instant) {
        self.bridge.session_mut().probe_round_trips(now);
    }

    /// Every tracked aircraft at `now`, with short names (empty before the add-on runs).
    pub fn traffic(&self, now: Instant) -> TrafficSnapshot {
        let b = &self.bridge;
        b.tracker().map(|t| TrafficSnapshot::new(t, now, |id| b.player_name(id))).unwrap_or_default()
    }

    /// After a command given to the session directly: its events reach the add-on, and a
    /// refusal is reported.
    fn session_done<E: ToString>(&mut self, now: Instant, command: &'static str, result: Result<(), E>) {
        self.bridge.handle_timeout(now);
        if let Err(e) = result {
            self.fail(command, e);
        }
    }

    fn fail(&mut self, command: &'static str, error: impl ToString) {
        self.events
            .push_back(AddonDp4Event::Dp4(Dp4Event::CommandFailed { command, error: error.to_string() }));
    }

    /// Moves the bridge's events into our queue: a found session is joined when asked to,
    /// accepted positions are looked up.
    fn drain(&mut self, now: Instant) {
        while let Some(event) = self.bridge.poll_event() {
            match event {
                OverDp4Event::Session(e)
                    if self
                        .voice
                        .as_mut()
                        .is_some_and(|v| v.on_dp4_event(now, self.bridge.session(), &e)) => {}
                OverDp4Event::Session(e) => self.session_event(now, e),
                OverDp4Event::Addon(Event::PositionUpdated { id }) => {
                    let fix = self.bridge.tracker().and_then(|t| t.get(id)).and_then(|r| r.fix.as_ref());
                    if let Some(fix) = fix {
                        self.events.push_back(AddonDp4Event::Position {
                            id,
                            name: self.bridge.player_name(id),
                            position: fix.position,
                            velocity: fix.velocity,
                        });
                    }
                }
                OverDp4Event::Addon(e) => self.events.push_back(AddonDp4Event::Addon(e)),
            }
        }
        if let Some(v) = &mut self.voice {
            let mut voice = VecDeque::new();
            v.pump_dp4(now, self.bridge.session_mut(), &mut voice);
            self.events.extend(voice.into_iter().map(|e| AddonDp4Event::Dp4(Dp4Event::Voice(e))));
        }
        let events = &mut self.events;
        self.report.report(now, self.bridge.session().stats(), |e| events.push_back(AddonDp4Event::Dp4(e)));
    }

    /// The drops-and-refusals summary, the voice server's drops among them after its
    /// per-talker speech counts.
    fn summary(&mut self) {
        let mut summary = self.report.summary(self.bridge.session().stats());
        if let Some(speech) = VoiceLayer::dp4_summary(self.voice.as_ref(), &mut summary) {
            self.events.push_back(AddonDp4Event::Dp4(Dp4Event::Voice(speech)));
        }
        self.events.extend(summary.map(AddonDp4Event::Dp4));
    }

    fn session_event(&mut self, now: Instant, event: SessionEvent) {
        match &event {
            SessionEvent::SessionFound(found) => {
                if let Some(password) = self.finding.take()
                    && let Err(e) = self.bridge.join(now, found.host, password.as_deref())
                {
                    self.fail("join", e);
                }
            }
            SessionEvent::EnumDone if self.finding.take().is_some() => {
                self.fail("join", "no Flight Simulator 98 session answered the enumeration");
            }
            _ => {}
        }
        let ended = matches!(event, SessionEvent::Ended(_));
        self.events.push_back(AddonDp4Event::Dp4(Dp4Event::Session(event)));
        if ended {
            self.summary();
        }
    }
}

impl Protocol for AddonDp4Protocol {
    type Command = AddonDp4Command;
    type Event = AddonDp4Event;

    fn memory_budget(&self) -> Option<dplay_wire::budget::MemoryBudget> {
        Some(self.bridge.session().memory_budget().clone())
    }

    fn handle_udp(&mut self, now: Instant, _socket: SocketId, from: SocketAddr, data: &[u8]) {
        self.bytes.datagram(from, data.len());
        self.bridge.handle_udp(now, from, data);
        self.bytes.prune(self.bridge.session());
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
        let result = self.bridge.handle_tcp(now, stream.0, peer, data).map_err(|e| e.to_string());
        if let Err(reason) = &result
            && self.report.stream_rejected(now, peer, reason)
        {
            self.events
                .push_back(AddonDp4Event::Dp4(Dp4Event::StreamRejected { peer, reason: reason.clone() }));
        }
        self.drain(now);
        result.map(stream_status)
    }

    /// As [`crate::Dp4Protocol`]: a connection we opened that could not be opened, broke, or
    /// closed with bytes still queued makes its instance unreachable.
    fn handle_stream_closed(&mut self, now: Instant, stream: StreamId, closed: &StreamClosed) {
        self.bytes.stream_closed(stream);
        self.report.stream_closed(now, closed.peer, &closed.reason);
        match stream_end(closed) {
            StreamEnd::Unreachable(to) => {
                self.bridge.handle_tcp_closed(stream.0);
                self.bridge.handle_unreachable(now, to);
            }
            StreamEnd::Lost => self.bridge.handle_tcp_lost(now, stream.0, closed.opened_to),
            StreamEnd::Ours => self.bridge.handle_tcp_closed(stream.0),
        }
        self.drain(now);
    }

    fn handle_command(&mut self, now: Instant, command: AddonDp4Command) {
        match command {
            AddonDp4Command::Host(config) => {
                if let Err(e) = self.bridge.host_session(now, config) {
                    self.fail("host", e);
                }
            }
            AddonDp4Command::FindAndJoin { target, password } => {
                self.bridge.enum_sessions(now, target, password.as_deref());
                self.finding = Some(password);
            }
            AddonDp4Command::Join { host, password } => {
                if let Err(e) = self.bridge.join(now, host, password.as_deref()) {
                    self.fail("join", e);
                }
            }
            AddonDp4Command::SetPosition(p, v) => {
                let _ = self.bridge.with_client(now, |c, now| {
                    c.set_position(now, p, v);
                    Ok(())
                });
            }
            AddonDp4Command::Chat(text) => {
                let text = ZString::from_text(&text);
                let sent = match self.bridge.with_client(now, |c, now| c.send_chat(now, text.clone())) {
                    Some(r) => r.map_err(|e| e.to_string()),
                    None => self
                        .bridge
                        .with_host(now, |h, now| h.send_chat(now, text))
                        .ok_or("not hosting yet".into()),
                };
                if let Err(e) = sent {
                    self.fail("chat", e);
                }
            }
            AddonDp4Command::Traffic => {
                let snapshot = self.traffic(now);
                self.events.push_back(AddonDp4Event::Traffic(snapshot));
            }
            AddonDp4Command::Stats => self.summary(),
            AddonDp4Command::Leave => {
                // SESSIONLOST to the voice clients first (MC-DPLVP 3.2.4).
                if let Some(v) = &mut self.voice {
                    let voice = v.shutdown_dp4(now, self.bridge.session_mut());
                    self.events.extend(voice.into_iter().map(|e| AddonDp4Event::Dp4(Dp4Event::Voice(e))));
                }
                let left = self.bridge.with_client(now, |c, now| {
                    c.leave(now);
                    Ok(())
                });
                let ended =
                    left.is_some() || self.bridge.with_host(now, |h, now| h.end_session(now)).is_some();
                if !ended && let Err(e) = self.bridge.session_mut().leave() {
                    self.fail("leave", e);
                }
                self.bridge.handle_timeout(now);
            }
            AddonDp4Command::RemoveInstance(id) => {
                let r = self.bridge.session_mut().remove_instance(now, id);
                self.session_done(now, "remove player", r);
            }
            AddonDp4Command::SetBans(bans) => self.bridge.session_mut().set_bans(bans),
            AddonDp4Command::SetSession { max_players, flags } => {
                let r = self.bridge.session_mut().set_session(max_players, flags);
                self.session_done(now, "set session", r);
            }
            AddonDp4Command::SetPassword(p) => {
                let r = self.bridge.session_mut().set_password(p.as_deref());
                self.session_done(now, "password", r);
            }
        }
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.bridge.poll_timeout().is_some_and(|t| t <= now) {
            self.bridge.handle_timeout(now);
        }
        self.drain(now);
    }

    fn poll_send(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<Transmit> {
        let t = self.bridge.poll_transmit()?;
        self.bytes.sent(t.to, t.bytes.len());
        Some(transmit(t, buf))
    }

    fn poll_event(&mut self) -> Option<AddonDp4Event> {
        self.events.pop_front()
    }

    fn poll_abandon(&mut self) -> Option<SocketAddr> {
        self.bridge.session_mut().poll_abandoned()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let voice = self.voice.as_ref().and_then(VoiceLayer::poll_timeout);
        [self.bridge.poll_timeout(), self.report.deadline(), voice].into_iter().flatten().min()
    }

    /// Out of the session: the loop ends once every queued message (HOST_QUIT, the
    /// DELETEPLAYERs of a leave) is written.
    fn is_finished(&self) -> bool {
        self.bridge.session().role() == dplay_session::dp4::Role::Ended
    }
}
