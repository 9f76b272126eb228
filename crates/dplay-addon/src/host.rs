//! The host's side of the FS98 handshake, so that add-ons and Flight Simulator itself can join a
//! session we host: answer the join and observer requests by policy, query unknown players,
//! remove players and end the session (seed 004 rows ADD_*_REQUEST, CHANGE_TO_*, ADD_*_REFUSED,
//! QUERY_PLAYER_TYPE, REQUEST_OBSERVER, OBSERVER_CHANGE_*, HOST_QUIT, LEAVE_SESSION;
//! FS-MULTIPLAYER.md 1.4, 1.5).

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Serialize;

use crate::client::RETRANSMIT_INTERVAL;
use crate::packet::{ChatText, Dialect, Packet, PacketId, ZString};
use crate::session_iface::{
    DisconnectReason, Endpoint, Event, Outbox, Outgoing, PlayerId, Role, Stats, Target,
};
use crate::tracking::{Accepted, Tracker};

/// Who may join, and as what.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
pub struct HostConfig {
    /// Our own type, given in answer to QUERY_PLAYER_TYPE.
    pub own_role: Role,
    /// Join policy.
    pub policy: HostPolicy,
}

/// What the host decided for one player.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
enum Decision {
    Accepted(Role),
    Refused(Role),
}

/// The host's policy state machine (FS98 dialect only: FS2004 has no handshake).
#[derive(Debug)]
pub struct Host {
    config: HostConfig,
    own_id: PlayerId,
    out: Outbox,
    tracker: Tracker,
    stats: Stats,
    decisions: BTreeMap<PlayerId, Decision>,
    query_at: Option<Instant>,
    ended: bool,
}

impl Host {
    /// The host side of a session in which we are player `own_id`.
    pub fn new(config: HostConfig, own_id: PlayerId) -> Self {
        Self {
            config,
            own_id,
            out: Outbox::new(Dialect::Fs98),
            tracker: Tracker::default(),
            stats: Stats::default(),
            decisions: BTreeMap::new(),
            query_at: None,
            ended: false,
        }
    }

    /// Removes `id`: LEAVE_SESSION to that player, guaranteed; it then closes its connection
    /// (seed 004 row LEAVE_SESSION).
    pub fn remove_player(&mut self, _now: Instant, id: PlayerId) {
        self.out.send(Target::One(id), true, &Packet::signal(PacketId::LEAVE_SESSION));
    }

    /// Ends the session: HOST_QUIT to all, guaranteed, and the driver is told to close.
    pub fn end_session(&mut self, _now: Instant) {
        if !self.ended {
            self.ended = true;
            self.query_at = None;
            self.out.send(Target::All, true, &Packet::signal(PacketId::HOST_QUIT));
            self.out.event(Event::Disconnect(DisconnectReason::SessionEnded));
        }
    }

    /// Sends a chat line to all, guaranteed (seed 004 row CHAT_TEXT).
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

    fn players(&self) -> usize {
        self.decisions.values().filter(|d| **d == Decision::Accepted(Role::Player)).count()
    }

    /// ADD_*_REQUEST or RETRANSMIT_JOIN_*: decide once, then repeat the same answer.
    fn join(&mut self, from: PlayerId, role: Role) {
        let decision = match self.decisions.get(&from) {
            // Never from observer back to player (seed 004 row REQUEST_OBSERVER).
            Some(Decision::Accepted(Role::Observer)) if role == Role::Player => Decision::Refused(role),
            Some(Decision::Accepted(granted)) => return self.announce(Target::One(from), from, *granted),
            Some(Decision::Refused(asked)) if *asked == role => Decision::Refused(role),
            _ => {
                let allowed = match role {
                    Role::Player => self.config.policy.max_players.is_none_or(|max| self.players() < max),
                    Role::Observer => self.config.policy.allow_observers,
                };
                if allowed { Decision::Accepted(role) } else { Decision::Refused(role) }
            }
        };
        self.decisions.insert(from, decision);
        match decision {
            Decision::Accepted(role) => {
                self.tracker.set_role(from, role);
                self.announce(Target::All, from, role);
                self.out.event(Event::Accepted { id: from, role });
            }
            Decision::Refused(role) => {
                let refused = match role {
                    Role::Player => PacketId::ADD_PLAYER_REFUSED,
                    Role::Observer => PacketId::ADD_OBSERVER_REFUSED,
                };
                self.out.send(Target::One(from), true, &Packet::signal(refused));
                self.out.event(Event::Denied { id: from, role });
            }
        }
    }

