//! One DirectPlay message as `dplay decode` shows it: a datagram `dplay-wire` classifies by
//! its own bytes, or a DirectPlay 4 player message or MC-DPL4R frame, which only their
//! transport and flow identify (MC-DPL4CS 2.2.45, 3.1.4.16: no 'play' signature).

use dplay_wire::datagram::{DframeDatagram, DframePayload, Kind, PartBody, classify};
use dplay_wire::dp4::header::{HEADER_LEN, MAX_MESSAGE_SIZE, SIGNATURE, SockAddrIn, Token};
use dplay_wire::dp4::message::ShortMessage;
use dplay_wire::dp4::player_message::{
    DatagramPlayerMessage, IDS_LEN, PlayerMessage, STREAM_PREFIX_LEN, has_signature,
};
use dplay_wire::dp4::reliable::{FrameBody, ReliableFlags, ReliableFrame};
use dplay_wire::dp8::cframe::Cframe;
use dplay_wire::dp8::dframe::{DframeCommand, DframeContext};
use dplay_wire::dp8::session::SessionMessage;
use dplay_wire::{Datagram, Family, Wire, WireError, parse_datagram};
use serde_json::{Value, json};

/// Where a message's bytes came from, which decides how they are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carrier {
    /// A UDP datagram of a flow not known to be DirectPlay 4: the lead bytes decide
    /// ([`dplay_wire::datagram::classify`]).
    Datagram,
    /// A UDP datagram of a DirectPlay 4 flow: without 'play' at offset 20 it is a player
    /// message in its datagram form.
    Dp4Datagram,
    /// A UDP datagram of a DirectPlay 4 session with DPSESSION_DIRECTPLAYPROTOCOL: without
    /// 'play' at offset 20 it is an MC-DPL4R frame (MC-DPL4CS 3.1.4.16; MC-DPL4R 2.2).
    Dp4Reliable,
    /// A UDP datagram of a DirectPlay 8 flow whose handshake was signed (CONNECTED_SIGNED,
    /// MC-DPL8R 2.2.1.3): its DFRAMEs carry `ullSignature` after the header (2.2.2).
    Dp8Signed,
    /// One message cut from a DirectPlay 4 TCP stream: a system message or a player message
    /// in its stream form; never DirectPlay 8, which has no TCP transport (MC-DPL8R 1).
    Dp4Stream,
}

/// A parsed message.
#[derive(Debug)]
pub(crate) enum Message {
    /// Anything [`parse_datagram`] recognises: DirectPlay 8, or a DirectPlay 4 system message.
    Wire(Box<Datagram>),
    /// DPSP_MSG_PLAYERMESSAGE in the stream form (MC-DPL4CS 2.2.45).
    Player(PlayerMessage),
    /// DPSP_MSG_PLAYERMESSAGE in the datagram form (MC-DPL4CS 2.2.45; decision F-23).
    PlayerDatagram(DatagramPlayerMessage),
    /// An MC-DPL4R frame (MC-DPL4R 2.2): its data frames carry a short-form system message or a
    /// player message in the datagram form, whole or in pieces.
    Reliable(ReliableFrame, bool),
    /// A DirectPlay 8 message put back together from several DFRAMEs (MC-DPL8R 3.1.4.4),
    /// read as the payload of one frame with the first frame's `bCommand` and NEW_MSG and
    /// END_MSG ([`crate::reassembly`]).
    Dp8Whole(DframeCommand, DframePayload),
    /// A short-form DirectPlay 4 system message put back together from MC-DPL4R data frames
    /// (MC-DPL4CS 3.1.4.16; [`crate::reassembly`]).
    Dp4Short(ShortMessage),
}

/// The spec's name of a player message, in both forms (MC-DPL4CS 2.2.45).
const PLAYER_MESSAGE: &str = "DPSP_MSG_PLAYERMESSAGE";

/// The application payload of a data frame that holds a whole player message (STA and EOM
/// set, no 'play' first: MC-DPL4R 2.2.2; MC-DPL4CS 3.1.4.16), after its IDs unless `ids` is
/// false.
fn reliable_payload(f: &ReliableFrame, ids: bool) -> Option<&[u8]> {
    let FrameBody::Data(d) = &f.body else { return None };
    let whole = d.flags.contains(ReliableFlags::STA | ReliableFlags::EOM);
    let payload = d.data.get(if ids { IDS_LEN } else { 0 }..)?;
    (whole && d.data.get(..4) != Some(&SIGNATURE[..])).then_some(payload)
}

