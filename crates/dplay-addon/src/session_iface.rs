//! The add-on's small interface to whatever session layer carries it (DirectPlay 8 or 4).
//!
//! The session layer owns players and delivery; this crate only needs to hear which players
//! joined and left, to receive each application message with its sender, and to ask for a
//! message to go to one player or to all, guaranteed or not (seed 004: "Send this packet with
//! guaranteed messaging"; FS-MULTIPLAYER.md 1.1, 3.1; INDEX.md H).
//!
//! Both [`crate::Client`] and [`crate::Host`] implement [`Endpoint`]. A driver calls, in any
//! order as things happen:
//! 1. [`Endpoint::player_joined`] / [`Endpoint::player_left`] for every session roster change
//!    (including, once, every player already present when the session was joined), and after
//!    a join [`Endpoint::player_info`] when its player data is an FS2004 PLAYER_INFO_STRUCT,
//! 2. [`Endpoint::handle_message`] for every application message received,
//! 3. [`Endpoint::handle_timeout`] when the instant of [`Endpoint::poll_timeout`] has come,
//!
//! and after each call drains [`Endpoint::poll_outgoing`] (hand each [`Outgoing`] to the
//! session layer) and [`Endpoint::poll_event`] (for the user; [`Event::Disconnect`] also asks the
//! driver to close the session connection).

use std::collections::VecDeque;
use std::time::Instant;

use serde::Serialize;

use crate::packet::{Dialect, EngineType, Packet, PlayerInfo, ZString};

/// A DirectPlay player id: a DPID in DirectPlay 4, a DPNID in DirectPlay 8, as the session
/// layer hands it to applications (FS-MULTIPLAYER.md 4 DPID/DPNID; docs/decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct PlayerId(pub u32);

/// Where a message goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Target {
    /// One player (DirectPlay Send/SendTo to that id).
    One(PlayerId),
    /// Every other player of the session (seed 004: "to all players").
    All,
}

/// A message the session layer is asked to send.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outgoing {
    /// Destination.
    pub to: Target,
    /// Send with guaranteed (reliable) delivery.
    pub guaranteed: bool,
    /// The whole add-on packet, header and data.
    pub bytes: Vec<u8>,
}

/// The two player types a session settles (FS-MULTIPLAYER.md 1.5 "Roles"; seed 004).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Role {
    /// Sends its position four times a second.
    Player,
    /// Monitors the packet stream and speaks only when asked.
    Observer,
}

/// Why the add-on asks the driver to close its session connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum DisconnectReason {
    /// ADD_PLAYER_REFUSED or ADD_OBSERVER_REFUSED (seed 004 rows ADD_*_REFUSED).
    Refused,
    /// LEAVE_SESSION: the host removed us (seed 004 row LEAVE_SESSION).
    RemovedByHost,
    /// The local user left.
    Left,
    /// The host ended the session ([`crate::Host::end_session`]).
    SessionEnded,
}

