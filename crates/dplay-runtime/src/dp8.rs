//! [`Dp8Protocol`]: a DirectPlay 8 [`Session`] driven by the runtime, with commands for what an
//! application asks of it (host, enumerate, join, send, leave) and the session's events.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_session::{CommandError, Event, SendFlags, Session, SessionConfig};
use dplay_wire::WideString;
use dplay_wire::dp8::dpnid::Dpnid;
use uuid::Uuid;

use crate::Protocol;
use crate::voice::{VoiceEvent, VoiceLayer, VoiceRole};

/// What an application asks of a DirectPlay 8 session.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dp8Command {
    /// Create the session described by the configuration, with us as host (or server).
    Host,
    /// Join the session hosted at `host`; `instance` is the EnumResponse's instance GUID.
    Join {
        /// The host's address.
        host: SocketAddr,
        /// The session instance, if known from an enumeration.
        instance: Option<Uuid>,
    },
    /// Look for sessions at `target`, optionally of one application only.
    EnumHosts {
        /// A host or broadcast address.
        target: SocketAddr,
        /// Only sessions of this application answer.
        application_guid: Option<Uuid>,
    },
    /// Application data to every player we are connected to.
    SendAll {
        /// The bytes.
        data: Vec<u8>,
        /// Delivery category.
        flags: SendFlags,
    },
    /// Application data to one player.
    SendTo {
        /// The receiver.
        to: Dpnid,
        /// The bytes.
        data: Vec<u8>,
        /// Delivery category.
        flags: SendFlags,
    },
    /// A DXDiag chat message to everyone.
    Chat(String),
    /// Change our own player's name and/or data (DN_REQ_UPDATE_INFO, MC-DPL8CS 3.5).
    SetInfo {
        /// The new name, if any.
        name: Option<String>,
        /// The new data, if any.
        data: Option<Vec<u8>>,
    },
    /// A group operation or a send to a group.
    Group(GroupCommand),
    /// Leave gracefully.
    Leave,
    /// Host: end the session for everyone.
    Terminate,
    /// Report the drops and refusals so far ([`Dp8Event::Refusals`]).
    Refusals,
    /// Host: remove one player; the others learn it with DESTROY_PLAYER, reason
    /// HOSTDESTROYEDPLAYER (MS-DPDX 3.1.5.5; MC-DPL8CS 3.2.5.2).
    RemovePlayer(Dpnid),
    /// Host: the names and addresses refused at join from now on (DPNERR_HOSTREJECTEDCONNECTION;
    /// [`Session::set_bans`]).
    SetBans(dplay_session::Bans),
    /// Host: a new player limit (0: none) for the joins that follow ([`Session::set_max_players`]).
    SetMaxPlayers(u32),
    /// Host: the password the joins that follow need (`None`: none; [`Session::set_password`]).
    SetPassword(Option<String>),
    /// One DirectPlay Voice message as given, to one player, with PACKET_COMMAND_USER_2 and
    /// neither guaranteed nor ordered (MC-DPLVP 2.1; [`Session::send_voice`]). For tools and
    /// tests that speak voice themselves (`cargo xtask hostile`'s `voice_flood`).
    SendVoice {
        /// The receiver.
        to: Dpnid,
        /// The voice message's bytes.
        data: Vec<u8>,
    },
}

/// What an application asks of a DirectPlay 8 session's groups (MC-DPL8CS 3.4.5.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupCommand {
    /// Create a group (DN_REQ_CREATE_GROUP to the host, or at once on the host); it appears
    /// as [`dplay_session::TableChange::GroupCreated`].
    Create {
        /// Its name.
        name: String,
        /// Its data.
        data: Vec<u8>,
    },
    /// Add a player to a group (DN_REQ_ADD_PLAYER_TO_GROUP).
    Add {
        /// The group.
        group: Dpnid,
        /// The player.
        player: Dpnid,
    },
    /// Add our own player to the group named so (DN_REQ_ADD_PLAYER_TO_GROUP); of several
    /// groups with that name, the lowest DPNID. Fails with DPNERR_INVALIDGROUP when none has it.
    JoinNamed(String),
    /// Application data to every member of a group (to ourselves too when we are one, unless
    /// `flags.no_loopback`).
    Send {
        /// The group.
        group: Dpnid,
        /// The bytes.
        data: Vec<u8>,
        /// Delivery category.
        flags: SendFlags,
    },
}

