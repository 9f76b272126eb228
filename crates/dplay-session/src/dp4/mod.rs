//! DirectPlay 4 sessions (MC-DPL4CS 3.1, 3.2; INDEX A.4, C.3, E.6): hosting and joining, the
//! Player List, the Group List, player messages, ping, leave and host migration, sans-IO.
//!
//! [`Dp4Session`] is one endpoint, host or client; [`stream::StreamFramer`] splits a TCP stream
//! into messages. The runtime owns the sockets: a UDP socket on port 47624 (all addresses, so
//! broadcasts reach a host), a UDP game socket and a TCP listener in 2300-2400, and TCP
//! connections opened to the addresses of [`Dp4Transmit`]s that go [`Via::Tcp`].
//! Large non-guaranteed messages are fragmented by dplay-dpsp. In sessions with
//! DPSESSION_DIRECTPLAYPROTOCOL, player traffic between joined instances runs over MC-DPL4R
//! (`dplay_dpsp::reliable`) on the UDP game sockets instead. In client/server sessions
//! (DPSESSION_CLIENTSERVER) clients know only the system players and the server player
//! ([`DPID_SERVERPLAYER`]) and talk only to the server, which relays between them
//! (`client_server`). DirectPlay Voice rides on DPSP_MSG_VOICE, handed up and sent as bytes
//! for the voice layer above (`voice`).

mod address_map;
mod admin;
mod changes;
mod client;
mod client_server;
pub mod config;
pub mod event;
pub mod group_table;
mod groups;
pub mod guard;
mod host;
pub mod ids;
mod members;
mod ping;
mod reliable;
mod session;
pub mod stream;
pub mod table;
mod voice;

pub use address_map::{Dp4AddressMap, Dp4AddressMapHandle};
pub use client_server::DPID_SERVERPLAYER;
pub use config::{Dp4Config, Dp4Limits, ENUM_PORT, EnumRequest, HostConfig, SessionIdentity};
/// MC-DPL4R's counters, as [`Dp4Session::reliable_stats`] gives them.
pub use dplay_dpsp::reliable::Stats as ReliableStats;
pub use event::{
    CommandError, Dp4Event, Dp4Transmit, DropReason, EndReason, FoundSession, GroupEvent, JoinError, Stats,
    Via,
};
pub use group_table::{Group, GroupList};
pub use host::{DPERR_INVALIDPARAMS, DPERR_INVALIDPASSWORD, UNSUPPORTED_SESSION_FLAGS};
pub use members::DPID_ALLPLAYERS;
pub use ping::ROUND_TRIP_PROBE;
pub use session::{ConnId, Dp4Session, Role};
pub use stream::{StreamError, StreamFramer, TcpStatus};

#[cfg(test)]
mod tests;
