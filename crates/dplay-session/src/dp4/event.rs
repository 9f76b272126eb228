//! What a [`crate::dp4::Dp4Session`] gives back: datagrams and stream messages to send, events
//! for the game, timers, errors and counters.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp4::session::SessionDesc2;

/// How a transmit travels (MC-DPL4CS 2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    /// A UDP datagram: enumeration, non-guaranteed messages, PING.
    Udp,
    /// A message on a TCP stream to `to` (the runtime opens or reuses a connection to it):
    /// replies and guaranteed messages.
    Tcp,
}

/// Bytes to send (MC-DPL4CS 2.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dp4Transmit {
    /// UDP or TCP.
    pub via: Via,
    /// The destination: a UDP socket, or the TCP listener to connect to.
    pub to: SocketAddr,
    /// One whole DP4 message.
    pub bytes: Vec<u8>,
}

/// A session found by enumeration (MC-DPL4CS 3.1.4.1, 2.2.30).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSession {
    /// The host's TCP listener: where to [`crate::dp4::Dp4Session::join`].
    pub host: SocketAddr,
    /// `SessionDescription`.
    pub desc: SessionDesc2,
    /// `SessionName`.
    pub name: Option<String>,
}

/// Why a join failed (MC-DPL4CS 3.1.4.2, 3.1.5.1, 3.1.5.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum JoinError {
    /// REQUESTPLAYERREPLY or ADDFORWARDREPLY carried this HRESULT, e.g. DPERR_NONEWPLAYERS.
    Refused(u32),
    /// The Reliable API timer ran out (MC-DPL4CS 3.1.2.2).
    Timeout,
    /// The host's TCP listener refused the connection (or it broke): no host listens there
    /// (MC-DPL4CS 2.1), reported at once rather than after the timer.
    Unreachable,
    /// The session needs options this endpoint does not implement (see
    /// [`crate::dp4::UNSUPPORTED_SESSION_FLAGS`]); we left it again.
    Unsupported(dplay_wire::dp4::session::SessionFlags),
}

/// Why the session ended for us.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EndReason {
    /// We left.
    Left,
    /// The host left or stopped answering and the session cannot migrate (MC-DPL4CS 3.1.7.1).
    HostLost,
    /// The host told us to go: DPSP_MSG_YOUAREDEAD (MC-DPL4CS 3.1.5.32).
    YouAreDead,
    /// The host deleted our system player: DPSP_MSG_DELETEPLAYER naming it, from the host
    /// (MC-DPL4CS 3.1.5.14: "instructed to leave the game session by the game session host").
    Removed,
}

/// Something the game needs to know, from [`crate::dp4::Dp4Session::poll_event`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dp4Event {
    /// An ENUMSESSIONSREPLY arrived during enumeration (MC-DPL4CS 3.1.4.1).
    SessionFound(FoundSession),
    /// The Session Enumeration timer ran out (MC-DPL4CS 3.1.2.1).
    EnumDone,
    /// We joined; `system_player` is our system player (MC-DPL4CS 3.1.5.7).
    Joined {
        /// Our system player ID.
        system_player: u32,
    },
    /// The join failed.
    JoinFailed(JoinError),
    /// A local player asked for with `create_player` exists (MC-DPL4CS 3.1.5.1).
    PlayerCreated {
        /// Its ID.
        id: u32,
    },
    /// Creating a local player failed: DPERR_NONEWPLAYERS, or the timer ran out.
    PlayerCreateFailed(JoinError),
    /// A player or an instance (system player) is in the session.
    PlayerJoined {
        /// Player ID.
        id: u32,
        /// Short name.
        name: Option<String>,
        /// Whether it is a system player (one per instance).
        system: bool,
    },
    /// A player or an instance left (MC-DPL4CS 3.1.5.14).
    PlayerLeft {
        /// Player ID.
        id: u32,
    },
    /// Application data (MC-DPL4CS 2.2.45). The IDs are `None` in NM sessions.
    Message {
        /// `idFrom`.
        from: Option<u32>,
        /// `idTo`.
        to: Option<u32>,
        /// The payload.
        data: Vec<u8>,
    },
    /// A DirectPlay Voice message: DPSP_MSG_VOICE (MC-DPL4CS 2.2.54, 3.1.5.25), for the voice
    /// layer above (`dplay-voice`); `from` is the sender's DVID (MC-DPLVP 3.1.5.1.3 <1>).
    Voice {
        /// `dwIDFrom`: a remote player.
        from: u32,
        /// `dwIDTo`: one of ours, or DPID_ALLPLAYERS.
        to: u32,
        /// The voice message's bytes (`voiceData`), unchecked.
        data: Vec<u8>,
    },
    /// A remote player's game data changed (MC-DPL4CS 3.1.5.19).
    PlayerDataChanged {
        /// Player ID.
        id: u32,
        /// The new data.
        data: Vec<u8>,
    },
    /// A remote player was renamed (MC-DPL4CS 3.1.5.18).
    PlayerNameChanged {
        /// Player ID.
        id: u32,
        /// New short name.
        short_name: Option<String>,
        /// New long name.
        long_name: Option<String>,
    },
    /// A chat line for one of our players (MC-DPL4CS 3.1.5.26).
    Chat {
        /// `IDFrom`.
        from: u32,
        /// `IDTo`.
        to: u32,
        /// `ChatMessage` (absent: a NULL message).
        text: Option<String>,
    },
    /// The Group List changed (MC-DPL4CS 3.1.5.11, 3.1.5.15-3.1.5.17, 3.1.5.20, 3.1.5.21), or
    /// a group we asked for could not be made.
    Group(GroupEvent),
    /// The host changed the session description (MC-DPL4CS 3.1.5.22).
    SessionDescChanged(SessionDesc2),
    /// A new host took over (MC-DPL4CS 3.1.7.1); `local` when it is us.
    HostMigrated {
        /// The new host's system player.
        host: u32,
        /// Whether we are the new host.
        local: bool,
    },
    /// Host: a joining instance was refused: REQUESTPLAYERREPLY (a banned address, the
    /// session full or closed) or ADDFORWARDREPLY (a wrong password, a banned name, a name over
    /// its limit, the memory budget) with this `Result`/`Error` (MC-DPL4CS 2.2.50, 2.2.10,
    /// 3.2.5.4, 3.2.5.5).
    JoinRefused {
        /// Where the request came from (the joiner's TCP reply address).
        from: SocketAddr,
        /// The name of its system player, when the request carried one (ADDFORWARDREQUEST), cut
        /// to [`crate::REFUSED_NAME_CHARS`] characters.
        name: Option<String>,
        /// The DPERR code it was sent.
        code: u32,
    },
    /// The session is over for us.
    Ended(EndReason),
}

