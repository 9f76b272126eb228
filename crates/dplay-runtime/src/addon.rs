//! [`AddonProtocol`]: the Flight Simulator add-on over a DirectPlay 8 session, a thin driver of
//! [`dplay_addon::AddonOverDp8`], the one bridge between the add-on and a session (its module
//! documentation gives the mapping). This driver only turns commands into calls on the bridge
//! and the bridge's events into [`AddonEvent`]s, adding what an application wants to print: a
//! name-table snapshot after joining and the position each accepted update carried.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_addon::packet::ZString;
use dplay_addon::{
    AddonOverDp8, Client, ClientConfig, HostConfig, OverDp8Event, PlayerId, Position, TrafficSnapshot,
    Velocity,
};
use dplay_session::{CommandError, Event, Session, SessionConfig};

use crate::Protocol;
use crate::dp8::{Dp8Command, Dp8Event, Player, players};
use crate::voice::{VoiceLayer, VoiceRole};

/// Which side of the add-on protocol we run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddonRole {
    /// The session's host, answering joins.
    Host(HostConfig),
    /// A player or an observer joining a session.
    Client(ClientConfig),
}

/// What an application asks of the add-on.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AddonCommand {
    /// A command for the DirectPlay 8 session underneath (host, join, leave ...).
    Session(Dp8Command),
    /// A player's position from now on (sent four times a second by the add-on).
    SetPosition(Position, Option<Velocity>),
    /// CHAT_TEXT to everyone.
    Chat(String),
    /// Report every tracked aircraft now ([`AddonEvent::Traffic`]).
    Traffic,
}

/// What the add-on and its session tell the application.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum AddonEvent {
    /// An event of the session underneath (application messages go to the add-on instead).
    Session(Dp8Event),
    /// An event of the add-on.
    Addon(dplay_addon::Event),
    /// The answer to [`AddonCommand::Traffic`]: every tracked aircraft, named from the name
    /// table.
    Traffic(TrafficSnapshot),
    /// A newer position of another player was accepted.
    Position {
        /// Whose.
        id: PlayerId,
        /// Where.
        position: Position,
        /// Its velocities, if sent.
        velocity: Option<Velocity>,
    },
}

/// The add-on over a DirectPlay 8 session, as a runtime [`Protocol`].
#[derive(Debug)]
pub struct AddonProtocol {
    bridge: AddonOverDp8,
    events: VecDeque<AddonEvent>,
    /// Set once the session reported its end.
    ended: bool,
    /// DirectPlay Voice above the session, if asked for (`dplay fs host --voice`).
    voice: Option<VoiceLayer>,
}

impl AddonProtocol {
    /// An add-on in no session yet; send [`Dp8Command::Host`] or [`Dp8Command::Join`].
    pub fn new(config: SessionConfig, role: AddonRole, now: Instant) -> Self {
        let session = Session::new(config, now);
        let bridge = match role {
            AddonRole::Host(config) => AddonOverDp8::host(session, config),
            AddonRole::Client(config) => AddonOverDp8::client(session, Client::new(config)),
        };
        Self { bridge, events: VecDeque::new(), ended: false, voice: None }
    }

    /// Runs DirectPlay Voice in `role` above the session; false (and no voice) for a voice
    /// session type we do not run.
    pub fn set_voice(&mut self, role: VoiceRole) -> bool {
        self.voice = VoiceLayer::new(role);
        self.voice.is_some()
    }

    /// The voice server, when `dplay fs host --voice` runs one.
    pub fn voice_server(&self) -> Option<&dplay_voice::VoiceServer> {
        self.voice.as_ref()?.server()
    }

    /// The bridge underneath.
    pub fn bridge(&self) -> &AddonOverDp8 {
        &self.bridge
    }

    /// The session's name table as [`Player`] rows.
    pub fn players(&self) -> Vec<Player> {
        players(self.bridge.session())
    }

