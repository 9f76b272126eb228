//! Every DirectPlay 4 system message: [`Dp4Message`] (full 28-byte header) and
//! [`ShortMessage`] (8-byte header: CHAT, and messages nested in SIGNED, ASK4MULTICAST and
//! MULTICASTDELIVERY), both carrying a [`Dp4Body`] (MC-DPL4CS 2.2; INDEX A.4, D.15).
//!
//! A body is parsed from the bytes that start at the 'play' signature, so every offset field
//! indexes that slice (INDEX §0, F-26). Offset fields are followed wherever they point;
//! emitting writes the canonical layout (variable fields in the spec's diagram order, right
//! after the fixed ones), which is what the spec's examples show. Player messages, which carry
//! no signature, are [`crate::dp4::player_message::PlayerMessage`].

use crate::codec::{Reader, Wire, Writer, len_u32};
use crate::dp4::enumeration::{EnumPlayersReply, EnumSessions, EnumSessionsReply, SuperEnumPlayersReply};
use crate::dp4::fields::{BODY_START, Body};
use crate::dp4::fragment::{Fragment, PacketAck};
use crate::dp4::header::{
    Command, HEADER_LEN, Header, SHORT_HEADER_LEN, SIGNATURE_OFFSET, ShortHeader, SockAddrIn, Token,
};
use crate::dp4::join::{
    AddForwardRequest, Dword, IAmNameServer, PlayerInfoMessage, RequestGroupId, RequestPlayerId,
    RequestPlayerReply,
};
use crate::dp4::nametable::{DataChanged, GroupGroupIds, NameChanged, PlayerGroupIds, SessionDescChanged};
use crate::dp4::player_message::{DatagramPlayerMessage, PlayerMessage, has_signature};
use crate::dp4::routing::{Chat, Multicast, Ping, PlayerWrapper, Voice};
use crate::dp4::security::{AccessGranted, KeyExchange, KeyExchangeReply, SecurityToken, Signed};
use crate::{Blob, WireError};

/// The body of ENUMPLAYER, YOUAREDEAD and LOGONDENIED: nothing (MC-DPL4CS 2.2.27, 2.2.55,
/// 2.2.36).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Empty;

impl Body for Empty {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        r.finish("DPSP_MSG_HEADER")?;
        Ok(Self)
    }
    fn len(&self) -> usize {
        0
    }
    fn write(&self, _: &mut Writer<'_>) -> Result<(), WireError> {
        Ok(())
    }
}

impl Body for Fragment {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        Fragment::read(r)
    }
    fn len(&self) -> usize {
        self.encoded_len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        Fragment::write(self, w)
    }
}

impl Body for PacketAck {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let ack = PacketAck::read(r)?;
        r.finish("PacketID")?;
        Ok(ack)
    }
    fn len(&self) -> usize {
        self.encoded_len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        PacketAck::write(self, w);
        Ok(())
    }
}

