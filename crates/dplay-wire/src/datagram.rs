//! One entry point for any DirectPlay datagram: tell its family and kind apart, then parse it.
//!
//! [`classify`] looks only at the lead bytes and the length, following the DirectPlay 8 demux
//! table (MC-DPL8R 3.1.5; MC-DPLHP 2.2; INDEX B.1) and the DirectPlay 4 signature test
//! (MC-DPL4CS 3.1.4.16.2, 2.2.6; decision F-21). [`parse_datagram`] then parses the whole
//! datagram into a [`Datagram`], including the payload of a DFRAME when it is a complete
//! session message. This is what `dplay decode` and the fuzz targets use; the transport parses
//! with its connection's [`DframeContext`](crate::dp8::dframe::DframeContext) instead.
//!
//! A DirectPlay 4 message is recognised first, by `play` at offset 20: its first byte is the low
//! byte of a size, which may be odd and would otherwise look like a DFRAME.

use crate::WireError;
use crate::codec::Wire;
use crate::dp4::header::{HEADER_LEN, Header, SIGNATURE, SIGNATURE_OFFSET};
use crate::dp4::message::Dp4Message;
use crate::dp8::cframe::{CFRAME_MIN_LEN, Cframe, PACKET_COMMAND_CFRAME, PACKET_COMMAND_POLL};
use crate::dp8::dframe::{DFRAME_MIN_LEN, DframeCommand};
use crate::dp8::enumeration::{ENUM_QUERY_COMMAND, ENUM_RESPONSE_COMMAND, EnumMessage};
use crate::dp8::path_test::{
    NAT_RESOLVER_QUERY_DATA_KIND, NAT_RESOLVER_RESPONSE_DATA_KIND, NatMessage, PATH_TEST_DATA_KIND,
};

/// The protocol a datagram belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Family {
    /// DirectPlay 8 (MC-DPL8R, MC-DPL8CS, MC-DPLHP; MS-DPDX).
    Dp8,
    /// DirectPlay 4 (MC-DPL4CS, MC-DPL4R).
    Dp4,
}

impl Family {
    /// `DirectPlay 8` or `DirectPlay 4`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Dp8 => "DirectPlay 8",
            Self::Dp4 => "DirectPlay 4",
        }
    }

    /// `dp8` or `dp4`.
    pub fn short(self) -> &'static str {
        match self {
            Self::Dp8 => "dp8",
            Self::Dp4 => "dp4",
        }
    }
}

/// What the lead bytes and length of a datagram say it is (INDEX B.1; decision F-21).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Lead byte 0x00: a DirectPlay 8 "session packet" (EnumQuery, EnumResponse, PATH_TEST,
    /// NAT resolver), told apart by the command byte that follows (MC-DPLHP 2.2; MS-DPDX 2.2.4-6).
    Dp8SessionPacket {
        /// `CommandByte` (offset 1).
        command: u8,
    },
    /// 0x80 or 0x88 and at least 12 bytes: a CFRAME (MC-DPL8R 2.2.1, 3.1.5).
    Dp8Cframe,
    /// Bit 0 set and at least 4 bytes: a DFRAME (MC-DPL8R 2.2.2, 3.1.5).
    Dp8Dframe,
    /// `play` at offset 20: a DirectPlay 4 message with its full DPSP_MSG_HEADER (MC-DPL4CS 2.2.6).
    Dp4Message,
    /// Nothing DirectPlay knows; a receiver ignores it (MC-DPL8R 3.1.5).
    Unknown,
}

impl Kind {
    /// The family, or `None` for [`Kind::Unknown`].
    pub fn family(self) -> Option<Family> {
        match self {
            Self::Dp8SessionPacket { .. } | Self::Dp8Cframe | Self::Dp8Dframe => Some(Family::Dp8),
            Self::Dp4Message => Some(Family::Dp4),
            Self::Unknown => None,
        }
    }
}