    /// Every tracked aircraft at `now`, named from the name table (empty before the add-on
    /// runs).
    pub fn traffic(&self, now: Instant) -> TrafficSnapshot {
        let session = self.bridge.session();
        let name = |id: PlayerId| {
            let entry = session.name_table().get(dplay_wire::dp8::dpnid::Dpnid(id.0))?;
            entry.name.as_ref().map(dplay_wire::WideString::to_string_lossy)
        };
        self.bridge.tracker().map(|t| TrafficSnapshot::new(t, now, name)).unwrap_or_default()
    }

    /// Moves the bridge's events into ours, then lets the voice layer send.
    fn drain(&mut self, now: Instant) {
        self.drain_bridge(now);
        if let Some(v) = &mut self.voice {
            let mut voice = VecDeque::new();
            self.bridge.with_session(now, |s, now| v.pump(now, s, &mut voice));
            self.events.extend(voice.into_iter().map(|e| AddonEvent::Session(Dp8Event::Voice(e))));
            self.drain_bridge(now);
        }
    }

    /// Moves the bridge's events into ours (voice messages to the voice layer).
    fn drain_bridge(&mut self, now: Instant) {
        while let Some(event) = self.bridge.poll_event() {
            match event {
                OverDp8Event::Session(e)
                    if self.voice.as_mut().is_some_and(|v| v.on_event(now, self.bridge.session(), &e)) => {}
                OverDp8Event::Session(e) => {
                    let snapshot = matches!(e, Event::Joined { .. } | Event::HostMigrated { .. });
                    self.ended |= matches!(e, Event::SessionEnded { .. });
                    self.events.push_back(AddonEvent::Session(Dp8Event::Session(e)));
                    if snapshot {
                        let table = players(self.bridge.session());
                        self.events.push_back(AddonEvent::Session(Dp8Event::NameTable(table)));
                    }
                }
                OverDp8Event::Addon(dplay_addon::Event::PositionUpdated { id }) => {
                    let fix = self.bridge.tracker().and_then(|t| t.get(id)?.fix.as_ref());
                    if let Some(f) = fix {
                        let (position, velocity) = (f.position, f.velocity);
                        self.events.push_back(AddonEvent::Position { id, position, velocity });
                    }
                }
                OverDp8Event::Addon(e) => self.events.push_back(AddonEvent::Addon(e)),
            }
        }
    }

    fn fail(&mut self, command: &'static str, error: impl ToString) {
        let error = error.to_string();
        self.events.push_back(AddonEvent::Session(Dp8Event::CommandFailed { command, error }));
    }

    fn session_command(
        &mut self,
        now: Instant,
        command: Dp8Command,
    ) -> Result<(), (&'static str, CommandError)> {
        let b = &mut self.bridge;
        match command {
            Dp8Command::Host => b.host_session(now).map_err(|e| ("host", e)),
            Dp8Command::Join { host, instance } => b.join(now, host, instance).map_err(|e| ("join", e)),
            Dp8Command::EnumHosts { target, application_guid } => b
                .with_session(now, |s, now| s.enum_hosts(now, target, application_guid))
                .map_err(|e| ("enum", e)),
            Dp8Command::SendAll { data, flags } => {
                b.with_session(now, |s, now| s.send_all(now, &data, flags)).map_err(|e| ("send", e))
            }
            Dp8Command::SendTo { to, data, flags } => {
                b.with_session(now, |s, now| s.send_to(now, to, &data, flags)).map_err(|e| ("send", e))
            }
            Dp8Command::Chat(text) => {
                b.with_session(now, |s, now| s.send_chat(now, &text)).map_err(|e| ("chat", e))
            }
            Dp8Command::SetInfo { name, data } => b
                .with_session(now, |s, now| {
                    let local = s.local_dpnid();
                    s.set_info(now, local, name.as_deref(), data.as_deref())
                })
                .map(|context| started(&mut self.events, Some(("set-info", context))))
                .map_err(|e| ("set-info", e)),
            Dp8Command::Group(command) => {
                b.with_session(now, |s, now| command.apply(s, now)).map(|op| started(&mut self.events, op))
            }
            Dp8Command::Leave => {
                b.with_session(now, Session::leave);
                Ok(())
            }
            Dp8Command::Terminate => {
                b.with_session(now, |s, now| s.terminate_session(now, &[])).map_err(|e| ("terminate", e))
            }
            Dp8Command::Refusals => {
                let mut refusals = b.with_session(now, |s, _| s.refusals());
                if let Some(v) = self.voice.as_ref().and_then(VoiceLayer::server) {
                    refusals.counts.extend(v.stats().drops());
                    let talkers = v.talkers().iter().map(|t| (t.dvid, t.speech)).collect();
                    self.events
                        .push_back(AddonEvent::Session(Dp8Event::Voice(crate::VoiceEvent::Speech(talkers))));
                }
                self.events.push_back(AddonEvent::Session(Dp8Event::Refusals(refusals)));
                Ok(())
            }
            Dp8Command::RemovePlayer(dpnid) => {
                b.with_session(now, |s, now| s.remove_player(now, dpnid)).map_err(|e| ("remove player", e))
            }
            Dp8Command::SetBans(bans) => {
                b.with_session(now, |s, _| s.set_bans(bans));
                Ok(())
            }
            Dp8Command::SetMaxPlayers(n) => {
                b.with_session(now, |s, _| s.set_max_players(n)).map_err(|e| ("max players", e))
            }
            Dp8Command::SetPassword(p) => {
                b.with_session(now, |s, _| s.set_password(p)).map_err(|e| ("password", e))
            }
            Dp8Command::SendVoice { to, data } => {
                b.with_session(now, |s, now| s.send_voice(now, to, &data, false)).map_err(|e| ("voice", e))
            }
        }
    }

