//! The add-on as a player or an observer: join, confirm, positions, observer change, plane,
//! crash and chat, row by row of seed 004's packet table (FS-MULTIPLAYER.md 1.4, 1.5).
//!
//! Sans-IO: every input takes `now`; outputs are queued ([`Endpoint`]).

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::host::{Duties, HostPolicy};
use crate::packet::{
    ChangePlayerPlane, ChatText, Dialect, Packet, PacketId, PlayerInfo, PlayerInfoFlags, PositionLlapbh,
    ZString,
};
use crate::session_iface::{
    DisconnectReason, Endpoint, Event, Outbox, Outgoing, PlayerId, Role, Stats, Target,
};
use crate::tracking::{Accepted, Position, Tracker, Velocity, unwritten_tail};

/// Join and observer-change retransmit interval, and the re-query interval for players whose
/// type is unknown (seed 004 rows RETRANSMIT_JOIN_*, RETRANSMIT_GO_OBSERVER, QUERY_PLAYER_TYPE).
pub const RETRANSMIT_INTERVAL: Duration = Duration::from_secs(30);
/// A player sends its position four times a second (seed 004, first paragraph).
pub const POSITION_INTERVAL: Duration = Duration::from_millis(250);

/// Which position packet a player sends (seed 004 rows POSITION_LLAPBH, POSITION_VELOCITY).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub enum PositionFormat {
    /// POSITION_LLAPBH (FS2004: POSITION_SLEWMODE): others do not extrapolate.
    Llapbh,
    /// POSITION_VELOCITY: others can extrapolate.
    #[default]
    Velocity,
}

/// How the add-on joins and behaves.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// Packet numbering and layouts.
    pub dialect: Dialect,
    /// Join as a player or an observer.
    pub role: Role,
    /// The plane announced with CHANGE_PLAYER_PLANE once joined as a player, and in answer to
    /// QUERY_PLAYER_PLANE; `None` never sends one (seed 004 rows CHANGE_PLAYER_PLANE,
    /// QUERY_PLAYER_PLANE).
    pub plane: Option<ChangePlayerPlane>,
    /// LLAPBH or VELOCITY.
    pub position_format: PositionFormat,
    /// Send positions guaranteed (the seed does not say; docs/decisions.md).
    pub positions_guaranteed: bool,
}

impl ClientConfig {
    /// The PLAYER_INFO_STRUCT an FS2004 joiner puts in its DirectPlay 8 player data: OBSERVER
    /// for an observer, no PARAMS flags since we neither send nor want PARAMS, and the plane's
    /// title (FS-MULTIPLAYER.md 3.1, 3.6).
    pub fn player_info(&self) -> PlayerInfo {
        let flags = match self.role {
            Role::Player => PlayerInfoFlags::empty(),
            Role::Observer => PlayerInfoFlags::OBSERVER,
        };
        PlayerInfo {
            flags,
            aircraft: self.plane.as_ref().map(|p| p.aircraft_name.clone()).unwrap_or_default(),
        }
    }

    /// FS98 dialect, the given role, no plane, POSITION_VELOCITY not guaranteed.
    pub fn new(role: Role) -> Self {
        Self {
            dialect: Dialect::Fs98,
            role,
            plane: None,
            position_format: PositionFormat::Velocity,
            positions_guaranteed: false,
        }
    }
}

/// Where the add-on is in its session (seed 004 rows ADD_*_REQUEST to OBSERVER_CHANGE_*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClientState {
    /// Not started.
    Idle,
    /// ADD_*_REQUEST sent; waiting for CHANGE_TO_* with our id or a refusal.
    Joining {
        /// The role asked for.
        role: Role,
    },
    /// Confirmed as `role`.
    Joined {
        /// The role granted.
        role: Role,
    },
    /// A player that sent REQUEST_OBSERVER and awaits OBSERVER_CHANGE_OK / REFUSED.
    ChangingToObserver,
    /// Refused, removed or left: the connection is to be closed.
    Closed,
}

/// Why a command was not carried out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error, Serialize)]
#[non_exhaustive]
pub enum CommandError {
    /// Only before [`Client::start`].
    #[error("already started")]
    AlreadyStarted,
    /// Only once confirmed as a player.
    #[error("not joined as a player")]
    NotAPlayer,
    /// An observer never becomes a player again, and asks to become an observer only once.
    #[error("already an observer or changing to one")]
    AlreadyObserver,
    /// PLAYER_CRASH goes only to a player outside its collision-avoidance window.
    #[error("that player cannot be collided with now")]
    CannotCollide,
    /// The dialect has no such packet (FS2004 has no REQUEST_OBSERVER).
    #[error("not in this dialect")]
    NotInDialect,
    /// The add-on has left the session.
    #[error("closed")]
    Closed,
}

