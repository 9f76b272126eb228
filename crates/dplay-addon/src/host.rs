//! The host's side, so that add-ons and Flight Simulator itself can join a session we host.
//! FS98: answer the join and observer requests by policy, query unknown players, remove players
//! and end the session (seed 004 rows ADD_*_REQUEST, CHANGE_TO_*, ADD_*_REFUSED,
//! QUERY_PLAYER_TYPE, REQUEST_OBSERVER, OBSERVER_CHANGE_*, HOST_QUIT, LEAVE_SESSION;
//! FS-MULTIPLAYER.md 1.4, 1.5). FS2004: no handshake; a joiner's PLAYER_INFO_STRUCT says what
//! it is, and the host relays nothing, since every peer sends to every other
//! (FS-MULTIPLAYER.md 3.1).

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

use crate::client::RETRANSMIT_INTERVAL;
use crate::packet::{ChatText, Dialect, Packet, PacketId, PlayerInfo, ZString};
use crate::session_iface::{
    DisconnectReason, Endpoint, Event, Outbox, Outgoing, PlayerId, Role, Stats, Target,
};
use crate::tracking::{Accepted, Tracker};

/// Who may join, and as what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HostPolicy {
    /// At most this many other players accepted as players; `None` for no limit.
    pub max_players: Option<usize>,
    /// Whether ADD_OBSERVER_REQUEST and REQUEST_OBSERVER are granted.
    pub allow_observers: bool,
}

impl Default for HostPolicy {
    fn default() -> Self {
        Self { max_players: None, allow_observers: true }
    }
}

/// How the host side behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct HostConfig {
    /// Our own type, given in answer to QUERY_PLAYER_TYPE.
    pub own_role: Role,
    /// Join policy.
    pub policy: HostPolicy,
    /// FS98 (the join handshake) or FS2004 (none: the player data says who joins,
    /// FS-MULTIPLAYER.md 3.1).
    pub dialect: Dialect,
}

impl HostConfig {
    /// A host of `dialect` that is `own_role` itself, with `policy`.
    pub fn new(dialect: Dialect, own_role: Role, policy: HostPolicy) -> Self {
        Self { own_role, policy, dialect }
    }
}

/// What the host decided for one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
enum Decision {
    Accepted(Role),
    Refused(Role),
}

/// The add-on host's duties in an FS98 session: answering ADD_*_REQUEST, RETRANSMIT_JOIN_*,
/// REQUEST_OBSERVER and RETRANSMIT_GO_OBSERVER by policy (seed 004 rows of those names). Kept
/// apart from [`Host`] so that a [`crate::Client`] whose session migrated to it takes them over
/// (docs/decisions.md "Add-on host migration").
#[derive(Debug, Clone)]
pub(crate) struct Duties {
    policy: HostPolicy,
    decisions: BTreeMap<PlayerId, Decision>,
}

impl Duties {
    pub(crate) fn new(policy: HostPolicy) -> Self {
        Self { policy, decisions: BTreeMap::new() }
    }

    /// Handles `id` from `from` if it is a host's packet; false when it is not one.
    pub(crate) fn handle_signal(
        &mut self,
        from: PlayerId,
        id: PacketId,
        tracker: &mut Tracker,
        out: &mut Outbox,
    ) -> bool {
        match id {
            PacketId::ADD_PLAYER_REQUEST | PacketId::RETRANSMIT_JOIN_PLAYER => {
                self.join(from, Role::Player, tracker, out)
            }
            PacketId::ADD_OBSERVER_REQUEST | PacketId::RETRANSMIT_JOIN_OBSERVER => {
                self.join(from, Role::Observer, tracker, out)
            }
            PacketId::REQUEST_OBSERVER | PacketId::RETRANSMIT_GO_OBSERVER => {
                return self.go_observer(from, tracker, out);
            }
            _ => return false,
        }
        true
    }

    /// `id` left: its decision is forgotten.
    pub(crate) fn forget(&mut self, id: PlayerId) {
        self.decisions.remove(&id);
    }

    /// A type settled by the player's own CHANGE_TO_* counts as granted.
    pub(crate) fn settle(&mut self, id: PlayerId, role: Role) {
        self.decisions.entry(id).or_insert(Decision::Accepted(role));
    }

    /// Players accepted, or known as players from before (a migrated host), besides us.
    fn players(tracker: &Tracker) -> usize {
        tracker.iter().filter(|(_, r)| r.role == Some(Role::Player)).count()
    }

