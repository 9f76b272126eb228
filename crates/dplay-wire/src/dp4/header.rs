//! DPSP_MSG_HEADER and SOCKADDR_IN (MC-DPL4CS 2.2.6, 2.2.1).
//!
//! The full header is 28 bytes: a size/token DWORD, the sender's SOCKADDR_IN, the `play`
//! signature, then Command and Version. The short form (signature, Command, Version; 8 bytes)
//! is used by DPSP_MSG_CHAT and by messages nested in others (INDEX D.15). Offsets inside DP4
//! messages count from the signature (INDEX §0, F-26).

use std::net::{Ipv4Addr, SocketAddrV4};

use crate::codec::{Reader, Writer};
use crate::{WireError, open_enum};

/// The `play` signature, `70 6C 61 79` (MC-DPL4CS 2.2.6).
pub const SIGNATURE: [u8; 4] = *b"play";
/// Length of the full header.
pub const HEADER_LEN: usize = 28;
/// Length of the short header (signature, Command, Version).
pub const SHORT_HEADER_LEN: usize = 8;
/// Offset of the signature in a full header; DP4 body offsets count from here.
pub const SIGNATURE_OFFSET: usize = 20;
/// Largest message the 20-bit size field can describe.
pub const MAX_MESSAGE_SIZE: usize = 0xF_FFFF;

open_enum! {
    /// The token in the top 12 bits of the first DWORD (MC-DPL4CS 2.2.6).
    pub struct Token(u16) {
        /// 0xFAB: from a remote DirectPlay machine.
        FROM_REMOTE = 0xFAB,
        /// 0xCAB: forward to all registered servers.
        FORWARD = 0xCAB,
        /// 0xBAB: from a DirectPlay server.
        FROM_SERVER = 0xBAB,
    }
}