/// The add-on's player/observer state machine (seed 004).
#[derive(Debug)]
pub struct Client {
    config: ClientConfig,
    state: ClientState,
    own_id: PlayerId,
    out: Outbox,
    tracker: Tracker,
    stats: Stats,
    /// RETRANSMIT_JOIN_* or RETRANSMIT_GO_OBSERVER due.
    retransmit_at: Option<Instant>,
    /// QUERY_PLAYER_TYPE to unknown players due.
    query_at: Option<Instant>,
    /// The next position packet due.
    position_at: Option<Instant>,
    position: Option<(Position, Option<Velocity>)>,
    packet_index: u32,
    /// The add-on host's duties, once the session's host role migrated to us (FS98; FS2004
    /// has none beyond what every peer does).
    duties: Option<Duties>,
}

impl Client {
    /// A client that has not joined yet.
    pub fn new(config: ClientConfig) -> Self {
        Self {
            out: Outbox::new(config.dialect),
            tracker: Tracker::new(config.dialect),
            config,
            state: ClientState::Idle,
            own_id: PlayerId(0),
            stats: Stats::default(),
            retransmit_at: None,
            query_at: None,
            position_at: None,
            position: None,
            packet_index: 0,
            duties: None,
        }
    }

    /// The session's host role migrated to us: from now on we also answer joins and observer
    /// changes by `policy` (the FS98 host duties), keeping our own role and everything tracked
    /// (docs/decisions.md "Add-on host migration"). A second call changes nothing.
    pub fn become_host(&mut self, policy: HostPolicy) {
        if self.duties.is_none() && self.state != ClientState::Closed {
            self.duties = Some(Duties::new(policy));
            self.out.event(Event::BecameHost);
        }
    }

    /// Whether we do the add-on host's duties ([`Client::become_host`]).
    pub fn is_host(&self) -> bool {
        self.duties.is_some()
    }

    /// Joins, once the session layer has connected and created our player `own_id`.
    ///
    /// FS98: sends ADD_PLAYER_REQUEST or ADD_OBSERVER_REQUEST to all players, guaranteed
    /// (seed 004 rows ADD_PLAYER_REQUEST, ADD_OBSERVER_REQUEST). FS2004 has no handshake: the
    /// role travels in [`crate::packet::PlayerInfo`], so the client is joined at once.
    pub fn start(&mut self, now: Instant, own_id: PlayerId) -> Result<(), CommandError> {
        if self.state != ClientState::Idle {
            return Err(CommandError::AlreadyStarted);
        }
        self.own_id = own_id;
        // We are not one of the others, even if the roster listed us.
        self.tracker.player_left(own_id);
        let role = self.config.role;
        match self.config.dialect {
            Dialect::Fs98 => {
                let id = match role {
                    Role::Player => PacketId::ADD_PLAYER_REQUEST,
                    Role::Observer => PacketId::ADD_OBSERVER_REQUEST,
                };
                self.out.send(Target::All, true, &Packet::signal(id));
                self.state = ClientState::Joining { role };
                self.retransmit_at = now.checked_add(RETRANSMIT_INTERVAL);
            }
            Dialect::Fs2004 => self.confirmed(now, role),
        }
        Ok(())
    }

    /// The position (and velocities, for POSITION_VELOCITY) to send from now on.
    pub fn set_position(&mut self, now: Instant, position: Position, velocity: Option<Velocity>) {
        self.position = Some((position, velocity));
        if self.is_player() && self.position_at.is_none() {
            self.position_at = Some(now);
        }
    }

