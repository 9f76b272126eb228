//! DirectPlay 4: DPSP_MSG_HEADER, every DPSP_MSG_* and the reliable protocol's frames.
//!
//! [`message::Dp4Message`] is a whole system message, [`player_message::PlayerMessage`] the
//! signature-less application message, [`message::Dp4Datagram`] tells them apart. The body
//! types live in modules by concept.

pub mod enumeration;
mod fields;
pub mod fragment;
pub mod header;
pub mod join;
pub mod message;
pub mod nametable;
pub mod player;
pub mod player_message;
pub mod reliable;
mod result_code;
pub mod routing;
pub mod security;
pub mod session;

pub use result_code::DpResult;
