//! What a DirectPlay 4 endpoint is told: its addresses, dialect, timers and seed, and, to host,
//! the session's description (MC-DPL4CS 2.1, 3.1.2, 3.2.2, 3.2.3; INDEX B.8, C.3).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::Duration;

use dplay_wire::dp4::session::SessionFlags;
use uuid::Uuid;

/// UDP port a host listens on for ENUMSESSIONS, broadcast or unicast (MC-DPL4CS 2.1, 3.2.3).
pub const ENUM_PORT: u16 = 47624;
/// First port of the range game TCP and UDP ports MUST come from (MC-DPL4CS 2.1).
pub const GAME_PORT_FIRST: u16 = 2300;
/// Last port of that range (MC-DPL4CS 2.1).
pub const GAME_PORT_LAST: u16 = 2400;

/// An endpoint's fixed settings. `Dp4Config::default()` holds the spec's timers.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dp4Config {
    /// Our TCP listener, written as the header SockAddr of everything we send, so peers answer
    /// there (MC-DPL4CS 2.2.6). Address 0.0.0.0: "answer to the address you saw".
    pub stream_addr: SocketAddrV4,
    /// Our UDP game socket, given to peers in our system player's SPData (MC-DPL4CS 2.2.2).
    /// Default 2350: Windows takes TCP ports from 2300-2349 and UDP ports from 2350-2399
    /// (Wine's dplayx tests).
    pub datagram_addr: SocketAddrV4,
    /// The dialect we speak, 9-14 (MC-DPL4CS 2.2.3).
    pub version: u16,
    /// Seed of the RNG for GUIDs, the ID key and fragment GUIDs. The default comes from the
    /// operating system, so two endpoints never share one; set it (or use
    /// [`Dp4Config::with_seed`]) to replay a run.
    pub seed: u64,
    /// The largest UDP datagram; bigger non-guaranteed messages are fragmented
    /// (MC-DPL4CS 3.1.4.18).
    pub mtu: usize,
    /// Session Enumeration timer: how long enumeration collects replies (MC-DPL4CS 3.1.2.1;
    /// Windows 5 s, 6 <15>).
    pub enum_timeout: Duration,
    /// Reliable API timer: 5 s for a request that needs a reply (MC-DPL4CS 3.1.2.2).
    pub reliable_api_timeout: Duration,
    /// Name Table Population timer: 15 s for every ADDFORWARDACK (MC-DPL4CS 3.2.2.1).
    pub name_table_timeout: Duration,
    /// Ping timer period: 35 s (MC-DPL4CS 3.1.2.5, 3.2.2.2). At least
    /// [`crate::MIN_PERIOD`] ([`Dp4Config::set_ping_interval`]).
    ping_interval: Duration,
    /// PINGs without a reply before the link is dropped: 8 (MC-DPL4CS 3.1.6.2, 3.2.6.2). With
    /// KEEPALIVE one a period; to a peer that has answered PINGs before, all within one period
    /// in every session (docs/decisions.md, "A silent peer").
    pub ping_give_up: u32,
    /// Largest message accepted on a TCP stream (at most 0xFFFFF).
    pub max_stream_message: usize,
    /// What we hold and answer for others who are not (yet) in the session (issue 14;
    /// docs/limits.md).
    pub limits: Dp4Limits,
    /// Host: what the other instances are told of a joiner's addresses (a relay's endpoints;
    /// `None`: its own; docs/relay.md).
    pub address_map: Option<crate::dp4::Dp4AddressMapHandle>,
}

/// Caps on what a DirectPlay 4 endpoint accepts from others, and on the replies it sends to
/// addresses it cannot verify (docs/limits.md lists each with its reason and worst case).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dp4Limits {
    /// Largest message accepted on a TCP connection that belongs to no known instance yet (a
    /// joiner's REQUESTPLAYERID and ADDFORWARDREQUEST fit easily); a larger size field closes
    /// the connection before any byte of it is buffered.
    pub max_unjoined_message: usize,
    /// Longest player short or long name, in UTF-16 units (MC-DPL4CS 2.2.3 PackedPlayer).
    pub max_player_name: usize,
    /// Longest session name, in UTF-16 units (MC-DPL4CS 2.2.30).
    pub max_session_name: usize,
    /// Largest player or group data, in bytes (MC-DPL4CS 2.2.3 PlayerData).
    pub max_player_data: usize,
    /// Connect to the IP address a header's SockAddr names, not the sender's (MC-DPL4CS
    /// 2.2.6 allows either). Off: a host answers only the address a message came from, so a
    /// forged header cannot aim it at a third party; on: for the rare relay or multi-homed
    /// setup whose listener is on another address than the one it sends from.
    pub follow_header_addresses: bool,
    /// TCP replies (ENUMSESSIONSREPLY, REQUESTPLAYERREPLY, YOUAREDEAD) to one source IP that
    /// is no known instance, per `reply_interval`; more are dropped and counted. UDP sources
    /// can be forged, and each reply is a TCP connect to the sender.
    pub replies_per_source: u32,
    /// Such replies to all unknown sources together per `reply_interval`.
    pub replies_per_interval: u32,
    /// The window of `replies_per_source` and `replies_per_interval`; also how often a drop
    /// from one source is logged at most.
    pub reply_interval: Duration,
    /// The one memory budget for what we hold for others (docs/limits.md): partial TCP
    /// messages, DPSP and MC-DPL4R reassembly, the Player List, each charged when held and
    /// released when freed. Past it a TCP connection whose partial message does not fit is
    /// closed, the oldest DPSP reassembly is abandoned, an MC-DPL4R frame is left
    /// unacknowledged (sent again) and a joiner gets DPERR_NONEWPLAYERS: 256 MiB.
    pub memory_budget: usize,
}