    /// Asks to become an observer: REQUEST_OBSERVER to all, then RETRANSMIT_GO_OBSERVER every
    /// 30 s until OBSERVER_CHANGE_OK or OBSERVER_CHANGE_REFUSED (seed 004 rows REQUEST_OBSERVER,
    /// RETRANSMIT_GO_OBSERVER). Only a confirmed player may; never back from observer.
    pub fn request_observer(&mut self, now: Instant) -> Result<(), CommandError> {
        self.check_open()?;
        if self.config.dialect != Dialect::Fs98 {
            return Err(CommandError::NotInDialect);
        }
        match self.state {
            ClientState::Joined { role: Role::Player } => {}
            ClientState::Joined { role: Role::Observer } | ClientState::ChangingToObserver => {
                return Err(CommandError::AlreadyObserver);
            }
            _ => return Err(CommandError::NotAPlayer),
        }
        self.out.send(Target::All, true, &Packet::signal(PacketId::REQUEST_OBSERVER));
        self.state = ClientState::ChangingToObserver;
        self.retransmit_at = now.checked_add(RETRANSMIT_INTERVAL);
        Ok(())
    }

    /// Changes our plane and announces it with CHANGE_PLAYER_PLANE to all (seed 004 row
    /// CHANGE_PLAYER_PLANE: "can do so to change the visual model").
    pub fn change_plane(&mut self, _now: Instant, plane: ChangePlayerPlane) -> Result<(), CommandError> {
        self.check_open()?;
        if !self.is_player() {
            return Err(CommandError::NotAPlayer);
        }
        self.out.send(Target::All, true, &Packet::ChangePlayerPlane(plane.clone()));
        self.config.plane = Some(plane);
        Ok(())
    }

    /// Reports a collision with `with`: PLAYER_CRASH to that player only, and only if it is a
    /// player (not an observer) outside its collision-avoidance window (seed 004 rows
    /// PLAYER_CRASH, POSITION_LLAPBH).
    pub fn report_crash(&mut self, now: Instant, with: PlayerId) -> Result<(), CommandError> {
        self.check_open()?;
        if self.config.dialect != Dialect::Fs98 {
            return Err(CommandError::NotInDialect);
        }
        if !self.is_player() {
            return Err(CommandError::NotAPlayer);
        }
        if !self.tracker.can_collide(with, now) {
            return Err(CommandError::CannotCollide);
        }
        self.out.send(Target::One(with), true, &Packet::signal(PacketId::PLAYER_CRASH));
        Ok(())
    }

    /// Sends a chat line to all, guaranteed, NUL included (seed 004 row CHAT_TEXT). An observer
    /// does not send unprompted (seed 004, first paragraph), so only players chat.
    pub fn send_chat(&mut self, _now: Instant, text: ZString) -> Result<(), CommandError> {
        self.check_open()?;
        if !self.is_player() {
            return Err(CommandError::NotAPlayer);
        }
        self.out.send(Target::All, true, &Packet::ChatText(ChatText { chat_data: text }));
        Ok(())
    }

    /// Leaves: nothing is sent (an add-on never sends LEAVE_SESSION); the driver is told to
    /// close the connection.
    pub fn leave(&mut self, _now: Instant) {
        if self.state != ClientState::Closed {
            self.close(DisconnectReason::Left);
        }
    }

    /// Where the client is.
    pub fn state(&self) -> ClientState {
        self.state
    }

    /// Our DirectPlay id (given to [`Client::start`]).
    pub fn own_id(&self) -> PlayerId {
        self.own_id
    }

