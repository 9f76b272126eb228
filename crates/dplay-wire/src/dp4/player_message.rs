//! DPSP_MSG_PLAYERMESSAGE: application data, the one DP4 message without a 'play' signature
//! (MC-DPL4CS 2.2.45, 3.1.4.16.2; decision F-23).
//!
//! Layout: the size/token DWORD, the SockAddr placeholder, then `idFrom` and `idTo` unless the
//! session has NM (DPSESSION_NOMESSAGEID), then the payload. Whether the IDs are present is
//! session state, so parsing takes it as an argument and this type does not implement
//! [`crate::Wire`].

use std::net::{Ipv4Addr, SocketAddrV4};

use crate::codec::{Reader, Writer};
use crate::dp4::header::{MAX_MESSAGE_SIZE, SIGNATURE, SIGNATURE_OFFSET, SockAddrIn, Token};
use crate::{Blob, WireError};

/// Bytes before the IDs: size/token and SockAddr.
const PREFIX_LEN: usize = 20;

/// `idFrom` and `idTo` of a player message (MC-DPL4CS 2.2.45).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PlayerIds {
    /// `idFrom`: the sending player.
    pub id_from: u32,
    /// `idTo`: the destination player or group.
    pub id_to: u32,
}

/// DPSP_MSG_PLAYERMESSAGE (MC-DPL4CS 2.2.45).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlayerMessage {
    /// `token`: top 12 bits of the first DWORD.
    pub token: Token,
    /// `sockaddr`: a placeholder the service provider fills in; kept as read.
    pub sock_addr: SockAddrIn,
    /// `idFrom`/`idTo`: absent when the session has NM.
    pub ids: Option<PlayerIds>,
    /// `PlayerMessage`: the application payload.
    pub payload: Blob,
}

impl PlayerMessage {
    /// A message from a remote machine with an unspecified SockAddr.
    pub fn new(ids: Option<PlayerIds>, payload: Blob) -> Self {
        Self {
            token: Token::FROM_REMOTE,
            sock_addr: SockAddrIn::new(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)),
            ids,
            payload,
        }
    }

    /// Parses a whole datagram; `ids_present` is false in NM sessions. The size field must
    /// equal the length, and 'play' at offset 20 means a system message, not this one.
    pub fn parse(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
        if bytes.get(SIGNATURE_OFFSET..SIGNATURE_OFFSET + 4) == Some(&SIGNATURE[..]) {
            return Err(WireError::InvalidValue {
                field: "dwSignature",
                offset: SIGNATURE_OFFSET,
                value: u32::from_le_bytes(SIGNATURE).into(),
                reason: "a player message has no 'play' signature (MC-DPL4CS 2.2.45)",
            });
        }
        let mut r = Reader::new(bytes);
        let size_token = r.u32("size")?;
        let size = (size_token & 0xF_FFFF) as usize;
        if size != bytes.len() {
            return Err(WireError::InvalidValue {
                field: "size",
                offset: 0,
                value: size as u64,
                reason: "the size must equal the message length",
            });
        }
        #[allow(clippy::cast_possible_truncation)] // 12 bits
        let token = Token((size_token >> 20) as u16);
        let sock_addr = SockAddrIn::read(&mut r)?;
        let ids = if ids_present {
            Some(PlayerIds { id_from: r.u32("idFrom")?, id_to: r.u32("idTo")? })
        } else {
            None
        };
        Ok(Self { token, sock_addr, ids, payload: Blob::new(r.rest()) })
    }

    /// Bytes on the wire.
    pub fn encoded_len(&self) -> usize {
        PREFIX_LEN + self.ids.map_or(0, |_| 8) + self.payload.len()
    }

    /// Writes the message. Fails when it is too long for the size field, or when its bytes
    /// would carry 'play' at offset 20: such data must go in a PLAYERWRAPPER (3.1.4.16.2).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.encoded_len();
        if len > MAX_MESSAGE_SIZE {
            return Err(WireError::Unencodable {
                field: "size",
                reason: "a DP4 message is at most 0xFFFFF bytes",
            });
        }
        let mut w = Writer::new(buf, len)?;
        #[allow(clippy::cast_possible_truncation)] // checked above
        w.u32(len as u32 | u32::from(self.token.0 & 0xFFF) << 20);
        self.sock_addr.write(&mut w);
        if let Some(ids) = self.ids {
            w.u32(ids.id_from);
            w.u32(ids.id_to);
        }
        w.bytes(&self.payload);
        let n = w.finish()?;
        if buf.get(SIGNATURE_OFFSET..SIGNATURE_OFFSET + 4) == Some(&SIGNATURE[..]) {
            return Err(WireError::Unencodable {
                field: "PlayerMessage",
                reason: "'play' at offset 20; send it in a DPSP_MSG_PLAYERWRAPPER",
            });
        }
        Ok(n)
    }

    /// Emits into a new vector.
    pub fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len()];
        self.emit(&mut out)?;
        Ok(out)
    }
}
