//! Every setting of a session participant, with the defaults the specs give (MS-DPDX 3.1.2;
//! MC-DPL8CS 3.1.2; INDEX C.2).

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use dplay_wire::dp8::session::DNET_VERSION_EX;
use uuid::Uuid;

/// The shortest period of a timer that re-arms itself (EnumQuery and PATH_TEST retries, the
/// DirectPlay 4 Ping timer): a zero period would fire in a loop.
pub const MIN_PERIOD: Duration = Duration::from_millis(1);

/// The two session topologies (MC-DPL8CS 1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Peer-to-peer: every peer connects to every other, one of them is the host.
    PeerToPeer,
    /// Client/server: clients connect to the server only (`DPNSESSION_CLIENT_SERVER`).
    ClientServer,
}

/// The configuration of one [`crate::Session`]: who the local player is and, when hosting,
/// what the session is. Built with [`SessionConfig::new`], then changed field by field; the
/// periods that re-arm themselves and the joiner caps have `set_*` methods that keep them
/// positive (docs/decisions.md, "API hygiene").
///
/// ```
/// use std::time::Duration;
/// use dplay_session::SessionConfig;
///
/// let mut config = SessionConfig::new(uuid::Uuid::nil(), "127.0.0.1:6073".parse().unwrap(), "host");
/// config.session_name = "Friday flight".into();
/// config.max_players = 8;
/// config.set_enum_retry(Duration::ZERO); // at least MIN_PERIOD
/// config.limits.set_max_pending_joins(16);
/// config.transport.set_max_window(32);
/// assert_eq!(config.enum_retry(), dplay_session::MIN_PERIOD);
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SessionConfig {
    /// Peer-to-peer or client/server.
    pub mode: Mode,
    /// `guidApplication`: the application every member runs (MC-DPL8CS 2.2.1.1).
    pub application_guid: Uuid,
    /// The address of the local socket, offered as our DN_ALTERNATE_ADDRESS when joining
    /// (MC-DPL8CS 2.2.9) unless it is unspecified (0.0.0.0, ::).
    pub local_addr: SocketAddr,
    /// The addresses of the local interfaces, offered instead when `local_addr` is unspecified.
    /// The runtime may fill it; the session never asks the system (it is sans-IO).
    pub interface_addrs: Vec<IpAddr>,
    /// The local player's `name`.
    pub player_name: String,
    /// The local player's `data`.
    pub player_data: Vec<u8>,
    /// The password sent when joining, or required when hosting (`DPNSESSION_REQUIREPASSWORD`).
    pub password: Option<String>,
    /// `SessionName`, when hosting.
    pub session_name: String,
    /// `dwMaxPlayers`, when hosting: 0 means no limit (MC-DPL8CS 2.2.1.4).
    pub max_players: u32,
    /// `DPNSESSION_MIGRATE_HOST`, when hosting: the oldest member takes over when the host
    /// leaves (MC-DPL8CS 3.2.5.4).
    pub migrate_host: bool,
    /// `DPNSESSION_NOENUMS`, when hosting: EnumQuery goes unanswered (MC-DPLHP 3.2.5).
    pub no_enums: bool,
    /// `ApplicationData` of our EnumResponse, when hosting (MC-DPLHP 2.2.2).
    pub enum_reply_data: Vec<u8>,
    /// `ApplicationReservedData` of our application description, when hosting: in our
    /// EnumResponse and DN_SEND_CONNECT_INFO (MC-DPLHP 2.2.2, MC-DPL8CS 2.2.1.4), the game's
    /// `pvApplicationReservedData`. With the session name, it must leave the EnumResponse
    /// in one datagram ([`crate::Session::host`] refuses it otherwise).
    pub application_reserved_data: Vec<u8>,
    /// `reply` of DN_SEND_CONNECT_INFO, when hosting (MC-DPL8CS 2.2.1.4), unless the
    /// application answers each join itself (`indicate_connect`).
    pub connect_reply_data: Vec<u8>,
    /// `connectData` of our PLAYER_CONNECT_INFO, when joining (MC-DPL8CS 2.2.1.2): the
    /// application's `pvUserConnectData`.
    pub connect_data: Vec<u8>,
    /// Host: every join that passes the checks waits for the application's answer
    /// ([`crate::Event::JoinRequest`], [`crate::Session::answer_join`]), as
    /// DPN_MSGID_INDICATE_CONNECT does (MS-DPDX 3.1.5; MC-DPL8CS 3.1.5.1 step 2). Off: every
    /// such join is admitted at once.
    pub indicate_connect: bool,
    /// When hosting, the application answers each EnumQuery that passes the session's checks
    /// itself ([`crate::Event::EnumQuery`], [`crate::Session::answer_enum`]), with its own
    /// reply data or not at all, as DPN_MSGID_ENUM_HOSTS_QUERY does (MC-DPLHP 3.2.5). Off:
    /// each is answered at once with `enum_reply_data`.
    pub indicate_enum: bool,
    /// The application answers each DN_REQ_PROCESS_COMPLETION itself, once it has processed
    /// the message (MC-DPL8CS 2.2.3, 3.3: "delivered to the application layer, not simply
    /// obtained by the receiver's machine"): the [`crate::Event::Message`] carries a
    /// [`crate::ProcessToken`] to hand to [`crate::Session::processed`], which sends
    /// DN_PROCESS_COMPLETION then. At most `limits.max_unprocessed_per_peer` wait per sender
    /// and each for `limits.process_completion_timeout` (docs/limits.md). Off: answered as
    /// the message arrives, which suits an application that has processed a message once it
    /// polled its event (the CLI); the DLL turns it on, as a game's handler returns later.
    pub defer_process_completion: bool,
    /// `dwDNETVersion` we announce: 7, DirectX 9, with the _EX layout (MC-DPL8CS 2.2.1.2).
    pub dnet_version: u32,
    /// `ApplicationPayload` of our EnumQuery messages (MC-DPLHP 2.2.1): the enumerating
    /// application's data for the host's application.
    pub enum_query_data: Vec<u8>,
    /// EnumQuery retry interval: 1.5 s, as DXDiag (MS-DPDX 3.1.2.2, 3.1.6.2). At least
    /// [`MIN_PERIOD`] ([`SessionConfig::set_enum_retry`]).
    enum_retry: Duration,
    /// EnumQuery sends before a search stops by itself: left to us (MC-DPLHP 3.1.2).
    pub enum_count: u32,
    /// PATH_TEST retry interval: 375 ms (MS-DPDX 3.1.2.5, 3.1.6.5). At least [`MIN_PERIOD`]
    /// ([`SessionConfig::set_path_test_interval`]).
    path_test_interval: Duration,
    /// PATH_TEST sends per existing peer at most: 7 (MS-DPDX 3.1.2.5).
    pub path_test_tries: u32,
    /// Seed of the RNG that draws the instance GUID (from which the DPNIDs follow), the
    /// EnumPayload values and, through `transport`, the `dwSessID` values. [`SessionConfig::new`]
    /// takes it from the operating system, so two sessions never share one; set it (or use
    /// [`SessionConfig::with_seed`]) to replay a run.
    pub rng_seed: u64,
    /// What a host accepts from joiners and how long it waits for them (docs/limits.md).
    pub limits: Limits,
    /// The transport's configuration; its `rng_seed` (derived from ours) and `accept_incoming`
    /// are set by [`crate::Session::new`].
    pub transport: dplay_dframe::Config,
    /// Host: where the other members are told a joiner is (a relay's endpoints); `None`:
    /// where its datagrams come from ([`crate::AddressMap`]).
    pub address_map: Option<crate::AddressMapHandle>,
}