/// A change of the Group List, in [`Dp4Event::Group`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum GroupEvent {
    /// A group is in the Group List (MC-DPL4CS 3.1.5.11); `local` when we created it with
    /// [`crate::dp4::Dp4Session::create_group`].
    Created {
        /// Group ID.
        id: u32,
        /// Short name.
        name: Option<String>,
        /// Whether we created it.
        local: bool,
    },
    /// Creating a group failed: the host refused (DPERR_NONEWPLAYERS) or the Reliable API timer
    /// ran out (MC-DPL4CS 3.1.4.6).
    CreateFailed(JoinError),
    /// A group was deleted, or went with the instance that created it (MC-DPL4CS 3.1.5.15,
    /// 3.1.5.16).
    Deleted {
        /// Group ID.
        id: u32,
    },
    /// A remote instance added a player to a group (MC-DPL4CS 3.1.5.20).
    PlayerAdded {
        /// Group ID.
        group: u32,
        /// Player ID.
        player: u32,
    },
    /// A remote instance removed a player from a group (MC-DPL4CS 3.1.5.21).
    PlayerRemoved {
        /// Group ID.
        group: u32,
        /// Player ID.
        player: u32,
    },
    /// A group's data changed (MC-DPL4CS 3.1.5.16).
    DataChanged {
        /// Group ID.
        id: u32,
        /// The new data.
        data: Vec<u8>,
    },
    /// A remote instance added group `child` to group `group` as a shortcut (MC-DPL4CS
    /// 3.1.5.23).
    ShortcutAdded {
        /// The containing group.
        group: u32,
        /// The group added.
        child: u32,
    },
    /// A remote instance removed shortcut `child` from group `group` (MC-DPL4CS 3.1.5.24).
    ShortcutRemoved {
        /// The containing group.
        group: u32,
        /// The group removed.
        child: u32,
    },
    /// A group was renamed (MC-DPL4CS 3.1.5.17).
    NameChanged {
        /// Group ID.
        id: u32,
        /// New short name.
        short_name: Option<String>,
        /// New long name.
        long_name: Option<String>,
    },
}

/// Why a command was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandError {
    /// The endpoint is not in a state for this command (e.g. send before joining).
    #[error("not allowed in the current state")]
    WrongState,
    /// No such player, or not one of ours where that is required.
    #[error("unknown player 0x{0:08X}")]
    UnknownPlayer(u32),
    /// No such group, or not one of ours where that is required.
    #[error("unknown group 0x{0:08X}")]
    UnknownGroup(u32),
    /// The message cannot be encoded (too long for the size field).
    #[error("message cannot be encoded")]
    Unencodable,
    /// A name or data longer than the configured limit (`Dp4Limits`; DPERR_INVALIDPARAMS).
    #[error("{what} is {len} long, more than the limit of {max} (DPERR_INVALIDPARAMS)")]
    TooLong {
        /// What is too long.
        what: &'static str,
        /// Its length (UTF-16 units for names, bytes for data).
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Session options this endpoint does not implement.
    #[error("unsupported session flags {0:?}")]
    Unsupported(dplay_wire::dp4::session::SessionFlags),
}

