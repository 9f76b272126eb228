//! The DXDiag chat message, TRANS_USERDATA_SEND_MESSAGE (MS-DPDX 2.2.31, 3.1.4.1, 3.1.5.7).
//!
//! It is application data (USER_1 clear, no `dwPacketType`): `nType` (u16, 1) then a fixed
//! 400-byte UTF-16LE buffer. Windows sends whatever memory follows the text's NUL (the
//! MC-DPL8CS 4 example), so the whole buffer is kept for byte-exact re-emission.

use std::fmt;

use crate::WireError;
use crate::codec::{Reader, Wire, Writer};

/// `nType` of a chat message: `GAME_MSGID_CHAT`.
pub const GAME_MSGID_CHAT: u16 = 1;
/// UTF-16 units in `strChatString` (400 bytes).
pub const CHAT_STRING_UNITS: usize = 200;
/// Bytes of the whole message.
pub const CHAT_MESSAGE_LEN: usize = 2 + 2 * CHAT_STRING_UNITS;

/// TRANS_USERDATA_SEND_MESSAGE (MS-DPDX 2.2.31): 402 bytes. A shorter one is acknowledged by
/// the transport and then discarded (MS-DPDX 2.2.31); here it is a parse error.
#[derive(Clone, PartialEq, Eq)]
pub struct ChatMessage {
    units: Box<[u16; CHAT_STRING_UNITS]>,
}

impl ChatMessage {
    /// A message with `text`, cut to 199 units so a NUL always follows, padded with zeros.
    pub fn new(text: &str) -> Self {
        let mut units = Box::new([0u16; CHAT_STRING_UNITS]);
        for (dst, src) in units.iter_mut().take(CHAT_STRING_UNITS - 1).zip(text.encode_utf16()) {
            *dst = src;
        }
        Self { units }
    }

    /// A message with the given `strChatString` buffer, as received.
    pub fn from_units(units: [u16; CHAT_STRING_UNITS]) -> Self {
        Self { units: Box::new(units) }
    }

    /// The whole `strChatString` buffer.
    pub fn units(&self) -> &[u16; CHAT_STRING_UNITS] {
        &self.units
    }

    /// The text: the units before the first NUL, with U+FFFD for invalid UTF-16.
    pub fn text(&self) -> String {
        let end = self.units.iter().position(|&u| u == 0).unwrap_or(CHAT_STRING_UNITS);
        String::from_utf16_lossy(self.units.get(..end).unwrap_or_default())
    }
}

impl fmt::Debug for ChatMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChatMessage").field("text", &self.text()).finish_non_exhaustive()
    }
}

impl serde::Serialize for ChatMessage {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("ChatMessage", 1)?;
        st.serialize_field("text", &self.text())?;
        st.end()
    }
}

impl Wire for ChatMessage {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let n_type = r.u16("nType")?;
        if n_type != GAME_MSGID_CHAT {
            return Err(WireError::InvalidValue {
                field: "nType",
                offset: 0,
                value: n_type.into(),
                reason: "MUST be GAME_MSGID_CHAT (1) (MS-DPDX 2.2.31)",
            });
        }
        let raw = r.bytes("strChatString", 2 * CHAT_STRING_UNITS)?;
        r.finish("strChatString")?;
        let mut units = Box::new([0u16; CHAT_STRING_UNITS]);
        for (dst, pair) in units.iter_mut().zip(raw.chunks_exact(2)) {
            *dst =
                u16::from_le_bytes([pair.first().copied().unwrap_or(0), pair.get(1).copied().unwrap_or(0)]);
        }
        Ok(Self { units })
    }

    fn encoded_len(&self) -> usize {
        CHAT_MESSAGE_LEN
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, CHAT_MESSAGE_LEN)?;
        w.u16(GAME_MSGID_CHAT);
        for unit in self.units.iter() {
            w.u16(*unit);
        }
        w.finish()
    }
}