/// Tells a datagram's family and kind apart without parsing it (INDEX B.1; decision F-21).
pub fn classify(bytes: &[u8]) -> Kind {
    if bytes.len() >= HEADER_LEN && bytes.get(SIGNATURE_OFFSET..SIGNATURE_OFFSET + 4) == Some(&SIGNATURE[..])
    {
        return Kind::Dp4Message;
    }
    match bytes.first().copied() {
        Some(0) if bytes.len() >= 2 => Kind::Dp8SessionPacket { command: bytes.get(1).copied().unwrap_or(0) },
        Some(lead) if lead & DframeCommand::DATA.bits() != 0 && bytes.len() >= DFRAME_MIN_LEN => {
            Kind::Dp8Dframe
        }
        Some(lead)
            if (lead == PACKET_COMMAND_CFRAME || lead == PACKET_COMMAND_CFRAME | PACKET_COMMAND_POLL)
                && bytes.len() >= CFRAME_MIN_LEN =>
        {
            Kind::Dp8Cframe
        }
        _ => Kind::Unknown,
    }
}

/// Parses any DirectPlay datagram (one UDP payload, or one message cut from a DP4 stream).
///
/// Fails with [`WireError::Unknown`] when [`classify`] recognises nothing, and with the
/// message's own error when a recognised datagram is malformed.
pub fn parse_datagram(bytes: &[u8]) -> Result<Datagram, WireError> {
    match classify(bytes) {
        Kind::Dp8Cframe => Cframe::parse(bytes).map(Datagram::Cframe),
        Kind::Dp8Dframe => DframeDatagram::parse(bytes).map(Datagram::Dframe),
        Kind::Dp4Message => Dp4Message::parse(bytes).map(Datagram::Dp4),
        Kind::Dp8SessionPacket { command: ENUM_QUERY_COMMAND | ENUM_RESPONSE_COMMAND } => {
            EnumMessage::parse(bytes).map(Datagram::Enum)
        }
        Kind::Dp8SessionPacket {
            command: PATH_TEST_DATA_KIND | NAT_RESOLVER_QUERY_DATA_KIND | NAT_RESOLVER_RESPONSE_DATA_KIND,
        } => NatMessage::parse(bytes).map(Datagram::Nat),
        Kind::Dp8SessionPacket { command } => {
            Err(WireError::Unknown { what: "DirectPlay 8 session packet CommandByte", value: command.into() })
        }
        // A CFRAME or DFRAME lead byte on too few bytes is a truncated frame, not an unknown
        // one: its parser names the field that is cut (issue 25 item 18, `88 01`).
        Kind::Unknown => match bytes.first().copied() {
            Some(lead)
                if lead == PACKET_COMMAND_CFRAME || lead == PACKET_COMMAND_CFRAME | PACKET_COMMAND_POLL =>
            {
                Cframe::parse(bytes).map(Datagram::Cframe)
            }
            Some(lead) if lead & DframeCommand::DATA.bits() != 0 => {
                DframeDatagram::parse(bytes).map(Datagram::Dframe)
            }
            lead => Err(WireError::Unknown { what: "datagram lead byte", value: lead.unwrap_or(0).into() }),
        },
    }
}

/// Any DirectPlay datagram, parsed (see [`parse_datagram`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(untagged)]
pub enum Datagram {
    /// A DirectPlay 8 EnumQuery or EnumResponse (MC-DPLHP 2.2; MS-DPDX 2.2.4-2.2.5).
    Enum(EnumMessage),
    /// A DirectPlay 8 PATH_TEST or NAT resolver message (MC-DPLNAT 2.2; MS-DPDX 2.2.6).
    Nat(NatMessage),
    /// A DirectPlay 8 CFRAME (MC-DPL8R 2.2.1).
    Cframe(Cframe),
    /// A DirectPlay 8 DFRAME (MC-DPL8R 2.2.2).
    Dframe(DframeDatagram),
    /// A DirectPlay 4 system message with its full header (MC-DPL4CS 2.2).
    Dp4(Dp4Message),
}