/// Why a received message was dropped; each is counted in [`Stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum DropReason {
    /// It did not parse (bad offsets, truncated, bad size field).
    Malformed,
    /// It names a player or group we do not know, or is not addressed to one of ours.
    UnknownPlayer,
    /// It makes no sense in our role or state (e.g. REQUESTPLAYERREPLY with none outstanding).
    Unexpected,
    /// A command we do not handle (security, multicast).
    Unsupported,
    /// A fragment the dplay-dpsp layer refused.
    Fragment,
    /// A reply to an unknown source over `Dp4Limits::replies_per_source` or
    /// `replies_per_interval`: not sent (docs/limits.md).
    RateLimited,
    /// A name or data longer than `Dp4Limits` allows: the player, session or change is
    /// refused (docs/limits.md).
    TooLong,
    /// What the host holds for others would pass `Dp4Limits::memory_budget`: a joiner is
    /// refused (ADDFORWARDREPLY DPERR_NONEWPLAYERS), a TCP connection closed (docs/limits.md).
    OverBudget,
    /// A join or player from a banned name or address (issue 17; docs/decisions.md, "Bans").
    Banned,
}

impl DropReason {
    /// A short name, lower case with `-` (as docs/json-events.md spells reasons), for logs and
    /// JSON.
    pub fn name(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::UnknownPlayer => "unknown-player",
            Self::Unexpected => "unexpected",
            Self::Unsupported => "unsupported",
            Self::Fragment => "fragment",
            Self::RateLimited => "rate-limited",
            Self::TooLong => "too-long",
            Self::OverBudget => "over-budget",
            Self::Banned => "banned",
        }
    }
}

/// Counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Messages received, of any kind.
    pub received: u64,
    /// Messages dropped, by reason.
    pub dropped: std::collections::BTreeMap<DropReason, u64>,
    /// TCP connections rejected by the framer.
    pub streams_rejected: u64,
    /// Server of a client/server session: player messages relayed between clients.
    pub relayed: u64,
    /// Bytes held for others now, charged to the memory budget (docs/limits.md): partial TCP
    /// messages, DPSP and MC-DPL4R reassembly, the Player List.
    pub bytes_held: usize,
    /// The most bytes held at once so far.
    pub bytes_peak: usize,
    /// The memory budget (`Dp4Limits::memory_budget`).
    pub memory_budget: usize,
}

impl Stats {
    /// Drops counted for `reason`.
    pub fn dropped(&self, reason: DropReason) -> u64 {
        self.dropped.get(&reason).copied().unwrap_or(0)
    }

    /// Drops of every reason.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.values().sum()
    }
}

/// The timers of MC-DPL4CS 3.1.2 and 3.2.2 this endpoint runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Timer {
    /// Session Enumeration (3.1.2.1).
    Enumeration,
    /// Reliable API (3.1.2.2): REQUESTPLAYERID and ADDFORWARDREQUEST awaiting a reply.
    ReliableApi,
    /// Name Table Population (3.2.2.1) for the join of this system player.
    NameTable(u32),
    /// Ping (3.1.2.5, 3.2.2.2).
    Ping,
    /// A follow-up PING between two Ping ticks to a peer that answers PINGs and went silent
    /// (`Dp4Session::on_ping_retry`).
    PingRetry,
    /// Host: a system player ID handed out by REQUESTPLAYERID and not yet claimed by an
    /// ADDFORWARDREQUEST; freed when it runs out (docs/decisions.md).
    Reservation(u32),
    /// A connection of this instance closed within a second of its last check: check it again
    /// then (issue 27 item 10; `Dp4Session::check_instance`).
    Check(u32),
}

/// A deadline per armed timer; the next wakeup is the earliest.
#[derive(Debug, Clone, Default)]
pub(crate) struct TimerTable(std::collections::BTreeMap<Timer, Instant>);

impl TimerTable {
    /// Arms (or re-arms) `timer`.
    pub(crate) fn set(&mut self, timer: Timer, at: Instant) {
        self.0.insert(timer, at);
    }

    /// Disarms `timer`.
    pub(crate) fn cancel(&mut self, timer: Timer) {
        self.0.remove(&timer);
    }

    /// Whether `timer` is armed.
    pub(crate) fn is_set(&self, timer: Timer) -> bool {
        self.0.contains_key(&timer)
    }

    /// The earliest deadline.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.0.values().min().copied()
    }

    /// Removes and returns one timer due at `now`.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<Timer> {
        let timer = self.0.iter().find(|(_, at)| **at <= now).map(|(t, _)| *t)?;
        self.0.remove(&timer);
        Some(timer)
    }
}
