//! What the dashboard shows: a [`Snapshot`] of the session the protocol loop publishes, and the
//! [`WebEvent`]s it reports as they happen. Every string in them came from the network and is
//! inserted as text by the page, never as markup.

use serde::Serialize;

use crate::counters::Counters;
use crate::players::Players;
use crate::traffic::Traffic;

/// The session and its players at one moment.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct Snapshot {
    /// The session.
    pub session: SessionView,
    /// The players of the name table, the host's own included (`Vec<PlayerView>::into()`).
    pub players: Players,
    /// The add-on's aircraft; `None` for a session without the add-on.
    pub traffic: Option<Traffic>,
    /// A relaying host's relay (`/api/relay`); `None` for a host that does not relay.
    pub relay: Option<crate::relay_view::RelayView>,
    /// A `--voice` host's voice server (`/api/voice`); `None` for a host without one.
    pub voice: Option<crate::voice_view::VoiceView>,
    /// Totals and what is held, for `/metrics`.
    #[serde(skip)]
    pub counters: Counters,
}

/// The session as `/api/session` shows it.
#[derive(Debug, Clone, Default, Serialize)]
#[non_exhaustive]
pub struct SessionView {
    /// The session name (from the host's configuration).
    pub name: String,
    /// `DirectPlay 8` or `DirectPlay 4`.
    pub protocol: &'static str,
    /// The session instance GUID (MC-DPL8CS 2.2.1.1, the name table's instance).
    pub guid: String,
    /// `peer-to-peer` or `client-server`.
    pub mode: &'static str,
    /// Seconds since the host started the session.
    pub uptime_s: u64,
    /// Players in the name table.
    pub players: usize,
    /// At most this many players; 0: no limit.
    pub max_players: u32,
    /// Host migrations seen since the start (MC-DPL8CS 3.2.5.4).
    pub host_migrations: u32,
    /// The session is being hosted (false before it is created and after it ended).
    pub hosting: bool,
    /// The session carries the Flight Simulator add-on: `/api/traffic` lists its aircraft.
    pub addon: bool,
    /// The host is the session's DirectPlay Voice server: `/api/voice` shows it.
    pub voice: bool,
}

/// One player as `/api/players` shows it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[non_exhaustive]
pub struct PlayerView {
    /// The DPNID (DirectPlay 4: the player ID), as the CLI prints it (`0x...`).
    pub dpnid: String,
    /// The same as a number, for admin commands.
    pub id: u32,
    /// The player's name.
    pub name: String,
    /// Its address, when we have a connection with it (not for ourselves).
    pub address: Option<String>,
    /// Seconds after the session start at which the player entered the name table.
    pub joined_at_s: u64,
    /// `host`, `local` or `connected` (DirectPlay 4: also `system`, an instance with no
    /// application player).
    pub state: &'static str,
    /// The transport's smoothed round trip, in milliseconds, once measured.
    pub rtt_ms: Option<u64>,
    /// Bytes we sent on its connection.
    pub bytes_sent: Option<u64>,
    /// Bytes we received on its connection.
    pub bytes_received: Option<u64>,
    /// Frames we sent again on its connection.
    pub retransmissions: Option<u64>,
}

/// Something that happened, as the event stream (`/api/events`) sends it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum WebEvent {
    /// A player entered the name table.
    Join {
        /// Its DPNID (`0x...`).
        dpnid: String,
        /// Its name.
        name: String,
        /// Seconds after the session start.
        at_s: u64,
    },
    /// A player left the name table.
    Leave {
        /// Its DPNID (`0x...`).
        dpnid: String,
        /// Its name, as it was known.
        name: String,
        /// The DPNDESTROYPLAYERREASON name (MC-DPL8CS 2.2.2.2).
        reason: String,
        /// Seconds after the session start.
        at_s: u64,
    },
    /// A DXDiag chat line (MS-DPDX 3.1.5.7), cut to [`CHAT_CHARS`] characters.
    Chat {
        /// The sender's DPNID (`0x...`).
        dpnid: String,
        /// The sender's name, as it was known.
        name: String,
        /// The text.
        text: String,
        /// Seconds after the session start.
        at_s: u64,
    },
    /// A join was refused: DirectPlay 8 DN_CONNECT_FAILED (MC-DPL8CS 3.1.5.1), DirectPlay 4
    /// REQUESTPLAYERREPLY or ADDFORWARDREPLY with an error (MC-DPL4CS 2.2.50, 2.2.10).
    Refused {
        /// Where the joiner came from (`IP:port`).
        address: String,
        /// The name it asked for, when the request carried one, cut to [`NAME_CHARS`]
        /// characters.
        name: Option<String>,
        /// The code it was sent, by name (`DPNERR_HOSTREJECTEDCONNECTION`,
        /// `DPERR_INVALIDPASSWORD` ...).
        code: String,
        /// Seconds after the session start.
        at_s: u64,
    },
    /// An admin command was carried out, or failed (a line for the operator).
    Admin {
        /// What was done, or why not.
        text: String,
        /// Seconds after the session start.
        at_s: u64,
    },
}

/// Characters of a chat line the event stream carries at most.
pub const CHAT_CHARS: usize = 500;

/// Characters of a refused joiner's name the event stream carries at most (a name refused as
/// over its limit may be long).
pub const NAME_CHARS: usize = 256;

impl WebEvent {
    /// The SSE `event:` name.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Join { .. } => "join",
            Self::Leave { .. } => "leave",
            Self::Chat { .. } => "chat",
            Self::Refused { .. } => "refused",
            Self::Admin { .. } => "admin",
        }
    }
}