/// Declares [`Dp4Body`] from one table: variant, body type, command.
macro_rules! dp4_bodies {
    ($( $(#[$doc:meta])* $variant:ident($ty:ty) = $cmd:ident, )*) => {
        /// The body of a DP4 system message, one variant per DPSP_MSG_* (MC-DPL4CS 2.2;
        /// INDEX A.4).
        #[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
        #[non_exhaustive]
        pub enum Dp4Body {
            $( $(#[$doc])* $variant($ty), )*
            /// A command with no body type here: the unassigned values (INDEX A.4) and
            /// PLAYERMESSAGE, which has no signature form (F-23). Never holds a command that
            /// has a variant above.
            Other {
                /// The Command field.
                command: Command,
                /// Everything after the header.
                data: Blob,
            },
        }

        impl Dp4Body {
            /// The Command this body goes with.
            pub fn command(&self) -> Command {
                match self {
                    $( Self::$variant(_) => Command::$cmd, )*
                    Self::Other { command, .. } => *command,
                }
            }

            /// Parses the body of a `command` message; `msg` starts at the 'play' signature.
            pub fn read(command: Command, msg: &[u8]) -> Result<Self, WireError> {
                let mut r = Reader::new(msg);
                r.bytes("DPSP_MSG_HEADER", BODY_START)?;
                Ok(match command {
                    $( Command::$cmd => Self::$variant(<$ty as Body>::read(msg, &mut r)?), )*
                    command => Self::Other { command, data: Blob::new(r.rest()) },
                })
            }

            /// Bytes after the header.
            pub fn encoded_len(&self) -> usize {
                match self {
                    $( Self::$variant(b) => Body::len(b), )*
                    Self::Other { data, .. } => data.len(),
                }
            }

            /// Writes the bytes after the header.
            pub fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
                match self {
                    $( Self::$variant(b) => Body::write(b, w), )*
                    Self::Other { command, data } => {
                        if Self::KNOWN.contains(command) {
                            return Err(WireError::Unencodable {
                                field: "wCommand",
                                reason: "Other holds a command that has its own variant",
                            });
                        }
                        w.bytes(data);
                        Ok(())
                    }
                }
            }

            /// The commands that have a variant.
            pub const KNOWN: &'static [Command] = &[$( Command::$cmd, )*];
        }
    };
}

dp4_bodies! {
    /// DPSP_MSG_ENUMSESSIONSREPLY (0x01, 2.2.30).
    EnumSessionsReply(EnumSessionsReply) = DPSP_MSG_ENUMSESSIONSREPLY,
    /// DPSP_MSG_ENUMSESSIONS (0x02, 2.2.29).
    EnumSessions(EnumSessions) = DPSP_MSG_ENUMSESSIONS,
    /// DPSP_MSG_ENUMPLAYERSREPLY (0x03, 2.2.28).
    EnumPlayersReply(EnumPlayersReply) = DPSP_MSG_ENUMPLAYERSREPLY,
    /// DPSP_MSG_ENUMPLAYER (0x04, 2.2.27).
    EnumPlayer(Empty) = DPSP_MSG_ENUMPLAYER,
    /// DPSP_MSG_REQUESTPLAYERID (0x05, 2.2.49).
    RequestPlayerId(RequestPlayerId) = DPSP_MSG_REQUESTPLAYERID,
    /// DPSP_MSG_REQUESTGROUPID (0x06, 2.2.48).
    RequestGroupId(RequestGroupId) = DPSP_MSG_REQUESTGROUPID,
    /// DPSP_MSG_REQUESTPLAYERREPLY (0x07, 2.2.50).
    RequestPlayerReply(RequestPlayerReply) = DPSP_MSG_REQUESTPLAYERREPLY,
    /// DPSP_MSG_CREATEPLAYER (0x08, 2.2.21).
    CreatePlayer(PlayerInfoMessage) = DPSP_MSG_CREATEPLAYER,
    /// DPSP_MSG_CREATEGROUP (0x09, 2.2.20).
    CreateGroup(PlayerInfoMessage) = DPSP_MSG_CREATEGROUP,
    /// DPSP_MSG_DELETEPLAYER (0x0B, 2.2.25).
    DeletePlayer(PlayerGroupIds) = DPSP_MSG_DELETEPLAYER,
    /// DPSP_MSG_DELETEGROUP (0x0C, 2.2.23).
    DeleteGroup(PlayerGroupIds) = DPSP_MSG_DELETEGROUP,
    /// DPSP_MSG_ADDPLAYERTOGROUP (0x0D, 2.2.12).
    AddPlayerToGroup(PlayerGroupIds) = DPSP_MSG_ADDPLAYERTOGROUP,
    /// DPSP_MSG_DELETEPLAYERFROMGROUP (0x0E, 2.2.26).
    DeletePlayerFromGroup(PlayerGroupIds) = DPSP_MSG_DELETEPLAYERFROMGROUP,
    /// DPSP_MSG_PLAYERDATACHANGED (0x0F, 2.2.44).
    PlayerDataChanged(DataChanged) = DPSP_MSG_PLAYERDATACHANGED,
    /// DPSP_MSG_PLAYERNAMECHANGED (0x10, 2.2.46).
    PlayerNameChanged(NameChanged) = DPSP_MSG_PLAYERNAMECHANGED,
    /// DPSP_MSG_GROUPDATACHANGED (0x11, 2.2.31).
    GroupDataChanged(DataChanged) = DPSP_MSG_GROUPDATACHANGED,
    /// DPSP_MSG_GROUPNAMECHANGED (0x12, 2.2.32).
    GroupNameChanged(NameChanged) = DPSP_MSG_GROUPNAMECHANGED,
    /// DPSP_MSG_ADDFORWARDREQUEST (0x13, 2.2.11).
    AddForwardRequest(AddForwardRequest) = DPSP_MSG_ADDFORWARDREQUEST,
    /// DPSP_MSG_PACKET (0x15, 2.2.39): an unreliable fragment.
    Packet(Fragment) = DPSP_MSG_PACKET,
    /// DPSP_MSG_PING (0x16, 2.2.42).
    Ping(Ping) = DPSP_MSG_PING,
    /// DPSP_MSG_PINGREPLY (0x17, 2.2.43).
    PingReply(Ping) = DPSP_MSG_PINGREPLY,
    /// DPSP_MSG_YOUAREDEAD (0x18, 2.2.55).
    YouAreDead(Empty) = DPSP_MSG_YOUAREDEAD,
    /// DPSP_MSG_PLAYERWRAPPER (0x19, 2.2.47).
    PlayerWrapper(PlayerWrapper) = DPSP_MSG_PLAYERWRAPPER,
    /// DPSP_MSG_SESSIONDESCCHANGED (0x1A, 2.2.51).
    SessionDescChanged(SessionDescChanged) = DPSP_MSG_SESSIONDESCCHANGED,
    /// DPSP_MSG_CHALLENGE (0x1C, 2.2.17).
    Challenge(SecurityToken) = DPSP_MSG_CHALLENGE,
    /// DPSP_MSG_ACCESSGRANTED (0x1D, 2.2.7).
    AccessGranted(AccessGranted) = DPSP_MSG_ACCESSGRANTED,
    /// DPSP_MSG_LOGONDENIED (0x1E, 2.2.36).
    LogonDenied(Empty) = DPSP_MSG_LOGONDENIED,
    /// DPSP_MSG_AUTHERROR (0x1F, 2.2.16): `Error`, an SEC_E_* code.
    AuthError(Dword) = DPSP_MSG_AUTHERROR,
    /// DPSP_MSG_NEGOTIATE (0x20, 2.2.38).
    Negotiate(SecurityToken) = DPSP_MSG_NEGOTIATE,
    /// DPSP_MSG_CHALLENGERESPONSE (0x21, 2.2.18).
    ChallengeResponse(SecurityToken) = DPSP_MSG_CHALLENGERESPONSE,
    /// DPSP_MSG_SIGNED (0x22, 2.2.52).
    Signed(Signed) = DPSP_MSG_SIGNED,
    /// DPSP_MSG_ADDFORWARDREPLY (0x24, 2.2.10): `Error`, an HRESULT.
    AddForwardReply(Dword) = DPSP_MSG_ADDFORWARDREPLY,
    /// DPSP_MSG_ASK4MULTICAST (0x25, 2.2.14).
    Ask4Multicast(Multicast) = DPSP_MSG_ASK4MULTICAST,
    /// DPSP_MSG_ASK4MULTICASTGUARANTEED (0x26, 2.2.15).
    Ask4MulticastGuaranteed(Multicast) = DPSP_MSG_ASK4MULTICASTGUARANTEED,
    /// DPSP_MSG_ADDSHORTCUTTOGROUP (0x27, 2.2.13).
    AddShortcutToGroup(GroupGroupIds) = DPSP_MSG_ADDSHORTCUTTOGROUP,
    /// DPSP_MSG_DELETEGROUPFROMGROUP (0x28, 2.2.24).
    DeleteGroupFromGroup(GroupGroupIds) = DPSP_MSG_DELETEGROUPFROMGROUP,
    /// DPSP_MSG_SUPERENUMPLAYERSREPLY (0x29, 2.2.53).
    SuperEnumPlayersReply(SuperEnumPlayersReply) = DPSP_MSG_SUPERENUMPLAYERSREPLY,
    /// DPSP_MSG_KEYEXCHANGE (0x2B, 2.2.34).
    KeyExchange(KeyExchange) = DPSP_MSG_KEYEXCHANGE,
    /// DPSP_MSG_KEYEXCHANGEREPLY (0x2C, 2.2.35).
    KeyExchangeReply(KeyExchangeReply) = DPSP_MSG_KEYEXCHANGEREPLY,
    /// DPSP_MSG_CHAT (0x2D, 2.2.19).
    Chat(Chat) = DPSP_MSG_CHAT,
    /// DPSP_MSG_ADDFORWARD (0x2E, 2.2.8).
    AddForward(PlayerInfoMessage) = DPSP_MSG_ADDFORWARD,
    /// DPSP_MSG_ADDFORWARDACK (0x2F, 2.2.9): `ID`.
    AddForwardAck(Dword) = DPSP_MSG_ADDFORWARDACK,
    /// DPSP_MSG_PACKET2_DATA (0x30, 2.2.41): a reliable fragment.
    Packet2Data(Fragment) = DPSP_MSG_PACKET2_DATA,
    /// DPSP_MSG_PACKET2_ACK (0x31, 2.2.40).
    Packet2Ack(PacketAck) = DPSP_MSG_PACKET2_ACK,
    /// DPSP_MSG_IAMNAMESERVER (0x35, 2.2.33).
    IAmNameServer(IAmNameServer) = DPSP_MSG_IAMNAMESERVER,
    /// DPSP_MSG_VOICE (0x36, 2.2.54).
    Voice(Voice) = DPSP_MSG_VOICE,
    /// DPSP_MSG_MULTICASTDELIVERY (0x37, 2.2.37).
    MulticastDelivery(Multicast) = DPSP_MSG_MULTICASTDELIVERY,
    /// DPSP_MSG_CREATEPLAYERVERIFY (0x38, 2.2.22).
    CreatePlayerVerify(PlayerInfoMessage) = DPSP_MSG_CREATEPLAYERVERIFY,
}

impl Dp4Body {
    /// The spec's name of the message, e.g. "DPSP_MSG_ENUMSESSIONS"; "DPSP_MSG_UNKNOWN" for
    /// an unassigned command.
    pub fn name(&self) -> &'static str {
        self.command().name().unwrap_or("DPSP_MSG_UNKNOWN")
    }
}

/// A DP4 system message with the full 28-byte DPSP_MSG_HEADER (MC-DPL4CS 2.2.6).
///
/// Parsing requires the header's size field to equal the datagram's length (split TCP
/// streams with [`Header::parse`] first) and the header's Command to select the body.
/// Emitting fails if `header.command` is not `body.command()`; [`Dp4Message::new`] sets it.
/// Offsets in body errors count from the signature, like the offset fields themselves.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dp4Message {
    /// The header; its size field is computed when emitting.
    pub header: Header,
    /// The body.
    pub body: Dp4Body,
}

impl Dp4Message {
    /// A message whose header carries `body`'s command.
    pub fn new(token: Token, sock_addr: SockAddrIn, version: u16, body: Dp4Body) -> Self {
        Self { header: Header { token, sock_addr, command: body.command(), version }, body }
    }

    /// The spec's name of the message (see [`Dp4Body::name`]).
    pub fn name(&self) -> &'static str {
        self.body.name()
    }
}

