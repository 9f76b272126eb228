//! The host operator's dashboard (issue 17): `dplay host --web ADDR` shows the session and its
//! players live in a browser and takes admin commands.
//!
//! Three parts, so the protocol loop never waits for the web:
//! - [`link()`]: a snapshot cell and an event broadcast the loop writes without blocking, and a
//!   bounded admin channel it drains with `try_recv` ([`LoopSide`], [`ServerSide`]);
//! - [`Observed`]: a DirectPlay 8 host ([`Watched`]: `dplay host`'s, or the Flight Simulator
//!   add-on's of `dplay fs host`, with its aircraft as [`Traffic`]) as a runtime protocol that
//!   publishes through the link from the protocol thread and carries out the admin commands
//!   there;
//! - [`WebServer`]: axum on a current-thread tokio runtime on its own thread, serving the page
//!   (built in, no build step), the JSON API and the event stream.

mod assets;
mod connections;
mod counters;
mod host_view;
mod link;
mod metrics;
mod rate;
mod server;
mod snapshot;
mod token;
mod traffic;
mod watched;

pub use connections::MAX_CONNECTIONS;
pub use counters::Counters;
pub use host_view::{Observed, PUBLISH_INTERVAL};
pub use link::{ADMIN_QUEUE, AdminCommand, EVENT_BUFFER, LoopSide, ServerSide, link};
pub use rate::{BURST, MAX_CLIENTS, RATE};
pub use server::{HEADER_TIMEOUT, MAX_BODY, MAX_HEADER_BYTES, MAX_STREAMS, WebConfig, WebServer};
pub use snapshot::{CHAT_CHARS, PlayerView, SessionView, Snapshot, WebEvent};
pub use token::random_token;
pub use traffic::{AircraftView, TRAIL_INTERVAL, TRAIL_POINTS, Traffic, Trails};
pub use watched::Watched;