impl GroupCommand {
    /// Carries the command out on `s`: for a request the host answers later, its name and
    /// context ([`Dp8Event::Started`]); on failure, the command's name and why.
    pub(crate) fn apply(
        self,
        s: &mut Session,
        now: Instant,
    ) -> Result<Option<(&'static str, u32)>, (&'static str, CommandError)> {
        let (command, result) = match self {
            Self::Create { name, data } => ("create group", s.create_group(now, &name, &data, false)),
            Self::Add { group, player } => ("add to group", s.add_to_group(now, group, player)),
            Self::JoinNamed(name) => {
                let group = group_named(s, &name).ok_or(("join group", CommandError::InvalidGroup))?;
                let local = s.local_dpnid();
                ("join group", s.add_to_group(now, group, local))
            }
            Self::Send { group, data, flags } => {
                return s
                    .send_to_group(now, group, &data, flags)
                    .map(|()| None)
                    .map_err(|e| ("send to group", e));
            }
        };
        result.map(|context| Some((command, context))).map_err(|e| (command, e))
    }
}

/// One row of the name table, as [`Dp8Event::NameTable`] reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Player {
    /// The player's DPNID.
    pub dpnid: Dpnid,
    /// Its name.
    pub name: String,
    /// It is the host.
    pub is_host: bool,
    /// It is us.
    pub is_local: bool,
}

/// What the session tells the application.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dp8Event {
    /// An event of the session layer, as it reported it.
    Session(Event),
    /// The whole name table, reported right after [`Event::Joined`] and [`Event::HostMigrated`].
    NameTable(Vec<Player>),
    /// The drops and refusals so far, and what is held for others, as asked by
    /// [`Dp8Command::Refusals`].
    Refusals(dplay_session::Refusals),
    /// An event of the voice layer (`dplay host --voice`, `dplay join --voice-test`).
    Voice(VoiceEvent),
    /// A request the host answers later (a group change, our information) is under way: the
    /// [`Event::Completed`] with this context says how it ended (MC-DPL8CS 3.4, 3.5).
    Started {
        /// The command, briefly (as in [`Dp8Event::CommandFailed`]).
        command: &'static str,
        /// The context its [`Event::Completed`] carries.
        context: u32,
    },
    /// A command could not be carried out, and why.
    CommandFailed {
        /// The command, briefly.
        command: &'static str,
        /// Why.
        error: String,
    },
}

/// A DirectPlay 8 session as a runtime [`Protocol`].
#[derive(Debug)]
pub struct Dp8Protocol {
    session: Session,
    events: VecDeque<Dp8Event>,
    /// Set once [`Event::SessionEnded`] was reported.
    ended: bool,
    /// DirectPlay Voice above the session, if asked for.
    voice: Option<VoiceLayer>,
}

impl Dp8Protocol {
    /// A participant in no session; `now` is the transport's time origin.
    pub fn new(config: SessionConfig, now: Instant) -> Self {
        Self { session: Session::new(config, now), events: VecDeque::new(), ended: false, voice: None }
    }

    /// Runs DirectPlay Voice in `role` above the session; false (and no voice) for a voice
    /// session type we do not run.
    pub fn set_voice(&mut self, role: VoiceRole) -> bool {
        self.voice = VoiceLayer::new(role);
        self.voice.is_some()
    }

    /// The voice server, when `dplay host --voice` runs one.
    pub fn voice_server(&self) -> Option<&dplay_voice::VoiceServer> {
        self.voice.as_ref()?.server()
    }

    /// The session (read-only: commands go through [`Dp8Command`]).
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The name table as [`Player`] rows.
    pub fn players(&self) -> Vec<Player> {
        players(&self.session)
    }

    /// Moves the session's events into our queue, adding a name-table snapshot where useful;
    /// voice messages go to the voice layer.
    fn drain(&mut self, now: Instant) {
        while let Some(event) = self.session.poll_event() {
            if let Some(v) = &mut self.voice
                && v.on_event(now, &self.session, &event)
            {
                continue;
            }
            let snapshot = matches!(event, Event::Joined { .. } | Event::HostMigrated { .. });
            if matches!(event, Event::SessionEnded { .. }) {
                self.ended = true;
            }
            self.events.push_back(Dp8Event::Session(event));
            if snapshot {
                self.events.push_back(Dp8Event::NameTable(self.players()));
            }
        }
        if let Some(v) = &mut self.voice {
            let mut voice = VecDeque::new();
            v.pump(now, &mut self.session, &mut voice);
            self.events.extend(voice.into_iter().map(Dp8Event::Voice));
        }
    }

    fn fail(&mut self, command: &'static str, error: impl ToString) {
        self.events.push_back(Dp8Event::CommandFailed { command, error: error.to_string() });
    }
}

/// The host is leaving: the voice server tells its clients (SESSIONLOST, MC-DPLVP 3.2.4)
/// before the session's goodbyes.
fn voice_shutdown(
    voice: Option<&mut VoiceLayer>,
    now: Instant,
    s: &mut Session,
    events: &mut VecDeque<Dp8Event>,
) {
    if let Some(v) = voice {
        v.shutdown();
        let mut voice = VecDeque::new();
        v.pump(now, s, &mut voice);
        events.extend(voice.into_iter().map(Dp8Event::Voice));
    }
}

