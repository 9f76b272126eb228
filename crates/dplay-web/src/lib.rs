//! The host operator's dashboard (issue 17): `dplay host --web ADDR` shows the session and its
//! players live in a browser and takes admin commands. It never touches the protocol itself:
//! it sees what `dplay-session` keeps, through the `dplay-runtime` thread that drives it.
//!
//! Three parts, so the protocol loop never waits for the web:
//! - [`link()`]: a snapshot cell and an event broadcast the loop writes without blocking, and a
//!   bounded admin channel it drains with `try_recv` ([`LoopSide`], [`ServerSide`]);
//! - [`Observed`]: a hosted session ([`Hosted`]: DirectPlay 8 or 4, or the Flight Simulator
//!   add-on's of `dplay fs host`, with its aircraft as [`Traffic`]) as a runtime protocol that
//!   publishes through the link from the protocol thread and carries out the admin commands
//!   there (kick, bans, chat, max players, password);
//! - [`WebServer`]: axum on a current-thread tokio runtime on its own thread, serving the page
//!   (built in, no build step), the JSON API (docs/web-api.md) and the event stream.
//!
//! # The handle/poll contract
//!
//! [`Observed`] is a [`dplay_runtime::Protocol`]: the runtime calls its `handle_*` methods with
//! datagrams, commands and expired deadlines and drains its `poll_*` methods, as for any
//! protocol. After every `handle_*` call it runs the queued [`AdminCommand`]s and publishes a
//! [`Snapshot`] when one is due (at most every [`PUBLISH_INTERVAL`]); its `poll_timeout` asks
//! to be called again by then. Events pass through unchanged, and joins, leaves, refused
//! joins and chat lines are also sent to the event stream as [`WebEvent`]s. A loop of your
//! own that is not an `Observed` uses the [`LoopSide`] the same way: [`LoopSide::publish`],
//! [`LoopSide::event`], [`LoopSide::admin`], none of which waits.
//!
//! # Lifecycle
//!
//! 1. [`link()`] makes the two ends.
//! 2. The runtime is spawned with an [`Observed`] (or your loop) holding the [`LoopSide`].
//! 3. [`WebServer::start`] binds at once (a bad address is its error) and serves on a thread
//!    of its own with the [`ServerSide`] and an admin token ([`random_token`] or your own).
//! 4. Dropping the [`WebServer`] stops it and closes open event streams; the protocol loop is
//!    unaffected and ends as the runtime's session does.
//!
//! ```no_run
//! use std::net::SocketAddr;
//! use std::time::Instant;
//!
//! use dplay_runtime::{Dp8Command, Dp8Protocol, Runtime, RuntimeConfig};
//! use dplay_session::SessionConfig;
//! use dplay_web::{Observed, WebServer};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let (loop_side, server_side) = dplay_web::link();
//! let start = Instant::now();
//! let bind: SocketAddr = "0.0.0.0:6073".parse()?;
//! let host = Runtime::spawn_with(RuntimeConfig::new(bind), |local| {
//!     let config = SessionConfig::new(uuid::Uuid::nil(), local, "host");
//!     Observed::new(Dp8Protocol::new(config, start), loop_side, start)
//! })?;
//! host.command(Dp8Command::Host)?;
//! let web = WebServer::start("127.0.0.1:8080".parse()?, server_side, dplay_web::random_token()?)?;
//! println!("dashboard on http://{}/", web.local_addr());
//! # Ok(())
//! # }
//! ```
//!
//! # Errors
//!
//! [`WebServer::start`] (public reads) or [`WebServer::start_with`] (a [`WebConfig`]) and
//! [`random_token`] return `std::io::Error`: the address cannot be bound, the thread cannot be
//! started, the operating system has no random source. Everything after that is answered over
//! HTTP, never returned to the loop: a missing or wrong token is 401, an unknown player 404, a
//! full admin queue ([`ADMIN_QUEUE`]) 503 (try again), too many event streams ([`MAX_STREAMS`])
//! 503, a body over [`MAX_BODY`] 413, more requests from one address than its rate allows 429
//! (with `Retry-After`); connections over [`MAX_CONNECTIONS`] wait to be accepted. A browser too slow for the event stream loses the
//! oldest events ([`EVENT_BUFFER`]).

#![deny(missing_docs)]

mod addon_dp4_view;
mod addon_view;
mod admin_api;
mod assets;
mod ban_file;
mod connections;
mod counters;
mod dp4_view;
mod dp8_view;
mod host_view;
mod link;
mod metrics;
mod players;
mod public_address;
mod rate;
mod relay_view;
mod server;
mod snapshot;
mod token;
mod traffic;
mod voice_view;

pub use ban_file::{BadBanLine, BanEntry, BanFile, MAX_BAN_FILE, parse_ban_list, render_ban_list};
pub use connections::MAX_CONNECTIONS;
pub use counters::Counters;
pub use dp8_view::{dp8_commands, dp8_refresh, dp8_seen, dp8_snapshot};
pub use host_view::{Hosted, Observed, PUBLISH_INTERVAL, Seen};
pub use link::{ADMIN_QUEUE, AdminCommand, EVENT_BUFFER, LoopSide, ServerSide, link};
pub use players::Players;
pub use public_address::PublicAddress;
pub use rate::{BURST, MAX_CLIENTS, RATE};
pub use relay_view::{RelayMemberView, RelayView};
pub use server::{HEADER_TIMEOUT, MAX_BODY, MAX_HEADER_BYTES, MAX_STREAMS, WebConfig, WebServer};
pub use snapshot::{CHAT_CHARS, NAME_CHARS, PlayerView, SessionView, Snapshot, WebEvent};
pub use token::random_token;
pub use traffic::{AircraftView, TRAIL_INTERVAL, TRAIL_POINTS, Traffic, Trails};
pub use voice_view::{TALKING_FOR, VoiceClientView, VoiceView};