    /// ADD_*_REQUEST or RETRANSMIT_JOIN_*: decide once, then repeat the same answer.
    fn join(&mut self, from: PlayerId, role: Role, tracker: &mut Tracker, out: &mut Outbox) {
        let decision = match self.decisions.get(&from) {
            // Never from observer back to player (seed 004 row REQUEST_OBSERVER).
            Some(Decision::Accepted(Role::Observer)) if role == Role::Player => Decision::Refused(role),
            Some(Decision::Accepted(granted)) => return announce(out, Target::One(from), from, *granted),
            Some(Decision::Refused(asked)) if *asked == role => Decision::Refused(role),
            _ => {
                let allowed = match role {
                    Role::Player => self.policy.max_players.is_none_or(|max| Self::players(tracker) < max),
                    Role::Observer => self.policy.allow_observers,
                };
                if allowed { Decision::Accepted(role) } else { Decision::Refused(role) }
            }
        };
        self.decisions.insert(from, decision);
        match decision {
            Decision::Accepted(role) => {
                tracker.set_role(from, role);
                announce(out, Target::All, from, role);
                out.event(Event::Accepted { id: from, role });
            }
            Decision::Refused(role) => {
                let refused = match role {
                    Role::Player => PacketId::ADD_PLAYER_REFUSED,
                    Role::Observer => PacketId::ADD_OBSERVER_REFUSED,
                };
                out.send(Target::One(from), true, &Packet::signal(refused));
                out.event(Event::Denied { id: from, role });
            }
        }
    }

    /// REQUEST_OBSERVER or RETRANSMIT_GO_OBSERVER from a player; false when `from` is unknown.
    fn go_observer(&mut self, from: PlayerId, tracker: &mut Tracker, out: &mut Outbox) -> bool {
        let role = tracker.get(from).and_then(|r| r.role);
        match (role, self.policy.allow_observers) {
            (Some(Role::Player), true) => {
                self.decisions.insert(from, Decision::Accepted(Role::Observer));
                tracker.set_role(from, Role::Observer);
                out.send(Target::One(from), true, &Packet::signal(PacketId::OBSERVER_CHANGE_OK));
                announce(out, Target::All, from, Role::Observer);
                out.event(Event::Accepted { id: from, role: Role::Observer });
            }
            // A retransmit after the change was granted: repeat the answer.
            (Some(Role::Observer), _) => {
                out.send(Target::One(from), true, &Packet::signal(PacketId::OBSERVER_CHANGE_OK));
            }
            (Some(Role::Player), false) => {
                out.send(Target::One(from), true, &Packet::signal(PacketId::OBSERVER_CHANGE_REFUSED));
                out.event(Event::Denied { id: from, role: Role::Observer });
            }
            (None, _) => return false,
        }
        true
    }
}

/// CHANGE_TO_PLAYER or CHANGE_TO_OBSERVER naming `id`.
fn announce(out: &mut Outbox, to: Target, id: PlayerId, role: Role) {
    let packet = match role {
        Role::Player => Packet::ChangeToPlayer { player_id: id.0 },
        Role::Observer => Packet::ChangeToObserver { player_id: id.0 },
    };
    out.send(to, true, &packet);
}

/// The host's state machine: FS98's join handshake and type queries, or in FS2004
/// (no handshake) the player data, and in both the tracking of every aircraft.
#[derive(Debug)]
pub struct Host {
    config: HostConfig,
    own_id: PlayerId,
    out: Outbox,
    tracker: Tracker,
    stats: Stats,
    duties: Duties,
    query_at: Option<Instant>,
    ended: bool,
}

impl Host {
    /// The host side of a session in which we are player `own_id`.
    pub fn new(config: HostConfig, own_id: PlayerId) -> Self {
        Self::with_tracker(config, own_id, Tracker::new(config.dialect))
    }

    /// The host side taking over `tracker` (what a client knew before its session migrated to
    /// it).
    pub(crate) fn with_tracker(config: HostConfig, own_id: PlayerId, tracker: Tracker) -> Self {
        Self {
            config,
            own_id,
            out: Outbox::new(config.dialect),
            tracker,
            stats: Stats::default(),
            duties: Duties::new(config.policy),
            query_at: None,
            ended: false,
        }
    }

    /// Removes `id`. FS98: LEAVE_SESSION to that player, guaranteed; it then closes its
    /// connection (seed 004 row LEAVE_SESSION). FS2004 has no such packet (FS-MULTIPLAYER.md
    /// 3.2): [`Event::Remove`] asks the driver to destroy the DirectPlay 8 player.
    pub fn remove_player(&mut self, _now: Instant, id: PlayerId) {
        match self.config.dialect {
            Dialect::Fs98 => self.out.send(Target::One(id), true, &Packet::signal(PacketId::LEAVE_SESSION)),
            Dialect::Fs2004 => self.out.event(Event::Remove { id }),
        }
    }

    /// Ends the session: FS98 HOST_QUIT to all, guaranteed (FS2004 has none), and the driver
    /// is told to close (a DirectPlay 8 host terminates the session).
    pub fn end_session(&mut self, _now: Instant) {
        if !self.ended {
            self.ended = true;
            self.query_at = None;
            if self.config.dialect == Dialect::Fs98 {
                self.out.send(Target::All, true, &Packet::signal(PacketId::HOST_QUIT));
            }
            self.out.event(Event::Disconnect(DisconnectReason::SessionEnded));
        }
    }