/// Something for the user (and, for [`Event::Disconnect`], for the driver).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub enum Event {
    /// We joined as `role` (CHANGE_TO_PLAYER / CHANGE_TO_OBSERVER with our own id, or at once in
    /// the FS2004 dialect).
    Joined {
        /// The role granted.
        role: Role,
    },
    /// The host refused our join as `role`: tell the user (seed 004 rows ADD_*_REFUSED).
    Refused {
        /// The role asked for.
        role: Role,
    },
    /// Close the session connection now.
    Disconnect(DisconnectReason),
    /// OBSERVER_CHANGE_OK: we are an observer from now on.
    BecameObserver,
    /// OBSERVER_CHANGE_REFUSED: we stay a player.
    ObserverChangeRefused,
    /// Another player's type became known (CHANGE_TO_PLAYER / CHANGE_TO_OBSERVER).
    PlayerType {
        /// Whose.
        id: PlayerId,
        /// Which.
        role: Role,
    },
    /// A newer position of `id` was accepted ([`crate::Tracker::get`] has it).
    PositionUpdated {
        /// Whose.
        id: PlayerId,
    },
    /// CHANGE_PLAYER_PLANE from `id`.
    PlaneChanged {
        /// Whose.
        id: PlayerId,
        /// `engine_type`.
        engine_type: EngineType,
        /// `aircraft_name`.
        aircraft_name: ZString,
    },
    /// CHAT_TEXT from `from`.
    Chat {
        /// Sender.
        from: PlayerId,
        /// `chat_data`.
        text: ZString,
    },
    /// PLAYER_CRASH: `from` registered a collision with us; process it (seed 004 row
    /// PLAYER_CRASH).
    Crash {
        /// The player we collided with.
        from: PlayerId,
    },
    /// `id` left the session.
    PlayerLeft {
        /// Who.
        id: PlayerId,
    },
    /// Host side: `id` was accepted as `role`.
    Accepted {
        /// Who.
        id: PlayerId,
        /// As what.
        role: Role,
    },
    /// Host side, FS2004: remove `id` from the session (the DirectPlay 8 host destroys the
    /// player; FS2004 has no LEAVE_SESSION, FS-MULTIPLAYER.md 3.2). For the driver.
    Remove {
        /// Who.
        id: PlayerId,
    },
    /// The session's host role migrated to us: we now do the add-on host's duties
    /// (docs/decisions.md "Add-on host migration").
    BecameHost,
    /// Host side: `id` was refused `role`.
    Denied {
        /// Who.
        id: PlayerId,
        /// What it asked for.
        role: Role,
    },
}

/// Counters of what was received and dropped (STYLE.md §4: hostile input is counted).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct Stats {
    /// Messages handed to `handle_message`.
    pub received: u64,
    /// Messages that did not parse (bad `data_size`, short payload, missing NUL ...).
    pub malformed: u64,
    /// Well-formed packets ignored: the seed's "should be ignored" rows, unknown ids, and
    /// packets that make no sense in the current state.
    pub ignored: u64,
    /// Position packets whose `packet_index` was not higher than the last one accepted.
    pub stale_positions: u64,
}

/// The interface between the add-on and a session layer (module documentation).
pub trait Endpoint {
    /// A player entered the session (DirectPlay create-player notification).
    fn player_joined(&mut self, now: Instant, id: PlayerId);
    /// FS2004: a player's DirectPlay 8 player data was a PLAYER_INFO_STRUCT (FS-MULTIPLAYER.md
    /// 3.1, 3.6): its role and aircraft title, in place of FS98's handshake.
    fn player_info(&mut self, now: Instant, id: PlayerId, info: PlayerInfo);
    /// A player left the session (DirectPlay destroy-player notification).
    fn player_left(&mut self, now: Instant, id: PlayerId);
    /// An application message from `from`. Malformed input is counted and dropped.
    fn handle_message(&mut self, now: Instant, from: PlayerId, bytes: &[u8]);
    /// Runs the timers due at `now`.
    fn handle_timeout(&mut self, now: Instant);
    /// The next instant [`Endpoint::handle_timeout`] wants to be called, if any.
    fn poll_timeout(&self) -> Option<Instant>;
    /// The next message to send.
    fn poll_outgoing(&mut self) -> Option<Outgoing>;
    /// The next event.
    fn poll_event(&mut self) -> Option<Event>;
}

/// The output queues shared by the client and the host.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pub(crate) dialect: Dialect,
    outgoing: VecDeque<Outgoing>,
    events: VecDeque<Event>,
}

impl Outbox {
    pub(crate) fn new(dialect: Dialect) -> Self {
        Self { dialect, ..Self::default() }
    }

    /// Queues `packet`. A packet the dialect cannot carry is a caller bug and is not sent; the
    /// state machines only build packets of their dialect.
    pub(crate) fn send(&mut self, to: Target, guaranteed: bool, packet: &Packet) {
        if let Ok(bytes) = packet.to_vec(self.dialect) {
            self.outgoing.push_back(Outgoing { to, guaranteed, bytes });
        }
    }

    pub(crate) fn event(&mut self, event: Event) {
        self.events.push_back(event);
    }

    pub(crate) fn poll_outgoing(&mut self) -> Option<Outgoing> {
        self.outgoing.pop_front()
    }

    pub(crate) fn poll_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }
}
