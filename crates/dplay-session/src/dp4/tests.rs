//! Exchanges of typed messages between endpoints wired together in memory.

mod address_map;
mod admin;
mod client_server;
mod enum_players;
mod enumeration;
mod faults;
mod groups;
mod hostile;
mod join;
mod leave;
mod messages;
pub(crate) mod net;
mod reliable;
mod scenario;
mod silent;
mod vanish;
mod voice;
mod windows;
mod windows_rp;
mod wine_facts;