    /// The other players.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Receive counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    fn check_open(&self) -> Result<(), CommandError> {
        if self.state == ClientState::Closed { Err(CommandError::Closed) } else { Ok(()) }
    }

    /// A player sends positions, also while its observer change is pending.
    fn is_player(&self) -> bool {
        matches!(self.state, ClientState::Joined { role: Role::Player } | ClientState::ChangingToObserver)
    }

    fn confirmed_role(&self) -> Option<Role> {
        match self.state {
            ClientState::Joined { role } => Some(role),
            ClientState::ChangingToObserver => Some(Role::Player),
            _ => None,
        }
    }

    fn close(&mut self, reason: DisconnectReason) {
        self.state = ClientState::Closed;
        self.retransmit_at = None;
        self.query_at = None;
        self.position_at = None;
        self.out.event(Event::Disconnect(reason));
    }

    /// CHANGE_TO_* with our id, or the FS2004 join: start the role's duties.
    fn confirmed(&mut self, now: Instant, role: Role) {
        self.state = ClientState::Joined { role };
        self.retransmit_at = None;
        self.out.event(Event::Joined { role });
        if role == Role::Player {
            if let Some(plane) = &self.config.plane {
                self.out.send(Target::All, true, &Packet::ChangePlayerPlane(plane.clone()));
            }
            if self.position.is_some() {
                self.position_at = Some(now);
            }
        }
        if self.config.dialect == Dialect::Fs98 {
            self.query_unknown(now);
        }
    }

    /// QUERY_PLAYER_TYPE to every player whose type is unknown, then again in 30 s while any
    /// is (seed 004 row QUERY_PLAYER_TYPE; FS-MULTIPLAYER.md 1.5 step 5).
    fn query_unknown(&mut self, now: Instant) {
        let unknown = self.tracker.unknown();
        for id in &unknown {
            self.out.send(Target::One(*id), true, &Packet::signal(PacketId::QUERY_PLAYER_TYPE));
        }
        self.query_at = if unknown.is_empty() { None } else { now.checked_add(RETRANSMIT_INTERVAL) };
    }

    fn send_position(&mut self, now: Instant) {
        let Some((position, velocity)) = self.position else { return };
        let packet_index = self.packet_index;
        self.packet_index = self.packet_index.wrapping_add(1);
        let packet = match self.config.position_format {
            PositionFormat::Llapbh => Packet::PositionLlapbh(PositionLlapbh {
                application_time: 0,
                packet_index,
                reserved: 0,
                reduced_llapbh: position.to_reduced(),
                padding: Default::default(),
                unwritten: unwritten_tail(self.config.dialect),
            }),
            PositionFormat::Velocity => Packet::PositionVelocity(velocity.unwrap_or_default().to_packet(
                self.config.dialect,
                packet_index,
                &position,
            )),
        };
        self.out.send(Target::All, self.config.positions_guaranteed, &packet);
        self.position_at = now.checked_add(POSITION_INTERVAL);
    }

    fn ignore(&mut self) {
        self.stats.ignored += 1;
    }

    /// One FS98 header-only or private packet, by id (seed 004 table).
    fn handle_signal(&mut self, from: PlayerId, id: PacketId) {
        if let Some(d) = &mut self.duties
            && d.handle_signal(from, id, &mut self.tracker, &mut self.out)
        {
            return;
        }
        match (id, self.state) {
            (PacketId::ADD_PLAYER_REFUSED, ClientState::Joining { role: Role::Player })
            | (PacketId::ADD_OBSERVER_REFUSED, ClientState::Joining { role: Role::Observer }) => {
                self.out.event(Event::Refused { role: self.config.role });
                self.close(DisconnectReason::Refused);
            }
            (PacketId::QUERY_PLAYER_TYPE, _) => match self.confirmed_role() {
                Some(Role::Player) => {
                    self.out.send(
                        Target::One(from),
                        true,
                        &Packet::ChangeToPlayer { player_id: self.own_id.0 },
                    );
                }
                Some(Role::Observer) => {
                    self.out.send(
                        Target::One(from),
                        true,
                        &Packet::ChangeToObserver { player_id: self.own_id.0 },
                    );
                }
                None => self.ignore(),
            },
            (PacketId::OBSERVER_CHANGE_OK, ClientState::ChangingToObserver) => {
                self.state = ClientState::Joined { role: Role::Observer };
                self.retransmit_at = None;
                self.position_at = None;
                self.out.event(Event::BecameObserver);
            }
            (PacketId::OBSERVER_CHANGE_REFUSED, ClientState::ChangingToObserver) => {
                self.state = ClientState::Joined { role: Role::Player };
                self.retransmit_at = None;
                self.out.event(Event::ObserverChangeRefused);
            }
            (PacketId::QUERY_PLAYER_PLANE, _) if self.is_player() => match &self.config.plane {
                Some(plane) => {
                    self.out.send(Target::One(from), true, &Packet::ChangePlayerPlane(plane.clone()))
                }
                None => self.ignore(),
            },
            (PacketId::PLAYER_CRASH, _) if self.is_player() => self.out.event(Event::Crash { from }),
            (PacketId::LEAVE_SESSION, _) => self.close(DisconnectReason::RemovedByHost),
            // Every other row says "should be ignored", or the packet does not fit our state.
            _ => self.ignore(),
        }
    }

    /// CHANGE_TO_PLAYER / CHANGE_TO_OBSERVER (seed 004 rows CHANGE_TO_PLAYER, CHANGE_TO_OBSERVER).
    fn handle_change_to(&mut self, now: Instant, player_id: PlayerId, role: Role) {
        if player_id != self.own_id {
            self.tracker.set_role(player_id, role);
            self.out.event(Event::PlayerType { id: player_id, role });
            return;
        }
        match self.state {
            ClientState::Joining { role: asked } if asked == role => self.confirmed(now, role),
            // Answers to our own queries, retransmits of the confirmation, and any attempt to
            // turn an observer back into a player.
            _ => self.ignore(),
        }
    }
}