/// What a host holds for others and for how long (issue 14; docs/limits.md has each value's
/// reason and the worst-case memory it allows). The specs set none of these.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    /// A player's `name` and `Password`, and our own `SessionName`, in UTF-16 units: 256.
    pub max_name_units: usize,
    /// A player's `data`: 8 KiB.
    pub max_player_data: usize,
    /// Application data a joiner sends (`connectData`) and our own EnumResponse
    /// `ApplicationData` and DN_SEND_CONNECT_INFO `reply`: 8 KiB.
    pub max_app_data: usize,
    /// Host: the largest message reassembled from a joiner before it is a member (its
    /// PLAYER_CONNECT_INFO): 256 KiB. Over it the connection ends; under it, names and data
    /// over their limits get DPNERR_INVALIDPARAM.
    pub max_join_message: usize,
    /// The one memory budget for what we hold for others (docs/limits.md): the transport's
    /// half-open table, receive windows and reassembly, the name table and early data, each
    /// charged when held and released when freed. Past it frames are not stored (their sender
    /// sends them again), CONNECTs make room by forgetting the oldest half-open attempts, and a
    /// join gets DPNERR_SESSIONFULL: 256 MiB.
    pub memory_budget: usize,
    /// Host: a joiner whose transport connection is up must be a member (its
    /// ACK_CONNECT_INFO in) within this, or it is dropped: 30 s.
    pub join_timeout: Duration,
    /// Host: a joiner whose transport connection is up must send its PLAYER_CONNECT_INFO
    /// within this (a real joiner sends it at once), or it is dropped: 10 s. A blind spoofer
    /// that completed the unsigned handshake from a victim's address is held this long, not
    /// `join_timeout` (docs/limits.md).
    pub connect_info_timeout: Duration,
    /// Host: joiners connected but not members yet, held at most (the oldest is dropped first):
    /// 64. At least 1 ([`Limits::set_max_pending_joins`]).
    max_pending_joins: usize,
    /// Host: of those, from one IP address: 8. At least 1.
    max_pending_joins_per_ip: usize,
    /// Joiner: an older peer that has not connected this long after our INSTRUCT_CONNECT is
    /// reported to the host with REQ_INTEGRITY_CHECK (MC-DPL8CS 3.2.5.3): 6 s.
    pub peer_connect_timeout: Duration,
    /// Host: the target of an integrity check that does not answer within this is removed as
    /// lost: 5 s.
    pub integrity_timeout: Duration,
    /// Host: a member that joiners from this many IP addresses could not reach (within
    /// `failed_join_window`) is removed, and the last joiner kept; 0 never removes: 2.
    pub evict_after_failed_joins: u32,
    /// Host: how long a failed join counts against a member: 10 minutes.
    pub failed_join_window: Duration,
    /// How often one source's refusals are logged at most: 10 s.
    pub log_interval: Duration,
    /// With `defer_process_completion`: DN_REQ_PROCESS_COMPLETION messages of one sender
    /// waiting for the application at most; past it the oldest is answered at once: 256.
    /// 0: none waits (as with the option off).
    pub max_unprocessed_per_peer: usize,
    /// With `defer_process_completion`: one not processed within this is answered anyway, so
    /// its sender's send completes: 60 s.
    pub process_completion_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_name_units: 256,
            max_player_data: 8 << 10,
            max_app_data: 8 << 10,
            max_join_message: 256 << 10,
            memory_budget: 256 << 20,
            join_timeout: Duration::from_secs(30),
            connect_info_timeout: Duration::from_secs(10),
            max_pending_joins: 64,
            max_pending_joins_per_ip: 8,
            peer_connect_timeout: Duration::from_secs(6),
            integrity_timeout: Duration::from_secs(5),
            evict_after_failed_joins: 2,
            failed_join_window: Duration::from_secs(600),
            log_interval: Duration::from_secs(10),
            max_unprocessed_per_peer: 256,
            process_completion_timeout: Duration::from_secs(60),
        }
    }
}