open_enum! {
    /// The Command field: which DPSP_MSG_* this is (MC-DPL4CS 2.2; INDEX A.4).
    pub struct Command(u16) {
        /// DPSP_MSG_ENUMSESSIONSREPLY (2.2.30).
        DPSP_MSG_ENUMSESSIONSREPLY = 0x01,
        /// DPSP_MSG_ENUMSESSIONS (2.2.29).
        DPSP_MSG_ENUMSESSIONS = 0x02,
        /// DPSP_MSG_ENUMPLAYERSREPLY (2.2.28).
        DPSP_MSG_ENUMPLAYERSREPLY = 0x03,
        /// DPSP_MSG_ENUMPLAYER (2.2.27).
        DPSP_MSG_ENUMPLAYER = 0x04,
        /// DPSP_MSG_REQUESTPLAYERID (2.2.49).
        DPSP_MSG_REQUESTPLAYERID = 0x05,
        /// DPSP_MSG_REQUESTGROUPID (2.2.48).
        DPSP_MSG_REQUESTGROUPID = 0x06,
        /// DPSP_MSG_REQUESTPLAYERREPLY (2.2.50).
        DPSP_MSG_REQUESTPLAYERREPLY = 0x07,
        /// DPSP_MSG_CREATEPLAYER (2.2.21).
        DPSP_MSG_CREATEPLAYER = 0x08,
        /// DPSP_MSG_CREATEGROUP (2.2.20).
        DPSP_MSG_CREATEGROUP = 0x09,
        /// DPSP_MSG_PLAYERMESSAGE (2.2.45).
        DPSP_MSG_PLAYERMESSAGE = 0x0A,
        /// DPSP_MSG_DELETEPLAYER (2.2.25).
        DPSP_MSG_DELETEPLAYER = 0x0B,
        /// DPSP_MSG_DELETEGROUP (2.2.23).
        DPSP_MSG_DELETEGROUP = 0x0C,
        /// DPSP_MSG_ADDPLAYERTOGROUP (2.2.12).
        DPSP_MSG_ADDPLAYERTOGROUP = 0x0D,
        /// DPSP_MSG_DELETEPLAYERFROMGROUP (2.2.26).
        DPSP_MSG_DELETEPLAYERFROMGROUP = 0x0E,
        /// DPSP_MSG_PLAYERDATACHANGED (2.2.44).
        DPSP_MSG_PLAYERDATACHANGED = 0x0F,
        /// DPSP_MSG_PLAYERNAMECHANGED (2.2.46).
        DPSP_MSG_PLAYERNAMECHANGED = 0x10,
        /// DPSP_MSG_GROUPDATACHANGED (2.2.31).
        DPSP_MSG_GROUPDATACHANGED = 0x11,
        /// DPSP_MSG_GROUPNAMECHANGED (2.2.32).
        DPSP_MSG_GROUPNAMECHANGED = 0x12,
        /// DPSP_MSG_ADDFORWARDREQUEST (2.2.11).
        DPSP_MSG_ADDFORWARDREQUEST = 0x13,
        /// DPSP_MSG_PACKET (2.2.39): an unreliable fragment.
        DPSP_MSG_PACKET = 0x15,
        /// DPSP_MSG_PING (2.2.42).
        DPSP_MSG_PING = 0x16,
        /// DPSP_MSG_PINGREPLY (2.2.43).
        DPSP_MSG_PINGREPLY = 0x17,
        /// DPSP_MSG_YOUAREDEAD (2.2.55).
        DPSP_MSG_YOUAREDEAD = 0x18,
        /// DPSP_MSG_PLAYERWRAPPER (2.2.47).
        DPSP_MSG_PLAYERWRAPPER = 0x19,
        /// DPSP_MSG_SESSIONDESCCHANGED (2.2.51).
        DPSP_MSG_SESSIONDESCCHANGED = 0x1A,
        /// DPSP_MSG_CHALLENGE (2.2.17).
        DPSP_MSG_CHALLENGE = 0x1C,
        /// DPSP_MSG_ACCESSGRANTED (2.2.7).
        DPSP_MSG_ACCESSGRANTED = 0x1D,
        /// DPSP_MSG_LOGONDENIED (2.2.36).
        DPSP_MSG_LOGONDENIED = 0x1E,
        /// DPSP_MSG_AUTHERROR (2.2.16).
        DPSP_MSG_AUTHERROR = 0x1F,
        /// DPSP_MSG_NEGOTIATE (2.2.38).
        DPSP_MSG_NEGOTIATE = 0x20,
        /// DPSP_MSG_CHALLENGERESPONSE (2.2.18).
        DPSP_MSG_CHALLENGERESPONSE = 0x21,
        /// DPSP_MSG_SIGNED (2.2.52).
        DPSP_MSG_SIGNED = 0x22,
        /// DPSP_MSG_ADDFORWARDREPLY (2.2.10).
        DPSP_MSG_ADDFORWARDREPLY = 0x24,
        /// DPSP_MSG_ASK4MULTICAST (2.2.14).
        DPSP_MSG_ASK4MULTICAST = 0x25,
        /// DPSP_MSG_ASK4MULTICASTGUARANTEED (2.2.15).
        DPSP_MSG_ASK4MULTICASTGUARANTEED = 0x26,
        /// DPSP_MSG_ADDSHORTCUTTOGROUP (2.2.13).
        DPSP_MSG_ADDSHORTCUTTOGROUP = 0x27,
        /// DPSP_MSG_DELETEGROUPFROMGROUP (2.2.24).
        DPSP_MSG_DELETEGROUPFROMGROUP = 0x28,
        /// DPSP_MSG_SUPERENUMPLAYERSREPLY (2.2.53).
        DPSP_MSG_SUPERENUMPLAYERSREPLY = 0x29,
        /// DPSP_MSG_KEYEXCHANGE (2.2.34).
        DPSP_MSG_KEYEXCHANGE = 0x2B,
        /// DPSP_MSG_KEYEXCHANGEREPLY (2.2.35).
        DPSP_MSG_KEYEXCHANGEREPLY = 0x2C,
        /// DPSP_MSG_CHAT (2.2.19).
        DPSP_MSG_CHAT = 0x2D,
        /// DPSP_MSG_ADDFORWARD (2.2.8).
        DPSP_MSG_ADDFORWARD = 0x2E,
        /// DPSP_MSG_ADDFORWARDACK (2.2.9).
        DPSP_MSG_ADDFORWARDACK = 0x2F,
        /// DPSP_MSG_PACKET2_DATA (2.2.41): a reliable fragment.
        DPSP_MSG_PACKET2_DATA = 0x30,
        /// DPSP_MSG_PACKET2_ACK (2.2.40).
        DPSP_MSG_PACKET2_ACK = 0x31,
        /// DPSP_MSG_IAMNAMESERVER (2.2.33).
        DPSP_MSG_IAMNAMESERVER = 0x35,
        /// DPSP_MSG_VOICE (2.2.54).
        DPSP_MSG_VOICE = 0x36,
        /// DPSP_MSG_MULTICASTDELIVERY (2.2.37).
        DPSP_MSG_MULTICASTDELIVERY = 0x37,
        /// DPSP_MSG_CREATEPLAYERVERIFY (2.2.22).
        DPSP_MSG_CREATEPLAYERVERIFY = 0x38,
    }
}

/// SOCKADDR_IN as DirectPlay 4 carries it: family (u16 LE, 2), port and IPv4 address in
/// network order, 8 zero bytes; 16 bytes (MC-DPL4CS 2.2.1; decision F-22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct SockAddrIn {
    /// `sin_family`: 2 (AF_INET); kept as read so odd values re-emit.
    pub family: u16,
    /// Port and address.
    pub addr: SocketAddrV4,
}