    /// CHANGE_TO_PLAYER or CHANGE_TO_OBSERVER naming `id`.
    fn announce(&mut self, to: Target, id: PlayerId, role: Role) {
        let packet = match role {
            Role::Player => Packet::ChangeToPlayer { player_id: id.0 },
            Role::Observer => Packet::ChangeToObserver { player_id: id.0 },
        };
        self.out.send(to, true, &packet);
    }

    /// REQUEST_OBSERVER or RETRANSMIT_GO_OBSERVER from a player.
    fn go_observer(&mut self, from: PlayerId) {
        let role = self.tracker.get(from).and_then(|r| r.role);
        match (role, self.config.policy.allow_observers) {
            (Some(Role::Player), true) => {
                self.decisions.insert(from, Decision::Accepted(Role::Observer));
                self.tracker.set_role(from, Role::Observer);
                self.out.send(Target::One(from), true, &Packet::signal(PacketId::OBSERVER_CHANGE_OK));
                self.announce(Target::All, from, Role::Observer);
                self.out.event(Event::Accepted { id: from, role: Role::Observer });
            }
            // A retransmit after the change was granted: repeat the answer.
            (Some(Role::Observer), _) => {
                self.out.send(Target::One(from), true, &Packet::signal(PacketId::OBSERVER_CHANGE_OK));
            }
            (Some(Role::Player), false) => {
                self.out.send(Target::One(from), true, &Packet::signal(PacketId::OBSERVER_CHANGE_REFUSED));
                self.out.event(Event::Denied { id: from, role: Role::Observer });
            }
            (None, _) => self.stats.ignored += 1,
        }
    }

    fn query_unknown(&mut self, now: Instant) {
        let unknown = self.tracker.unknown();
        for id in &unknown {
            self.out.send(Target::One(*id), true, &Packet::signal(PacketId::QUERY_PLAYER_TYPE));
        }
        self.query_at = if unknown.is_empty() { None } else { now.checked_add(RETRANSMIT_INTERVAL) };
    }

    fn handle_signal(&mut self, from: PlayerId, id: PacketId) {
        match id {
            PacketId::ADD_PLAYER_REQUEST | PacketId::RETRANSMIT_JOIN_PLAYER => self.join(from, Role::Player),
            PacketId::ADD_OBSERVER_REQUEST | PacketId::RETRANSMIT_JOIN_OBSERVER => {
                self.join(from, Role::Observer)
            }
            PacketId::REQUEST_OBSERVER | PacketId::RETRANSMIT_GO_OBSERVER => self.go_observer(from),
            PacketId::QUERY_PLAYER_TYPE => {
                self.announce(Target::One(from), self.own_id, self.config.own_role)
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
        if self.tracker.get(id).is_some_and(|r| r.role.is_none()) {
            self.out.send(Target::One(id), true, &Packet::signal(PacketId::QUERY_PLAYER_TYPE));
            if self.query_at.is_none() {
                self.query_at = now.checked_add(RETRANSMIT_INTERVAL);
            }
        }
    }

    fn player_left(&mut self, _now: Instant, id: PlayerId) {
        self.decisions.remove(&id);
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
        let Ok(packet) = Packet::parse(Dialect::Fs98, bytes) else {
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
        self.decisions.entry(from).or_insert(Decision::Accepted(role));
        self.out.event(Event::PlayerType { id: from, role });
    }

    fn position_outcome(&mut self, from: PlayerId, accepted: Accepted) {
        match accepted {
            Accepted::Yes => self.out.event(Event::PositionUpdated { id: from }),
            Accepted::Stale => self.stats.stale_positions += 1,
        }
    }
}