    fn chat(&mut self, now: Instant, text: &str) {
        let text = ZString::from_text(text);
        let client = self.bridge.with_client(now, |c, now| c.send_chat(now, text.clone()));
        match client {
            Some(Ok(())) => {}
            Some(Err(e)) => self.fail("chat", e),
            None => {
                if self.bridge.with_host(now, |h, now| h.send_chat(now, text)).is_none() {
                    self.fail("chat", "not in a session yet");
                }
            }
        }
    }
}

impl Protocol for AddonProtocol {
    type Command = AddonCommand;
    type Event = AddonEvent;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.bridge.handle_datagram(now, from, data);
        self.drain(now);
    }

    fn handle_command(&mut self, now: Instant, command: AddonCommand) {
        match command {
            AddonCommand::Session(c) => {
                if let Err((command, error)) = self.session_command(now, c) {
                    self.fail(command, error);
                }
            }
            AddonCommand::SetPosition(p, v) => {
                // A host has no position of its own; a client keeps it until it starts.
                let _ = self.bridge.with_client(now, |c, now| {
                    c.set_position(now, p, v);
                    Ok(())
                });
            }
            AddonCommand::Chat(text) => self.chat(now, &text),
            AddonCommand::Traffic => {
                let snapshot = self.traffic(now);
                self.events.push_back(AddonEvent::Traffic(snapshot));
            }
        }
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.bridge.handle_timeout(now);
        self.drain(now);
    }

    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let transmit = self.bridge.poll_transmit()?;
        buf.extend_from_slice(&transmit.contents);
        Some(transmit.destination)
    }

    fn poll_event(&mut self) -> Option<AddonEvent> {
        self.events.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let voice = self.voice.as_ref().and_then(VoiceLayer::poll_timeout);
        self.bridge.poll_timeout().into_iter().chain(voice).min()
    }

    /// Out of the session with every connection closed (a closed connection's linger, which
    /// only answers the peer's retries, is not waited for; the peer got four SACKs,
    /// MS-DPDX 3.1.5.3): the loop may end.
    fn is_finished(&self) -> bool {
        self.ended && self.bridge.session().endpoint().active_connection_count() == 0
    }
}

/// A request the host answers later is under way ([`Dp8Event::Started`]).
fn started(events: &mut VecDeque<AddonEvent>, op: Option<(&'static str, u32)>) {
    if let Some((command, context)) = op {
        events.push_back(AddonEvent::Session(Dp8Event::Started { command, context }));
    }
}