    /// Sends a chat line to all, guaranteed (seed 004 row CHAT_TEXT; FS2004 0x1017).
    pub fn send_chat(&mut self, _now: Instant, text: ZString) {
        self.out.send(Target::All, true, &Packet::ChatText(ChatText { chat_data: text }));
    }

    /// The other players.
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Receive counters.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The configuration.
    pub fn config(&self) -> HostConfig {
        self.config
    }

    fn query_unknown(&mut self, now: Instant) {
        let unknown = self.tracker.unknown();
        for id in &unknown {
            self.out.send(Target::One(*id), true, &Packet::signal(PacketId::QUERY_PLAYER_TYPE));
        }
        self.query_at = if unknown.is_empty() { None } else { now.checked_add(RETRANSMIT_INTERVAL) };
    }

    fn handle_signal(&mut self, from: PlayerId, id: PacketId) {
        if self.config.dialect != Dialect::Fs98 {
            // FS2004 ids beyond the five known are logged and ignored (FS-MULTIPLAYER.md 3.2).
            self.stats.ignored += 1;
            return;
        }
        if self.duties.handle_signal(from, id, &mut self.tracker, &mut self.out) {
            return;
        }
        match id {
            PacketId::QUERY_PLAYER_TYPE => {
                announce(&mut self.out, Target::One(from), self.own_id, self.config.own_role)
            }
            _ => self.stats.ignored += 1,
        }
    }
}

impl Endpoint for Host {
    /// A new player: unknown until it asks to join or answers; QUERY_PLAYER_TYPE to it now and
    /// every 30 s until its type is known (seed 004 row QUERY_PLAYER_TYPE).
    fn player_joined(&mut self, now: Instant, id: PlayerId) {
        if id == self.own_id || self.ended {
            return;
        }
        self.tracker.player_joined(id);
        // FS2004 asks nothing: the player data already said (FS-MULTIPLAYER.md 3.1).
        if self.config.dialect == Dialect::Fs98 && self.tracker.get(id).is_some_and(|r| r.role.is_none()) {
            self.out.send(Target::One(id), true, &Packet::signal(PacketId::QUERY_PLAYER_TYPE));
            if self.query_at.is_none() {
                self.query_at = now.checked_add(RETRANSMIT_INTERVAL);
            }
        }
    }

    fn player_info(&mut self, _now: Instant, id: PlayerId, info: PlayerInfo) {
        if id == self.own_id || self.ended || self.config.dialect != Dialect::Fs2004 {
            return;
        }
        // The joiner is in the session already: FS2004 has no refusal (FSM 3.1).
        let role = self.tracker.set_info(id, info);
        self.out.event(Event::Accepted { id, role });
    }

    fn player_left(&mut self, _now: Instant, id: PlayerId) {
        self.duties.forget(id);
        if self.tracker.player_left(id) {
            self.out.event(Event::PlayerLeft { id });
        }
    }

    fn handle_message(&mut self, now: Instant, from: PlayerId, bytes: &[u8]) {
        self.stats.received += 1;
        if self.ended {
            self.stats.ignored += 1;
            return;
        }
        let Ok(packet) = Packet::parse(self.config.dialect, bytes) else {
            self.stats.malformed += 1;
            return;
        };
        match packet {
            // A player's own answer to our QUERY_PLAYER_TYPE; a claim about another id is not
            // the sender's to make.
            Packet::ChangeToPlayer { player_id } | Packet::ChangeToObserver { player_id }
                if player_id != from.0 =>
            {
                self.stats.ignored += 1;
            }
            Packet::ChangeToPlayer { .. } => self.settle(from, Role::Player),
            Packet::ChangeToObserver { .. } => self.settle(from, Role::Observer),
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
            Packet::Opaque(o) => self.handle_signal(from, PacketId(o.id)),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.query_at.is_some_and(|t| now >= t) {
            self.query_unknown(now);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.query_at
    }

    fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.out.poll_outgoing()
    }

    fn poll_event(&mut self) -> Option<Event> {
        self.out.poll_event()
    }
}

impl Host {
    /// A type settled by the player's own CHANGE_TO_* (the answer to QUERY_PLAYER_TYPE).
    fn settle(&mut self, from: PlayerId, role: Role) {
        if self.tracker.get(from).and_then(|r| r.role).is_some() {
            self.stats.ignored += 1;
            return;
        }
        self.tracker.set_role(from, role);
        self.duties.settle(from, role);
        self.out.event(Event::PlayerType { id: from, role });
    }

    fn position_outcome(&mut self, from: PlayerId, accepted: Accepted) {
        match accepted {
            Accepted::Yes => self.out.event(Event::PositionUpdated { id: from }),
            Accepted::Stale => self.stats.stale_positions += 1,
        }
    }
}
