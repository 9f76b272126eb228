//! The add-on's state machines driven through their public interface, as a session layer drives
//! them: one test (or more) per row of seed 004's packet table, named after the row.

mod client;
mod common;
mod host;
mod tracking;
