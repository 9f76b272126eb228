//! A whole DFRAME datagram for a context-free decoder: the header, then the payload parsed as
//! far as the frame's own bits allow (MC-DPL8R 2.2.2-2.2.3; MS-DPDX 3.1.5.8-9).
//!
//! * `PACKET_CONTROL_COALESCE`: the coalesced format; each sub-payload with USER_1 is a session
//!   message (MS-DPDX 2.2.17.1).
//! * USER_1 with NEW_MSG and END_MSG: one complete session message (MC-DPL8CS 2.1.1).
//! * USER_2 with NEW_MSG and END_MSG: one DirectPlay Voice message (MC-DPLVP 2.1; MC-DPL8R
//!   2.2.3), also as a coalesced sub-payload with USER_2.
//! * USER_1 and USER_2 clear, NEW_MSG and END_MSG, 402 bytes led by `GAME_MSGID_CHAT`: DXDiag's
//!   chat message (MS-DPDX 2.2.31).
//! * Anything else is kept as bytes: application data or a piece of a larger message.

use crate::WireError;
use crate::codec::{Reader, Wire, Writer};
use crate::dp8::coalesce::{SubPayloadRef, coalesced_len, emit_coalesced, parse_coalesced};
use crate::dp8::dframe::{DframeCommand, DframeContext, DframeControl, DframeHeader};
use crate::dp8::session::{CHAT_MESSAGE_LEN, ChatMessage, GAME_MSGID_CHAT, SessionMessage};
use crate::text::Blob;
use crate::voice::VoiceMessage;

/// What follows a DFRAME header.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum DframePayload {
    /// No payload: a KeepAlive, or END_STREAM alone.
    Empty,
    /// A complete session message (USER_1 with NEW_MSG and END_MSG).
    Session(SessionMessage),
    /// DXDiag's chat message, TRANS_USERDATA_SEND_MESSAGE (MS-DPDX 2.2.31).
    Chat(ChatMessage),
    /// A complete DirectPlay Voice message (USER_2 with NEW_MSG and END_MSG; MC-DPLVP 2.1).
    Voice(VoiceMessage),
    /// The coalesced format: 1 to 32 sub-payloads (MC-DPL8R 2.2.3; MS-DPDX 2.2.17.1).
    Coalesced(Vec<CoalescedPart>),
    /// Bytes this layer does not interpret: application data or a piece of a multi-frame
    /// message.
    Data(Blob),
}

/// One sub-payload of a coalesced frame (MC-DPL8R 2.2.3).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CoalescedPart {
    /// `PACKET_COMMAND_RELIABLE` in the sub-header's `bCommand`.
    pub reliable: bool,
    /// `PACKET_COMMAND_SEQUENTIAL`.
    pub sequential: bool,
    /// `PACKET_COMMAND_USER_1`: a session message.
    pub user_1: bool,
    /// `PACKET_COMMAND_USER_2`: voice.
    pub user_2: bool,
    /// The sub-payload.
    pub body: PartBody,
}

/// What a coalesced sub-payload holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum PartBody {
    /// A session message (USER_1 set).
    Session(SessionMessage),
    /// A voice message (USER_2 set, USER_1 clear; MC-DPLVP 2.1).
    Voice(VoiceMessage),
    /// Bytes this layer does not interpret.
    Data(Blob),
}

impl PartBody {
    fn to_bytes(&self) -> Result<Vec<u8>, WireError> {
        match self {
            Self::Session(m) => m.to_vec(),
            Self::Voice(m) => m.to_vec(),
            Self::Data(b) => Ok(b.0.clone()),
        }
    }

    fn len(&self) -> usize {
        match self {
            Self::Session(m) => m.encoded_len(),
            Self::Voice(m) => m.encoded_len(),
            Self::Data(b) => b.len(),
        }
    }
}

fn is_chat(command: DframeCommand, bytes: &[u8]) -> bool {
    !command.intersects(DframeCommand::USER_1 | DframeCommand::USER_2)
        && command.contains(DframeCommand::NEW_MSG | DframeCommand::END_MSG)
        && bytes.len() == CHAT_MESSAGE_LEN
        && Reader::new(bytes).u16("nType").is_ok_and(|t| t == GAME_MSGID_CHAT)
}