impl SockAddrIn {
    /// Wire length.
    pub const LEN: usize = 16;
    /// AF_INET.
    pub const AF_INET: u16 = 2;

    /// An AF_INET address.
    pub fn new(addr: SocketAddrV4) -> Self {
        Self { family: Self::AF_INET, addr }
    }

    /// All zeros with family 2: "same network, answer to the source address".
    pub fn unspecified() -> Self {
        Self::new(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))
    }

    /// Reads 16 bytes; the trailing 8 zero bytes are not checked.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let family = r.u16("sin_family")?;
        let port = r.u16_be("sin_port")?;
        let ip = Ipv4Addr::from(r.array::<4>("sin_addr")?);
        r.bytes("sin_zero", 8)?;
        Ok(Self { family, addr: SocketAddrV4::new(ip, port) })
    }

    /// Writes 16 bytes.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.u16(self.family);
        w.u16_be(self.addr.port());
        w.bytes(&self.addr.ip().octets());
        w.zeros(8);
    }
}

/// The full DPSP_MSG_HEADER (MC-DPL4CS 2.2.6), Command at 24 and Version at 26 (decision F-20).
/// The size field is not stored: it is the length of the message, computed when emitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Header {
    /// Top 12 bits of the first DWORD.
    pub token: Token,
    /// Where the receiver answers (0.0.0.0: the source address).
    pub sock_addr: SockAddrIn,
    /// Which DPSP_MSG_* follows.
    pub command: Command,
    /// The dialect, 9-14 (MC-DPL4CS 2.2.3).
    pub version: u16,
}

impl Header {
    /// Parses a full header and checks its size field against the message.
    ///
    /// Returns the header and the message length the size field gives; the caller reads the
    /// body from `msg[HEADER_LEN..len]`.
    pub fn parse(msg: &[u8]) -> Result<(Self, usize), WireError> {
        let mut r = Reader::new(msg);
        let size_token = r.u32("dwSizeToken")?;
        let size = (size_token & 0xF_FFFF) as usize;
        #[allow(clippy::cast_possible_truncation)] // 12 bits
        let token = Token((size_token >> 20) as u16);
        let sock_addr = SockAddrIn::read(&mut r)?;
        let sig = r.array::<4>("dwSignature")?;
        if sig != SIGNATURE {
            return Err(WireError::InvalidValue {
                field: "dwSignature",
                offset: SIGNATURE_OFFSET,
                value: u32::from_le_bytes(sig).into(),
                reason: "DirectPlay 4 messages carry 'play' at offset 20",
            });
        }
        let command = Command(r.u16("wCommand")?);
        let version = r.u16("wVersion")?;
        if size < HEADER_LEN || size > msg.len() {
            return Err(WireError::InvalidValue {
                field: "dwSize",
                offset: 0,
                value: size as u64,
                reason: "the size must cover the header and fit in the message",
            });
        }
        Ok((Self { token, sock_addr, command, version }, size))
    }

    /// Writes the header for a message of `message_len` bytes (this header included).
    pub fn write(&self, w: &mut Writer<'_>, message_len: usize) -> Result<(), WireError> {
        if !(HEADER_LEN..=MAX_MESSAGE_SIZE).contains(&message_len) {
            return Err(WireError::Unencodable {
                field: "dwSize",
                reason: "a DP4 message is at most 0xFFFFF bytes",
            });
        }
        #[allow(clippy::cast_possible_truncation)] // checked above
        w.u32(message_len as u32 | u32::from(self.token.0 & 0xFFF) << 20);
        self.sock_addr.write(w);
        w.bytes(&SIGNATURE);
        w.u16(self.command.0);
        w.u16(self.version);
        Ok(())
    }
}

/// The short header: signature, Command, Version (MC-DPL4CS 2.2.6; INDEX D.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ShortHeader {
    /// Which DPSP_MSG_* follows.
    pub command: Command,
    /// The dialect.
    pub version: u16,
}

impl ShortHeader {
    /// Reads 8 bytes at the reader's position.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.pos();
        let sig = r.array::<4>("dwSignature")?;
        if sig != SIGNATURE {
            return Err(WireError::InvalidValue {
                field: "dwSignature",
                offset: at,
                value: u32::from_le_bytes(sig).into(),
                reason: "a short DP4 header starts with 'play'",
            });
        }
        Ok(Self { command: Command(r.u16("wCommand")?), version: r.u16("wVersion")? })
    }

    /// Writes 8 bytes.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.bytes(&SIGNATURE);
        w.u16(self.command.0);
        w.u16(self.version);
    }
}

#[cfg(test)]
mod tests;