fn check_command(header: Command, body: &Dp4Body) -> Result<(), WireError> {
    if header == body.command() {
        Ok(())
    } else {
        Err(WireError::Unencodable { field: "wCommand", reason: "the header's Command is not the body's" })
    }
}

impl Wire for Dp4Message {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let (header, size) = Header::parse(bytes)?;
        if size != bytes.len() {
            return Err(WireError::InvalidValue {
                field: "dwSize",
                offset: 0,
                value: size as u64,
                reason: "the size must equal the message length",
            });
        }
        let from_signature = bytes.get(SIGNATURE_OFFSET..).unwrap_or_default();
        Ok(Self { body: Dp4Body::read(header.command, from_signature)?, header })
    }

    fn encoded_len(&self) -> usize {
        HEADER_LEN + self.body.encoded_len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        check_command(self.header.command, &self.body)?;
        let len = self.encoded_len();
        let mut w = Writer::new(buf, len)?;
        self.header.write(&mut w, len)?;
        self.body.write(&mut w)?;
        w.finish()
    }
}

/// A DP4 message with the 8-byte short header: DPSP_MSG_CHAT, messages sent over MC-DPL4R,
/// and messages nested in SIGNED, ASK4MULTICAST(GUARANTEED) and MULTICASTDELIVERY
/// (MC-DPL4CS 2.2.6, 2.2.14, 2.2.19, 2.2.37, 2.2.52; INDEX D.15).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ShortMessage {
    /// Signature, Command, Version.
    pub header: ShortHeader,
    /// The body.
    pub body: Dp4Body,
}