impl Limits {
    /// Joiners connected but not members yet, held at most.
    pub fn max_pending_joins(&self) -> usize {
        self.max_pending_joins
    }

    /// Sets [`Limits::max_pending_joins`]; 0 is raised to 1 (a host with no room for a joiner
    /// could never be joined).
    pub fn set_max_pending_joins(&mut self, n: usize) -> &mut Self {
        self.max_pending_joins = n.max(1);
        self
    }

    /// Joiners not members yet held from one IP address at most.
    pub fn max_pending_joins_per_ip(&self) -> usize {
        self.max_pending_joins_per_ip
    }

    /// Sets [`Limits::max_pending_joins_per_ip`]; 0 is raised to 1.
    pub fn set_max_pending_joins_per_ip(&mut self, n: usize) -> &mut Self {
        self.max_pending_joins_per_ip = n.max(1);
        self
    }
}

impl SessionConfig {
    /// A peer-to-peer configuration with the spec defaults.
    pub fn new(application_guid: Uuid, local_addr: SocketAddr, player_name: &str) -> Self {
        Self {
            mode: Mode::PeerToPeer,
            application_guid,
            local_addr,
            interface_addrs: Vec::new(),
            player_name: player_name.to_owned(),
            player_data: Vec::new(),
            password: None,
            session_name: String::new(),
            max_players: 0,
            migrate_host: true,
            no_enums: false,
            enum_reply_data: Vec::new(),
            application_reserved_data: Vec::new(),
            connect_reply_data: Vec::new(),
            connect_data: Vec::new(),
            indicate_connect: false,
            indicate_enum: false,
            defer_process_completion: false,
            dnet_version: DNET_VERSION_EX,
            enum_query_data: Vec::new(),
            enum_retry: Duration::from_millis(1500),
            enum_count: 10,
            path_test_interval: Duration::from_millis(375),
            path_test_tries: 7,
            rng_seed: os_seed(),
            limits: Limits::default(),
            transport: dplay_dframe::Config::default(),
            address_map: None,
        }
    }

    /// This configuration with a fixed `rng_seed`, for tests and replays.
    #[must_use]
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng_seed = seed;
        self
    }

    /// EnumQuery retry interval (MS-DPDX 3.1.2.2).
    pub fn enum_retry(&self) -> Duration {
        self.enum_retry
    }

    /// Sets [`SessionConfig::enum_retry`]; below [`MIN_PERIOD`] it is [`MIN_PERIOD`], so the
    /// retry timer cannot fire in a loop.
    pub fn set_enum_retry(&mut self, interval: Duration) -> &mut Self {
        self.enum_retry = interval.max(MIN_PERIOD);
        self
    }

    /// PATH_TEST retry interval (MS-DPDX 3.1.2.5).
    pub fn path_test_interval(&self) -> Duration {
        self.path_test_interval
    }

    /// Sets [`SessionConfig::path_test_interval`]; below [`MIN_PERIOD`] it is [`MIN_PERIOD`].
    pub fn set_path_test_interval(&mut self, interval: Duration) -> &mut Self {
        self.path_test_interval = interval.max(MIN_PERIOD);
        self
    }
}

/// A seed from the operating system's random source, for configurations built with the defaults
/// (docs/decisions.md, "Random by default"). Drawing it is no network or clock I/O, so the
/// crate stays sans-IO.
///
/// # Panics
///
/// If the operating system has no random source to give, which `getrandom` reports only on
/// platforms where none can work: there is no safe identifier to fall back to.
pub(crate) fn os_seed() -> u64 {
    getrandom::u64().expect("the operating system's random source failed")
}
