//! DirectPlay sessions, sans-IO: enumeration, join, the name table, player messages, leave
//! and host migration, driven by `handle_*` inputs and drained through `poll_*` outputs.

pub mod dp4;