/// The size field of the DirectPlay 4 stream message `bytes` start with, when they start one: a
/// size of at least 20 and a known token (MC-DPL4CS 2.2.6), then either 'play' at offset 20 (a
/// system message) or, for the stream form of a player message (2.2.45), an AF_INET
/// SOCKADDR_IN whose 8 padding bytes are zero: 12 checked bytes, which other protocols do not
/// produce by chance.
pub(crate) fn dp4_stream_message_size(bytes: &[u8]) -> Option<usize> {
    let dword = bytes.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()).map(u32::from_le_bytes)?;
    let size = (dword & 0xF_FFFF) as usize;
    let token = Token(u16::try_from(dword >> 20).unwrap_or(0));
    let head_ok = token.name().is_some() && (STREAM_PREFIX_LEN..=MAX_MESSAGE_SIZE).contains(&size);
    let signed = bytes.len() >= HEADER_LEN && has_signature(bytes);
    let player = bytes.get(..STREAM_PREFIX_LEN).is_some_and(|head| {
        head.get(4..6) == Some(&SockAddrIn::AF_INET.to_le_bytes()[..])
            && head.get(12..20).is_some_and(|pad| pad.iter().all(|&b| b == 0))
    });
    (head_ok && (signed || player)).then_some(size)
}

/// True when `bytes` are exactly one stream-form player message ([`dp4_stream_message_size`]):
/// what lets a lone one be told from DirectPlay 8 without knowing its flow.
pub(crate) fn looks_like_stream_player_message(bytes: &[u8]) -> bool {
    !has_signature(bytes) && dp4_stream_message_size(bytes) == Some(bytes.len())
}

impl Message {
    /// Parses `bytes` as `carrier` says they came. Player messages carry `idFrom` and `idTo`
    /// when `ids` is true: a session without DPSESSION_NOMESSAGEID (MC-DPL4CS 2.2.45).
    pub(crate) fn parse(bytes: &[u8], carrier: Carrier, ids: bool) -> Result<Self, WireError> {
        match carrier {
            _ if has_signature(bytes) => parse_datagram(bytes).map(|d| Self::Wire(Box::new(d))),
            Carrier::Dp4Stream => PlayerMessage::parse(bytes, ids).map(Self::Player),
            Carrier::Datagram | Carrier::Dp4Datagram if looks_like_stream_player_message(bytes) => {
                PlayerMessage::parse(bytes, ids).map(Self::Player)
            }
            Carrier::Datagram => parse_datagram(bytes).map(|d| Self::Wire(Box::new(d))),
            Carrier::Dp8Signed if classify(bytes) == Kind::Dp8Dframe => {
                let signed = DframeContext { signed: true, ..DframeContext::default() };
                DframeDatagram::parse_in(bytes, signed).map(|d| Self::Wire(Box::new(Datagram::Dframe(d))))
            }
            Carrier::Dp8Signed => parse_datagram(bytes).map(|d| Self::Wire(Box::new(d))),
            Carrier::Dp4Datagram => DatagramPlayerMessage::parse(bytes, ids).map(Self::PlayerDatagram),
            Carrier::Dp4Reliable => ReliableFrame::parse(bytes).map(|f| Self::Reliable(f, ids)),
        }
    }

    /// The `ullSignature` of a signed connection's DFRAME, SACK or HARD_DISCONNECT (MC-DPL8R
    /// 2.2.2, 2.2.1.5, 2.2.1.4).
    pub(crate) fn signature(&self) -> Option<u64> {
        let Self::Wire(w) = self else { return None };
        match &**w {
            Datagram::Dframe(d) => d.header.signature,
            Datagram::Cframe(Cframe::Sack(s)) => s.signature,
            Datagram::Cframe(Cframe::HardDisconnect(h)) => h.signature,
            _ => None,
        }
    }

    /// The protocol family.
    pub(crate) fn family(&self) -> Family {
        match self {
            Self::Wire(d) => d.family(),
            Self::Dp8Whole(..) => Family::Dp8,
            Self::Player(_) | Self::PlayerDatagram(_) | Self::Reliable(..) | Self::Dp4Short(_) => Family::Dp4,
        }
    }