impl Endpoint for Client {
    fn player_joined(&mut self, now: Instant, id: PlayerId) {
        if id == self.own_id && self.state != ClientState::Idle {
            return;
        }
        self.tracker.player_joined(id);
        if self.config.dialect == Dialect::Fs98 && self.confirmed_role().is_some() {
            self.out.send(Target::One(id), true, &Packet::signal(PacketId::QUERY_PLAYER_TYPE));
            if self.query_at.is_none() {
                self.query_at = now.checked_add(RETRANSMIT_INTERVAL);
            }
        }
    }

    fn player_info(&mut self, _now: Instant, id: PlayerId, info: PlayerInfo) {
        if id == self.own_id || self.config.dialect != Dialect::Fs2004 {
            return;
        }
        let role = self.tracker.set_info(id, info);
        self.out.event(Event::PlayerType { id, role });
    }

    fn player_left(&mut self, _now: Instant, id: PlayerId) {
        if let Some(d) = &mut self.duties {
            d.forget(id);
        }
        if self.tracker.player_left(id) {
            self.out.event(Event::PlayerLeft { id });
        }
    }

    fn handle_message(&mut self, now: Instant, from: PlayerId, bytes: &[u8]) {
        self.stats.received += 1;
        if matches!(self.state, ClientState::Idle | ClientState::Closed) {
            return self.ignore();
        }
        let Ok(packet) = Packet::parse(self.config.dialect, bytes) else {
            self.stats.malformed += 1;
            return;
        };
        match packet {
            Packet::ChangeToPlayer { player_id } => {
                self.handle_change_to(now, PlayerId(player_id), Role::Player)
            }
            Packet::ChangeToObserver { player_id } => {
                self.handle_change_to(now, PlayerId(player_id), Role::Observer);
            }
            Packet::ChangePlayerPlane(p) => {
                self.out.event(Event::PlaneChanged {
                    id: from,
                    engine_type: p.engine_type,
                    aircraft_name: p.aircraft_name.clone(),
                });
                self.tracker.set_plane(from, p);
            }
            Packet::PositionLlapbh(p) => {
                let accepted = self.tracker.position_llapbh(now, from, &p);
                self.position_outcome(from, accepted);
            }
            Packet::PositionVelocity(p) => {
                let accepted = self.tracker.position_velocity(now, from, &p);
                self.position_outcome(from, accepted);
            }
            Packet::ChatText(c) => self.out.event(Event::Chat { from, text: c.chat_data }),
            Packet::Opaque(o) if self.config.dialect == Dialect::Fs98 => {
                self.handle_signal(from, PacketId(o.id))
            }
            Packet::Opaque(_) => self.ignore(),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.retransmit_at.is_some_and(|t| now >= t) {
            let id = match self.state {
                ClientState::Joining { role: Role::Player } => Some(PacketId::RETRANSMIT_JOIN_PLAYER),
                ClientState::Joining { role: Role::Observer } => Some(PacketId::RETRANSMIT_JOIN_OBSERVER),
                ClientState::ChangingToObserver => Some(PacketId::RETRANSMIT_GO_OBSERVER),
                _ => None,
            };
            if let Some(id) = id {
                self.out.send(Target::All, true, &Packet::signal(id));
            }
            self.retransmit_at = id.and_then(|_| now.checked_add(RETRANSMIT_INTERVAL));
        }
        if self.query_at.is_some_and(|t| now >= t) {
            self.query_unknown(now);
        }
        if self.position_at.is_some_and(|t| now >= t) {
            if self.is_player() {
                self.send_position(now);
            } else {
                self.position_at = None;
            }
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        [self.retransmit_at, self.query_at, self.position_at].into_iter().flatten().min()
    }

    fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.out.poll_outgoing()
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.out.poll_event()
    }
}

impl Client {
    fn position_outcome(&mut self, from: PlayerId, accepted: Accepted) {
        match accepted {
            Accepted::Yes => self.out.event(Event::PositionUpdated { id: from }),
            Accepted::Stale => self.stats.stale_positions += 1,
        }
    }
}