impl Datagram {
    /// The protocol family.
    pub fn family(&self) -> Family {
        match self {
            Self::Enum(_) | Self::Nat(_) | Self::Cframe(_) | Self::Dframe(_) => Family::Dp8,
            Self::Dp4(_) => Family::Dp4,
        }
    }

    /// The message name as its spec spells it: `CONNECT`, `SACK`, `KEEPALIVE`,
    /// `EnumQuery`, `PATH_TEST`, `DPSP_MSG_ENUMSESSIONS`, ...
    pub fn message_name(&self) -> &'static str {
        match self {
            Self::Enum(m) => m.name(),
            Self::Nat(m) => m.name(),
            Self::Cframe(c) => c.name(),
            Self::Dframe(d) => d.message_name(),
            Self::Dp4(m) => match &m.body {
                crate::dp4::message::Dp4Body::Voice(v) => v.message.name(),
                _ => m.name(),
            },
        }
    }

    /// The MS-DPDX name of the same message, where MS-DPDX gives it another one (decision F-1).
    pub fn alias(&self) -> Option<&'static str> {
        if let Self::Dframe(d) = self
            && let Some(alias) = d.session_alias()
        {
            return Some(alias);
        }
        if let Self::Dp4(m) = self
            && let crate::dp4::message::Dp4Body::Voice(_) = m.body
        {
            return Some("DPSP_MSG_VOICE");
        }
        match self.message_name() {
            "CONNECT" => Some("TRANS_COMMAND_CONNECT"),
            "CONNECTED" => Some("TRANS_COMMAND_CONNECT_ACCEPT"),
            "SACK" => Some("TRANS_COMMAND_SACK"),
            "KEEPALIVE" => Some("TRANS_USERDATA_KEEPALIVE"),
            "END_OF_STREAM" => Some("TRANS_USERDATA_END_OF_STREAM"),
            "DFRAME" => Some("TRANS_USERDATA_HEADER"),
            "PATH_TEST" => Some("SESS_PATH_TEST"),
            _ => None,
        }
    }
}

impl Wire for Datagram {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        parse_datagram(bytes)
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Enum(m) => m.encoded_len(),
            Self::Nat(m) => m.encoded_len(),
            Self::Cframe(c) => c.encoded_len(),
            Self::Dframe(d) => d.encoded_len(),
            Self::Dp4(m) => m.encoded_len(),
        }
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Self::Enum(m) => m.emit(buf),
            Self::Nat(m) => m.emit(buf),
            Self::Cframe(c) => c.emit(buf),
            Self::Dframe(d) => d.emit(buf),
            Self::Dp4(m) => m.emit(buf),
        }
    }
}

/// Cuts a DirectPlay 4 TCP stream into messages by their size fields (MC-DPL4CS 2.1, 2.2.6).
///
/// Yields each complete message; a message whose header is not valid, or whose size runs past
/// the end of `stream`, ends the iteration with an error (the rest of the stream cannot be
/// framed).
pub fn dp4_stream_messages(stream: &[u8]) -> Dp4Stream<'_> {
    Dp4Stream { rest: stream, failed: false }
}

/// The iterator of [`dp4_stream_messages`].
#[derive(Debug, Clone)]
pub struct Dp4Stream<'a> {
    rest: &'a [u8],
    failed: bool,
}

impl<'a> Iterator for Dp4Stream<'a> {
    type Item = Result<&'a [u8], WireError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() || self.failed {
            return None;
        }
        let framed = Header::parse(self.rest).and_then(|(_, size)| {
            let (msg, rest) = self.rest.split_at_checked(size).ok_or(WireError::Truncated {
                field: "dwSize",
                offset: 0,
                needed: size,
                got: self.rest.len(),
            })?;
            self.rest = rest;
            Ok(msg)
        });
        self.failed = framed.is_err();
        Some(framed)
    }
}

mod dframe;
#[cfg(test)]
mod tests;

pub use dframe::{CoalescedPart, DframeDatagram, DframePayload, PartBody};