impl ShortMessage {
    /// A short message whose header carries `body`'s command.
    pub fn new(version: u16, body: Dp4Body) -> Self {
        Self { header: ShortHeader { command: body.command(), version }, body }
    }

    /// The spec's name of the message (see [`Dp4Body::name`]).
    pub fn name(&self) -> &'static str {
        self.body.name()
    }
}

impl Wire for ShortMessage {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let header = ShortHeader::read(&mut Reader::new(bytes))?;
        Ok(Self { body: Dp4Body::read(header.command, bytes)?, header })
    }

    fn encoded_len(&self) -> usize {
        SHORT_HEADER_LEN + self.body.encoded_len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        check_command(self.header.command, &self.body)?;
        let len = self.encoded_len();
        len_u32("ShortMessage", len)?;
        let mut w = Writer::new(buf, len)?;
        self.header.write(&mut w);
        self.body.write(&mut w)?;
        w.finish()
    }
}

impl Signed {
    /// Decodes `Message` as a short-form message (not when it is encrypted, EC).
    pub fn inner(&self) -> Result<ShortMessage, WireError> {
        ShortMessage::parse(&self.message)
    }
}

impl Multicast {
    /// Decodes the carried short-form message.
    pub fn inner(&self) -> Result<ShortMessage, WireError> {
        ShortMessage::parse(&self.message)
    }
}