impl DframePayload {
    /// Parses the payload of a frame with `header`.
    pub fn parse(header: &DframeHeader, bytes: &[u8]) -> Result<Self, WireError> {
        let whole = DframeCommand::NEW_MSG | DframeCommand::END_MSG;
        if header.control.contains(DframeControl::COALESCE) {
            let parts = parse_coalesced(bytes)?
                .iter()
                .map(|p| {
                    let body = if p.user_1 {
                        PartBody::Session(SessionMessage::parse(p.data)?)
                    } else if p.user_2 {
                        PartBody::Voice(VoiceMessage::parse(p.data)?)
                    } else {
                        PartBody::Data(Blob::new(p.data))
                    };
                    Ok(CoalescedPart {
                        reliable: p.reliable,
                        sequential: p.sequential,
                        user_1: p.user_1,
                        user_2: p.user_2,
                        body,
                    })
                })
                .collect::<Result<_, WireError>>()?;
            return Ok(Self::Coalesced(parts));
        }
        if bytes.is_empty() {
            return Ok(Self::Empty);
        }
        if header.command.contains(DframeCommand::USER_1 | whole) {
            return SessionMessage::parse(bytes).map(Self::Session);
        }
        if header.command.contains(DframeCommand::USER_2 | whole) {
            return VoiceMessage::parse(bytes).map(Self::Voice);
        }
        if is_chat(header.command, bytes) {
            return ChatMessage::parse(bytes).map(Self::Chat);
        }
        Ok(Self::Data(Blob::new(bytes)))
    }

    /// Bytes on the wire.
    pub fn encoded_len(&self) -> usize {
        match self {
            Self::Empty => 0,
            Self::Session(m) => m.encoded_len(),
            Self::Chat(m) => m.encoded_len(),
            Self::Voice(m) => m.encoded_len(),
            Self::Coalesced(parts) => coalesced_len(parts.iter().map(|p| p.body.len())),
            Self::Data(b) => b.len(),
        }
    }

    /// Writes the payload into the front of `buf`.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        match self {
            Self::Empty => Ok(0),
            Self::Session(m) => m.emit(buf),
            Self::Chat(m) => m.emit(buf),
            Self::Voice(m) => m.emit(buf),
            Self::Coalesced(parts) => {
                let bodies = parts.iter().map(|p| p.body.to_bytes()).collect::<Result<Vec<_>, _>>()?;
                let refs: Vec<_> = parts
                    .iter()
                    .zip(&bodies)
                    .map(|(p, data)| SubPayloadRef {
                        reliable: p.reliable,
                        sequential: p.sequential,
                        user_1: p.user_1,
                        user_2: p.user_2,
                        data,
                    })
                    .collect();
                emit_coalesced(&refs, buf)
            }
            Self::Data(b) => {
                let mut w = Writer::new(buf, b.len())?;
                w.bytes(b);
                w.finish()
            }
        }
    }
}

/// A DFRAME datagram: its header, parsed with the default [`DframeContext`], and its payload.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DframeDatagram {
    /// The header (MC-DPL8R 2.2.2).
    pub header: DframeHeader,
    /// The payload.
    pub payload: DframePayload,
}

impl DframeDatagram {
    /// Parses with the connection's `ctx`: a DFRAME of a signed connection carries
    /// `ullSignature` after its masks (MC-DPL8R 2.2.2), which only the connection tells.
    pub fn parse_in(bytes: &[u8], ctx: DframeContext) -> Result<Self, WireError> {
        let (header, rest) = DframeHeader::parse(bytes, ctx)?;
        let payload = DframePayload::parse(&header, rest)?;
        Ok(Self { header, payload })
    }

    /// The session message's name (`DN_SEND_CONNECT_INFO`, ...), the voice message's
    /// (`DVMSGID_SPEECH`, ...), `TRANS_USERDATA_SEND_MESSAGE`,
    /// `COALESCED` (MC-DPL8R 2.2.3), `KEEPALIVE`, `END_OF_STREAM` (MS-DPDX 2.2.22, 2.2.16), or
    /// `DFRAME`.
    pub fn message_name(&self) -> &'static str {
        match &self.payload {
            DframePayload::Session(m) => m.name(),
            DframePayload::Chat(_) => "TRANS_USERDATA_SEND_MESSAGE",
            DframePayload::Voice(m) => m.name(),
            DframePayload::Coalesced(_) => "COALESCED",
            _ if self.header.is_keepalive() => "KEEPALIVE",
            _ if self.header.control.contains(DframeControl::END_STREAM) => "END_OF_STREAM",
            _ => "DFRAME",
        }
    }

    /// The MS-DPDX name of the session message, where MS-DPDX gives one (decision F-1).
    pub fn session_alias(&self) -> Option<&'static str> {
        match &self.payload {
            DframePayload::Session(m) => m.dpdx_name(),
            _ => None,
        }
    }
}

impl Wire for DframeDatagram {
    /// Parses with the default [`DframeContext`] (unsigned, version 0x00010005 or later).
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        Self::parse_in(bytes, DframeContext::default())
    }

    fn encoded_len(&self) -> usize {
        self.header.len() + self.payload.encoded_len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.encoded_len();
        let got = buf.len();
        let out = buf.get_mut(..len).ok_or(WireError::BufferTooSmall { needed: len, got })?;
        let (head, body) = out.split_at_mut(self.header.len());
        self.header.emit(head)?;
        self.payload.emit(body)?;
        Ok(len)
    }
}
