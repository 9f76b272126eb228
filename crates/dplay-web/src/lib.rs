//! The host operator's dashboard (issue 17): `dplay host --web ADDR` shows the session and its
//! players live in a browser and takes admin commands.
//!
//! Three parts, so the protocol loop never waits for the web:
//! - [`link()`]: a snapshot cell and an event broadcast the loop writes without blocking, and a
//!   bounded admin channel it drains with `try_recv` ([`LoopSide`], [`ServerSide`]);
//! - [`Observed`]: a hosted session ([`Hosted`]: DirectPlay 8 or 4) as a runtime protocol that
//!   publishes through the link from the protocol thread and carries out the admin commands
//!   there (kick, bans, chat, max players, password);
//! - [`WebServer`]: axum on a current-thread tokio runtime on its own thread, serving the page
//!   (built in, no build step), the JSON API and the event stream.

mod addon_view;
mod admin_api;
mod ban_file;
mod connections;
mod counters;
mod dp4_view;
mod dp8_view;
mod host_view;
mod link;
mod metrics;
mod rate;
mod server;
mod snapshot;
mod token;

pub use ban_file::{BanEntry, BanFile, MAX_BAN_FILE};
pub use connections::MAX_CONNECTIONS;
pub use counters::Counters;
pub use dp8_view::{dp8_commands, dp8_seen, dp8_snapshot};
pub use host_view::{Hosted, Observed, PUBLISH_INTERVAL, Seen};
pub use link::{ADMIN_QUEUE, AdminCommand, EVENT_BUFFER, LoopSide, ServerSide, link};
pub use rate::{BURST, MAX_CLIENTS, RATE};
pub use server::{HEADER_TIMEOUT, MAX_BODY, MAX_HEADER_BYTES, MAX_STREAMS, WebConfig, WebServer};
pub use snapshot::{CHAT_CHARS, PlayerView, SessionView, Snapshot, WebEvent};
pub use token::random_token;