impl PlayerWrapper {
    /// Decodes the wrapped player message in the stream form (it came on a TCP connection);
    /// `ids_present` is false in NM sessions. The content carries 'play' at its offset 20:
    /// that is why it was wrapped (MC-DPL4CS 2.2.47, 3.1.4.16.2).
    pub fn inner(&self, ids_present: bool) -> Result<PlayerMessage, WireError> {
        PlayerMessage::parse_wrapped(&self.player_message, ids_present)
    }

    /// Decodes the wrapped player message in the datagram form (it came in a UDP datagram
    /// or an MC-DPL4R data frame; docs/decisions.md).
    pub fn inner_datagram(&self, ids_present: bool) -> Result<DatagramPlayerMessage, WireError> {
        DatagramPlayerMessage::parse_wrapped(&self.player_message, ids_present)
    }

    /// Wraps a stream-form player message (MC-DPL4CS 2.2.47).
    pub fn wrap(message: &PlayerMessage) -> Result<Self, WireError> {
        Ok(Self { player_message: Blob(message.to_wrapped_vec()?) })
    }

    /// Wraps a datagram-form player message (MC-DPL4CS 2.2.47).
    pub fn wrap_datagram(message: &DatagramPlayerMessage) -> Result<Self, WireError> {
        Ok(Self { player_message: Blob(message.to_wrapped_vec()?) })
    }
}

/// One whole DP4 message as a TCP stream carries it: a system message ('play' at offset 20)
/// or a stream-form player message (without; MC-DPL4CS 3.1.4.16.2; decisions F-21, F-23).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Dp4Datagram {
    /// A system message.
    System(Dp4Message),
    /// Application data.
    Player(PlayerMessage),
}

impl Dp4Datagram {
    /// Tells the two apart by the signature at offset 20 and parses; `ids_present` is false
    /// in NM sessions.
    pub fn parse(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
        if has_signature(bytes) {
            Dp4Message::parse(bytes).map(Self::System)
        } else {
            PlayerMessage::parse(bytes, ids_present).map(Self::Player)
        }
    }
}

/// One DP4 UDP datagram: a system message ('play' at offset 20) or a datagram-form player
/// message (MC-DPL4CS 3.1.4.16.2, 2.2.45; docs/decisions.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Dp4UdpDatagram {
    /// A system message.
    System(Dp4Message),
    /// Application data.
    Player(DatagramPlayerMessage),
}

impl Dp4UdpDatagram {
    /// Tells the two apart by the signature at offset 20 and parses; `ids_present` is false
    /// in NM sessions.
    pub fn parse(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
        if has_signature(bytes) {
            Dp4Message::parse(bytes).map(Self::System)
        } else {
            DatagramPlayerMessage::parse(bytes, ids_present).map(Self::Player)
        }
    }
}

#[cfg(test)]
mod strategy;
#[cfg(test)]
mod tests;