impl Protocol for Dp8Protocol {
    type Command = Dp8Command;
    type Event = Dp8Event;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        self.session.handle_datagram(now, from, data);
        self.drain(now);
    }

    fn handle_command(&mut self, now: Instant, command: Dp8Command) {
        let s = &mut self.session;
        // A request the host answers later: its name and context.
        let mut started = None;
        let result = match command {
            Dp8Command::Host => s.host(now).map_err(|e| ("host", e)),
            Dp8Command::Join { host, instance } => s.join(now, host, instance).map_err(|e| ("join", e)),
            Dp8Command::EnumHosts { target, application_guid } => {
                s.enum_hosts(now, target, application_guid).map_err(|e| ("enum", e))
            }
            Dp8Command::SendAll { data, flags } => s.send_all(now, &data, flags).map_err(|e| ("send", e)),
            Dp8Command::SendTo { to, data, flags } => {
                s.send_to(now, to, &data, flags).map_err(|e| ("send", e))
            }
            Dp8Command::Chat(text) => s.send_chat(now, &text).map_err(|e| ("chat", e)),
            Dp8Command::SetInfo { name, data } => {
                let local = s.local_dpnid();
                s.set_info(now, local, name.as_deref(), data.as_deref())
                    .map(|context| started = Some(("set-info", context)))
                    .map_err(|e| ("set-info", e))
            }
            Dp8Command::Group(command) => command.apply(s, now).map(|op| started = op),
            Dp8Command::Leave => {
                voice_shutdown(self.voice.as_mut(), now, s, &mut self.events);
                s.leave(now);
                Ok(())
            }
            Dp8Command::Terminate => {
                voice_shutdown(self.voice.as_mut(), now, s, &mut self.events);
                s.terminate_session(now, &[]).map_err(|e| ("terminate", e))
            }
            Dp8Command::Refusals => {
                let mut refusals = s.refusals();
                if let Some(v) = self.voice.as_ref().and_then(VoiceLayer::server) {
                    refusals.counts.extend(v.stats().drops());
                    let talkers = v.talkers().iter().map(|t| (t.dvid, t.speech)).collect();
                    self.events.push_back(Dp8Event::Voice(VoiceEvent::Speech(talkers)));
                }
                self.events.push_back(Dp8Event::Refusals(refusals));
                Ok(())
            }
            Dp8Command::RemovePlayer(dpnid) => s.remove_player(now, dpnid).map_err(|e| ("remove player", e)),
            Dp8Command::SetBans(bans) => {
                s.set_bans(bans);
                Ok(())
            }
            Dp8Command::SetMaxPlayers(n) => s.set_max_players(n).map_err(|e| ("max players", e)),
            Dp8Command::SetPassword(p) => s.set_password(p).map_err(|e| ("password", e)),
            Dp8Command::SendVoice { to, data } => {
                s.send_voice(now, to, &data, false).map_err(|e| ("voice", e))
            }
        };
        if let Some((command, context)) = started {
            self.events.push_back(Dp8Event::Started { command, context });
        }
        if let Err((command, error)) = result {
            self.fail(command, error);
        }
        self.drain(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.session.handle_timeout(now);
        self.drain(now);
    }

    fn poll_transmit(&mut self, _now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        self.session.poll_transmit_into(buf)
    }

    fn poll_event(&mut self) -> Option<Dp8Event> {
        self.events.pop_front()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let voice = self.voice.as_ref().and_then(VoiceLayer::poll_timeout);
        self.session.poll_timeout().into_iter().chain(voice).min()
    }

    /// Out of the session with every connection closed (a closed connection's linger, which
    /// only answers the peer's retries, is not waited for; the peer got four SACKs,
    /// MS-DPDX 3.1.5.3): the loop may end.
    fn is_finished(&self) -> bool {
        self.ended && self.session.endpoint().active_connection_count() == 0
    }
}

/// The group named `name` with the lowest DPNID.
fn group_named(session: &Session, name: &str) -> Option<Dpnid> {
    let named = |e: &&dplay_wire::dp8::session::NameTableEntry| {
        e.name.as_ref().is_some_and(|n| n.to_string_lossy() == name)
    };
    session.name_table().groups().filter(named).map(|e| e.dpnid).min()
}

/// The session's name table as [`Player`] rows.
pub(crate) fn players(session: &Session) -> Vec<Player> {
    let host = session.host_dpnid();
    let local = session.local_dpnid();
    session
        .name_table()
        .players()
        .map(|e| Player {
            dpnid: e.dpnid,
            name: e.name.as_ref().map(WideString::to_string_lossy).unwrap_or_default(),
            is_host: e.dpnid == host,
            is_local: e.dpnid == local,
        })
        .collect()
}