    /// The message name as its spec spells it.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Self::Wire(d) => d.message_name(),
            Self::Player(_) | Self::PlayerDatagram(_) => PLAYER_MESSAGE,
            Self::Reliable(f, _) => match f.body {
                FrameBody::Data(_) => "Data Frame",
                FrameBody::Ack(_) => "ACK Frame",
                FrameBody::Nack(_) => "NACK Frame",
            },
            Self::Dp8Whole(_, DframePayload::Session(m)) => m.name(),
            Self::Dp8Whole(_, DframePayload::Chat(_)) => "TRANS_USERDATA_SEND_MESSAGE",
            Self::Dp8Whole(_, DframePayload::Voice(m)) => m.name(),
            Self::Dp8Whole(..) => "DFRAME",
            Self::Dp4Short(m) => m.name(),
        }
    }

    /// The MS-DPDX name, where it differs (decision F-1).
    pub(crate) fn alias(&self) -> Option<&'static str> {
        match self {
            Self::Wire(d) => d.alias(),
            Self::Dp8Whole(_, DframePayload::Session(m)) => m.dpdx_name(),
            Self::Player(_)
            | Self::PlayerDatagram(_)
            | Self::Reliable(..)
            | Self::Dp8Whole(..)
            | Self::Dp4Short(_) => None,
        }
    }

    /// Every field, as the wire types serialize them; player messages also name their form.
    pub(crate) fn fields(&self) -> Result<Value, serde_json::Error> {
        let (form, value) = match self {
            Self::Wire(d) => return serde_json::to_value(d),
            Self::Reliable(f, _) => ("MC-DPL4R", serde_json::to_value(f)?),
            Self::Player(m) => ("stream", serde_json::to_value(m)?),
            Self::PlayerDatagram(m) => ("datagram", serde_json::to_value(m)?),
            Self::Dp8Whole(command, payload) => {
                let value = json!({ "command": command, "payload": payload });
                ("reassembled", value)
            }
            Self::Dp4Short(m) => ("short", serde_json::to_value(m)?),
        };
        let mut obj = json!({ "form": form });
        if let (Some(obj), Value::Object(fields)) = (obj.as_object_mut(), value) {
            obj.extend(fields);
        }
        Ok(obj)
    }

    /// The bytes our encoder writes for the parsed value: the input again, for every message
    /// decoded faithfully.
    pub(crate) fn reemit(&self) -> Result<Vec<u8>, WireError> {
        match self {
            Self::Wire(d) => d.to_vec(),
            Self::Player(m) => m.to_vec(),
            Self::PlayerDatagram(m) => m.to_vec(),
            Self::Reliable(f, _) => f.to_vec(),
            Self::Dp8Whole(_, payload) => {
                let mut buf = vec![0; payload.encoded_len()];
                let len = payload.emit(&mut buf)?;
                buf.truncate(len);
                Ok(buf)
            }
            Self::Dp4Short(m) => m.to_vec(),
        }
    }

    /// The joiner's player data of a DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO(_EX) (MC-DPL8CS
    /// 2.2.1.1), where an FS2004 joiner puts its PLAYER_INFO_STRUCT (FS-MULTIPLAYER.md 3.1).
    pub(crate) fn player_data(&self) -> Option<&[u8]> {
        let payload = match self {
            Self::Dp8Whole(_, payload) => payload,
            Self::Wire(w) => match &**w {
                Datagram::Dframe(d) => &d.payload,
                _ => return None,
            },
            _ => return None,
        };
        match payload {
            DframePayload::Session(SessionMessage::PlayerConnectInfo(p)) => Some(&p.data[..]),
            _ => None,
        }
    }

    /// Application payloads: a player message's data, or a DirectPlay 8 DFRAME's whole
    /// non-session messages (NEW_MSG and END_MSG, neither USER_1 nor USER_2; coalesced parts
    /// with neither; or one put back together from several frames), where the add-on's packets
    /// travel (FS-MULTIPLAYER.md 1.1).
    pub(crate) fn app_payloads(&self) -> Vec<&[u8]> {
        let (command, payload) = match self {
            Self::Player(m) => return vec![&m.payload[..]],
            Self::PlayerDatagram(m) => return vec![&m.payload[..]],
            Self::Reliable(f, ids) => return reliable_payload(f, *ids).into_iter().collect(),
            Self::Dp4Short(_) => return Vec::new(),
            Self::Dp8Whole(command, payload) => {
                (*command | DframeCommand::NEW_MSG | DframeCommand::END_MSG, payload)
            }
            Self::Wire(w) => match &**w {
                Datagram::Dframe(d) => (d.header.command, &d.payload),
                _ => return Vec::new(),
            },
        };
        let whole = DframeCommand::NEW_MSG | DframeCommand::END_MSG;
        let user = DframeCommand::USER_1 | DframeCommand::USER_2;
        match payload {
            DframePayload::Data(b) if command.contains(whole) && !command.intersects(user) => {
                vec![&b[..]]
            }
            DframePayload::Coalesced(parts) => parts
                .iter()
                .filter(|p| !p.user_1 && !p.user_2)
                .filter_map(|p| match &p.body {
                    PartBody::Data(b) => Some(&b[..]),
                    PartBody::Session(_) | PartBody::Voice(_) => None,
                })
                .collect(),
            _ => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests;
