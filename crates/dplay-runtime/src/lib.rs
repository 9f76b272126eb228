//! The only crate of the stack that touches sockets, clocks and threads.
//!
//! A [`Runtime`] owns the sockets its [`RuntimeConfig`] lists ([`SocketSpec`]: UDP sockets and
//! TCP listeners, each on one address or the first free port of a range) and one thread
//! running a mio event loop. It drives any sans-IO [`Protocol`] (the DirectPlay 8 session
//! layer, the add-on on top of it, a DirectPlay 4 session):
//!
//! - it reads every datagram until the socket would block (on Linux up to 32 per `recvmmsg`
//!   system call) and hands each to [`Protocol::handle_udp`] with the [`SocketId`] it came in
//!   on;
//! - it accepts TCP connections on its listeners and opens them on demand, without blocking,
//!   to the destination of a [`Transmit`] that goes [`Path::Tcp`] (reused while open); it reads
//!   each connection until it would block and hands the bytes to [`Protocol::handle_stream`],
//!   keeps what a connection could not take yet in a bounded per-connection buffer, and reports
//!   a connection that closes, fails, is refused or cannot be opened through
//!   [`Protocol::handle_stream_closed`] ([`StreamClosed`], [`CloseReason`]);
//! - it calls [`Protocol::handle_timeout`] at the earliest [`Protocol::poll_timeout`], and
//!   writes every [`Protocol::poll_send`] (datagrams on Linux up to 32 per `sendmmsg` system
//!   call), keeping the datagrams a socket refused when it is full and taking nothing more
//!   from the protocol until it is writable.
//!
//! Applications talk to it through crossbeam channels (commands in, events out) and a mio
//! `Waker`; it stops on [`Runtime::shutdown`], when dropped, or by itself once the protocol
//! [`Protocol::is_finished`] and everything queued is written.
//!
//! # Lifecycle and errors
//!
//! [`Runtime::spawn`] (or [`Runtime::spawn_with`], which hands the protocol the bound address)
//! fails with [`RuntimeError`] when a socket cannot be opened (the port is in use: pick another
//! or port 0). Then [`Runtime::command`] sends commands (failing with
//! [`RuntimeError::Stopped`] once the loop ended) and [`Runtime::events`] delivers events in
//! order; a command the protocol refuses comes back as an event (such as
//! [`Dp8Event::CommandFailed`]). After a leave, let the loop end by itself
//! ([`Runtime::is_running`] turns false once the graceful closes are done, a few round trips for
//! DirectPlay 8): [`Runtime::shutdown`] or dropping the runtime stops it at once and cuts them
//! short. `examples/embedded_host.rs` embeds a host in an application this way.
//!
//! It contains no protocol logic: everything it knows about DirectPlay is in the crates it
//! drives. Three drivers come with it: [`Dp8Protocol`] (a DirectPlay 8 session, one UDP
//! socket), [`AddonProtocol`] (the Flight Simulator add-on over a DirectPlay 8 session) and
//! [`Dp4Protocol`] (a DirectPlay 4 session: the enumeration port 47624, a UDP game socket and a
//! TCP listener in 2300-2400, TCP connections to the other instances; MC-DPL4CS 2.1); a fourth,
//! [`AddonDp4Protocol`], runs the add-on (FS98 dialect) over a DirectPlay 4 session.
#![deny(missing_docs)]
#![allow(clippy::disallowed_methods)] // this crate is where the clock is read (clippy.toml)

mod addon;
mod addon_dp4;
mod bind;
mod dp4;
mod dp4_report;
mod dp8;
mod error;
mod event_loop;
mod interfaces;
mod nat_query;
mod nat_resolver;
pub mod pcap;
mod peer_bytes;
mod protocol;
mod relayed;
mod relayed_dp4;
mod socket;
mod streams;
mod udp;
mod voice;

pub use addon::{AddonCommand, AddonEvent, AddonProtocol, AddonRole};
pub use addon_dp4::{AddonDp4Command, AddonDp4Event, AddonDp4Protocol, AddonDp4Role};
pub use bind::{SocketKind, SocketSpec};
pub use dp4::{Dp4Binding, Dp4Command, Dp4Event, Dp4Player, Dp4Protocol};
pub use dp8::{Dp8Command, Dp8Event, Dp8Protocol, GroupCommand, Player};
pub use error::RuntimeError;
pub use event_loop::{Runtime, RuntimeConfig, StreamLimits};
pub use interfaces::interface_addrs;
pub use nat_query::NatQuery;
pub use nat_resolver::{NatResolverCommand, NatResolverEvent, NatResolverProtocol};
pub use peer_bytes::{ByteCounts, MAX_PEER_ADDRS, PeerBytes};
pub use protocol::{
    CloseReason, Direction, Path, Protocol, SocketId, StreamClosed, StreamDeadline, StreamId, StreamRefusal,
    StreamStatus, Tap, Transmit,
};
pub use relayed::{RelayIo, Relayed, SharedRelay, StreamRoute, relay_sockets};
pub use relayed_dp4::{SharedDp4Relay, dp4_relay_sockets};
pub use streams::WRITE_BACKLOG;
pub use voice::{VoiceEvent, VoiceRole};
