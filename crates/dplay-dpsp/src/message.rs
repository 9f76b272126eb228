//! The three messages this layer speaks, and a datagram ready to send.

use std::net::SocketAddr;

use dplay_wire::dp4::fragment::{Fragment, PacketAck};
use dplay_wire::dp4::header::{Command, HEADER_LEN, Header};
use dplay_wire::dp4::message::{Dp4Body, Dp4Message};
use dplay_wire::{Reader, Wire, WireError};

/// Whether a message travels as DPSP_MSG_PACKET or DPSP_MSG_PACKET2_DATA (MC-DPL4CS 3.1.4.18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Reliability {
    /// DPSP_MSG_PACKET (0x15): fragments go out back to back, unacknowledged.
    Unreliable,
    /// DPSP_MSG_PACKET2_DATA (0x30): one fragment at a time, each acknowledged.
    Reliable,
}

/// A fragmentation-layer message body, told apart by the header's Command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DpspMessage {
    /// DPSP_MSG_PACKET, Command 0x15 (MC-DPL4CS 2.2.39).
    Packet(Fragment),
    /// DPSP_MSG_PACKET2_DATA, Command 0x30 (MC-DPL4CS 2.2.41).
    Packet2Data(Fragment),
    /// DPSP_MSG_PACKET2_ACK, Command 0x31 (MC-DPL4CS 2.2.40).
    Packet2Ack(PacketAck),
}

impl DpspMessage {
    /// A fragment of the given reliability.
    pub fn fragment(reliability: Reliability, fragment: Fragment) -> Self {
        match reliability {
            Reliability::Unreliable => Self::Packet(fragment),
            Reliability::Reliable => Self::Packet2Data(fragment),
        }
    }

    /// The header's Command for this body.
    pub fn command(&self) -> Command {
        match self {
            Self::Packet(_) => Command::DPSP_MSG_PACKET,
            Self::Packet2Data(_) => Command::DPSP_MSG_PACKET2_DATA,
            Self::Packet2Ack(_) => Command::DPSP_MSG_PACKET2_ACK,
        }
    }

    /// True for the Commands this layer handles: 0x15, 0x30 and 0x31.
    pub fn is_dpsp_command(command: Command) -> bool {
        matches!(
            command,
            Command::DPSP_MSG_PACKET | Command::DPSP_MSG_PACKET2_DATA | Command::DPSP_MSG_PACKET2_ACK
        )
    }

    /// Parses the body of a message whose header carried `command`; `None` if the Command is
    /// not one of this layer's.
    pub fn parse(command: Command, body: &[u8]) -> Option<Result<Self, WireError>> {
        Some(match command {
            Command::DPSP_MSG_PACKET => Fragment::parse(body).map(Self::Packet),
            Command::DPSP_MSG_PACKET2_DATA => Fragment::parse(body).map(Self::Packet2Data),
            Command::DPSP_MSG_PACKET2_ACK => PacketAck::parse(body).map(Self::Packet2Ack),
            _ => return None,
        })
    }

    /// This layer's message in a DP4 body, if it is one.
    pub fn from_body(body: &Dp4Body) -> Option<Self> {
        match body {
            Dp4Body::Packet(f) => Some(Self::Packet(f.clone())),
            Dp4Body::Packet2Data(f) => Some(Self::Packet2Data(f.clone())),
            Dp4Body::Packet2Ack(a) => Some(Self::Packet2Ack(*a)),
            _ => None,
        }
    }

    /// As a DP4 body.
    pub fn into_body(self) -> Dp4Body {
        match self {
            Self::Packet(f) => Dp4Body::Packet(f),
            Self::Packet2Data(f) => Dp4Body::Packet2Data(f),
            Self::Packet2Ack(a) => Dp4Body::Packet2Ack(a),
        }
    }

    fn body_len(&self) -> usize {
        match self {
            Self::Packet(f) | Self::Packet2Data(f) => f.encoded_len(),
            Self::Packet2Ack(a) => a.encoded_len(),
        }
    }
}

/// A datagram to send: where, its header (Command already set) and its body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// The peer to send to.
    pub to: SocketAddr,
    /// DPSP_MSG_HEADER with this body's Command (MC-DPL4CS 2.2.6).
    pub header: Header,
    /// The body.
    pub message: DpspMessage,
}

impl Transmit {
    /// Length of the datagram: header and body.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN + self.message.body_len()
    }

    /// As a complete DP4 message (header and body), for the wire crate's codec.
    pub fn to_message(&self) -> Dp4Message {
        Dp4Message { header: self.header, body: self.message.clone().into_body() }
    }

    /// The datagram's bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        self.to_message().to_vec()
    }
}

/// Splits a datagram into its header and this layer's message.
///
/// `Ok(None)`: a valid DP4 header whose Command is not 0x15, 0x30 or 0x31. Bytes past the
/// header's size field are ignored, as the size field bounds the message (MC-DPL4CS 2.2.6).
pub fn parse_datagram(datagram: &[u8]) -> Result<Option<(Header, DpspMessage)>, WireError> {
    let (header, len) = Header::parse(datagram)?;
    let body = datagram.get(HEADER_LEN..len).unwrap_or_default();
    match DpspMessage::parse(header.command, body) {
        None => Ok(None),
        Some(parsed) => parsed.map(|m| Some((header, m))),
    }
}

/// The Command of a reassembled message when it starts with a DP4 header, full or short.
///
/// Used to refuse a reassembled message that is itself a fragment or an ACK: the spec re-indicates
/// the payload "to the lowest level of the receive path" (MC-DPL4CS 2.2.41), where such a message
/// would start reassembly again.
pub(crate) fn nested_command(message: &[u8]) -> Option<Command> {
    if let Ok((header, _)) = Header::parse(message) {
        return Some(header.command);
    }
    let mut r = Reader::new(message);
    dplay_wire::dp4::header::ShortHeader::read(&mut r).ok().map(|h| h.command)
}
