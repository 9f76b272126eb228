//! The one error type of the wire layer.

/// Why a byte sequence is not a valid message, and where.
///
/// Every variant names the field (spec spelling) and the byte offset inside the message that
/// was being decoded, so a log line or `dplay decode` can point at the bad byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize)]
#[non_exhaustive]
pub enum WireError {
    /// The message ended before `field` did.
    #[error("{field} at offset {offset}: truncated, needed {needed} bytes, got {got}")]
    Truncated {
        /// Field being read.
        field: &'static str,
        /// Offset of the field in the message.
        offset: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that were left.
        got: usize,
    },
    /// An offset/size pair points outside the message.
    #[error("{field}: offset {offset} and size {size} reach outside the {len}-byte message")]
    BadOffset {
        /// Field whose offset is bad.
        field: &'static str,
        /// The offset as read (before any base is added).
        offset: u64,
        /// The size as read.
        size: u64,
        /// Length of the region the offset counts in.
        len: usize,
    },
    /// A field holds a value the spec forbids.
    #[error("{field} at offset {offset}: invalid value {value:#x}: {reason}")]
    InvalidValue {
        /// Field with the bad value.
        field: &'static str,
        /// Offset of the field in the message.
        offset: usize,
        /// The value read.
        value: u64,
        /// What the spec requires.
        reason: &'static str,
    },
    /// A string is not terminated, has an odd byte count, or is not valid text.
    #[error("{field} at offset {offset}: bad string: {reason}")]
    BadString {
        /// String field.
        field: &'static str,
        /// Offset of the string in the message.
        offset: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The datagram belongs to no message this crate knows.
    #[error("unknown {what} {value:#x}")]
    Unknown {
        /// What kind of code was unknown (for example "CFRAME bExtOpCode").
        what: &'static str,
        /// The code read.
        value: u64,
    },
    /// `emit` was given a buffer shorter than `encoded_len()`.
    #[error("output buffer too small: needed {needed} bytes, got {got}")]
    BufferTooSmall {
        /// `encoded_len()` of the value.
        needed: usize,
        /// Length of the buffer given.
        got: usize,
    },
    /// A value cannot be encoded (a length does not fit its field, too many records, ...).
    #[error("{field}: cannot encode: {reason}")]
    Unencodable {
        /// Field that does not fit.
        field: &'static str,
        /// Why.
        reason: &'static str,
    },
}