impl Default for Dp4Limits {
    fn default() -> Self {
        Self {
            max_unjoined_message: 64 << 10,
            max_player_name: 256,
            max_session_name: 256,
            max_player_data: 16 << 10,
            follow_header_addresses: false,
            replies_per_source: 4,
            replies_per_interval: 64,
            reply_interval: Duration::from_secs(1),
            memory_budget: 256 << 20,
        }
    }
}

impl Default for Dp4Config {
    fn default() -> Self {
        Self {
            stream_addr: SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, GAME_PORT_FIRST),
            datagram_addr: SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 2350),
            version: 14,
            seed: crate::config::os_seed(),
            mtu: 1472,
            enum_timeout: Duration::from_secs(5),
            reliable_api_timeout: Duration::from_secs(5),
            name_table_timeout: Duration::from_secs(15),
            ping_interval: Duration::from_secs(35),
            ping_give_up: 8,
            max_stream_message: dplay_wire::dp4::header::MAX_MESSAGE_SIZE,
            limits: Dp4Limits::default(),
            address_map: None,
        }
    }
}

impl Dp4Config {
    /// This configuration with a fixed `seed`, for tests and replays.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Ping timer period (MC-DPL4CS 3.1.2.5).
    pub fn ping_interval(&self) -> Duration {
        self.ping_interval
    }

    /// Sets [`Dp4Config::ping_interval`]; below [`crate::MIN_PERIOD`] it is
    /// [`crate::MIN_PERIOD`], so the timer cannot fire in a loop.
    pub fn set_ping_interval(&mut self, period: Duration) -> &mut Self {
        self.ping_interval = period.max(crate::MIN_PERIOD);
        self
    }
}

/// The instance GUID and ID key of a hosted session; drawn from the seeded RNG unless given
/// (MC-DPL4CS 3.2.3, 3.2.5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionIdentity {
    /// `InstanceGUID` (MC-DPL4CS 2.2.5).
    pub instance_guid: Uuid,
    /// `Reserved1`: the key XORed into player and group IDs (MC-DPL4CS 3.2.5.4).
    pub reserved1: u32,
}

/// The session a host offers (MC-DPL4CS 3.1.1 Session, 2.2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct HostConfig {
    /// `Session.SessionName`.
    pub name: String,
    /// `Game.ApplicationGuid`.
    pub application_guid: Uuid,
    /// `Session.MaxPlayers`; 0 means no limit.
    pub max_players: u32,
    /// `Session.Password`; `None` for none.
    pub password: Option<String>,
    /// `Session.Flags`.
    pub flags: SessionFlags,
    /// `ApplicationDefined1`-`4` (`Session.GameData`).
    pub application_defined: [u32; 4],
    /// Fixed identity, or `None` to draw one from the seed.
    pub identity: Option<SessionIdentity>,
}

impl HostConfig {
    /// A session of `application_guid` named `name`, no limit, no password, no flags.
    pub fn new(name: &str, application_guid: Uuid) -> Self {
        Self {
            name: name.to_owned(),
            application_guid,
            max_players: 0,
            password: None,
            flags: SessionFlags::empty(),
            application_defined: [0; 4],
            identity: None,
        }
    }
}

/// What an enumeration asks for (MC-DPL4CS 3.1.4.1, 2.2.29).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumRequest {
    /// `ApplicationGuid`: the game looked for.
    pub application_guid: Uuid,
    /// `Password`, if any.
    pub password: Option<String>,
    /// `Flags`.
    pub flags: dplay_wire::dp4::enumeration::EnumSessionsFlags,
}
