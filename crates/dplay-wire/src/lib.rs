//! Every DirectPlay wire format, byte-exact: parsed with validation and emitted, both ways.
//!
//! * [`dp8`]: DirectPlay 8. The transport's CFRAMEs and DFRAMEs (MC-DPL8R 2.2; MS-DPDX 2.2.7-2.2.22),
//!   enumeration and path test (MC-DPLHP 2.2; MS-DPDX 2.2.4-2.2.6), and the session messages
//!   (MC-DPL8CS 2.2; MS-DPDX 2.2.10-2.2.37).
//! * [`dp4`]: DirectPlay 4. DPSP_MSG_HEADER and every DPSP_MSG_* (MC-DPL4CS 2.2), and the
//!   reliable protocol's frames (MC-DPL4R 2.2).
//! * [`voice`]: DirectPlay Voice, the 17 MC-DPLVP messages (2.2), over either.
//!
//! Each value type has `parse`, `encoded_len` and `emit` (the [`Wire`] trait). Any byte
//! sequence yields a value or a [`WireError`] naming the field and offset; nothing here panics
//! on input or allocates more than the input's length. This crate has no state, no clock and
//! no I/O: it is the vocabulary the other crates speak. The exceptions are [`budget`], the
//! memory budget counter the transports and the session layer share (docs/limits.md), and
//! [`log_limit`], their once-per-source log limit (time passed in).
//!
//! # Errors and what to do
//!
//! A [`WireError`] means the bytes are not the message they claim to be (truncated, a length
//! past the end, a value the spec forbids); its Display text names the field and offset. A
//! receiver drops such a datagram and counts it; it never answers it. `emit` fails only when
//! the buffer is shorter than `encoded_len`.
//!
//! # Example
//!
//! ```
//! use dplay_wire::dp8::enumeration::{DXDIAG_APPLICATION_GUID, EnumQuery};
//! use dplay_wire::{Blob, Wire, parse_datagram};
//!
//! let query = EnumQuery {
//!     enum_payload: 0x1234,
//!     application_guid: Some(DXDIAG_APPLICATION_GUID),
//!     application_payload: Blob::default(),
//! };
//! let bytes = query.to_vec().unwrap();
//! assert_eq!(EnumQuery::parse(&bytes).unwrap(), query);
//! let datagram = parse_datagram(&bytes).unwrap();
//! assert_eq!(datagram.message_name(), "EnumQuery");
//! assert!(parse_datagram(&bytes[..bytes.len() - 1]).is_err());
//! ```
//!
//! `examples/datagram.rs` prints a hex dump and the error for a truncated copy.
#![deny(missing_docs)]
#![warn(clippy::indexing_slicing)]

pub mod budget;
pub mod codec;
pub mod datagram;
pub mod dp4;
pub mod dp8;
mod error;
pub mod guid;
pub mod hexdump;
pub mod log_limit;
mod macros;
pub mod text;
pub mod voice;

#[cfg(test)]
mod testutil;

pub use codec::{Reader, Wire, Writer};
pub use datagram::{Datagram, Family, parse_datagram};
pub use error::WireError;
pub use text::{Blob, WideString};
pub use uuid::Uuid;
