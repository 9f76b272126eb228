//! DPSP_MSG_PLAYERMESSAGE: application data, the one DP4 message without a 'play' signature,
//! in its two forms (MC-DPL4CS 2.2.45, 2.2.47, 3.1.4.16.2; decision F-23).
//!
//! * [`PlayerMessage`], the **stream** form a TCP connection carries (guaranteed data): the
//!   size/token DWORD, the SockAddr placeholder, then `idFrom` and `idTo` unless the session has
//!   NM (DPSESSION_NOMESSAGEID), then the payload. This is the layout of the 2.2.45 diagram
//!   after its DPSP_MSG_HEADER.
//! * [`DatagramPlayerMessage`], the **datagram** form a UDP datagram carries (non-guaranteed
//!   data): `idFrom` and `idTo` (unless NM) and the payload, nothing else. The spec draws only
//!   the stream form; Wine's dplayx tests (`receiveGameMessage_` against
//!   `receiveGuaranteedGameMessage_`) show Windows sending this one over UDP
//!   (docs/decisions.md).
//!
//! Both forms are told from system messages by the 'play' signature at offset 20
//! (3.1.4.16.2, F-21): a standalone player message must not carry it there, so `parse`
//! refuses it and `emit` refuses to produce it. Such data travels inside a
//! DPSP_MSG_PLAYERWRAPPER (2.2.47), whose content is decoded with `parse_wrapped`, which
//! accepts exactly those bytes. Whether the IDs are present is session state, so parsing
//! takes it as an argument and these types do not implement [`crate::Wire`].

use std::net::{Ipv4Addr, SocketAddrV4};

use crate::codec::{Reader, Writer};
use crate::dp4::header::{MAX_MESSAGE_SIZE, SIGNATURE, SIGNATURE_OFFSET, SockAddrIn, Token};
use crate::{Blob, WireError};

/// Bytes of the stream form before the IDs: size/token and SockAddr (MC-DPL4CS 2.2.45).
pub const STREAM_PREFIX_LEN: usize = 20;
/// Bytes of `idFrom` and `idTo` (MC-DPL4CS 2.2.45).
pub const IDS_LEN: usize = 8;

/// `idFrom` and `idTo` of a player message (MC-DPL4CS 2.2.45).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PlayerIds {
    /// `idFrom`: the sending player.
    pub id_from: u32,
    /// `idTo`: the destination player or group.
    pub id_to: u32,
}

/// Which transport a player message came on, which fixes its form (MC-DPL4CS 2.2.45;
/// docs/decisions.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum PlayerMessageForm {
    /// A TCP stream: size/token, SockAddr, IDs, payload ([`PlayerMessage`]).
    Stream,
    /// A UDP datagram: IDs and payload ([`DatagramPlayerMessage`]).
    Datagram,
}

/// Whether `bytes` carry 'play' at offset 20, which makes them a system message
/// (MC-DPL4CS 3.1.4.16.2, F-21).
pub fn has_signature(bytes: &[u8]) -> bool {
    bytes.get(SIGNATURE_OFFSET..SIGNATURE_OFFSET + 4) == Some(&SIGNATURE[..])
}

fn refuse_signature(bytes: &[u8]) -> Result<(), WireError> {
    if has_signature(bytes) {
        return Err(WireError::InvalidValue {
            field: "dwSignature",
            offset: SIGNATURE_OFFSET,
            value: u32::from_le_bytes(SIGNATURE).into(),
            reason: "a player message has no 'play' signature (MC-DPL4CS 2.2.45)",
        });
    }
    Ok(())
}

fn unwrapped_clash() -> WireError {
    WireError::Unencodable {
        field: "PlayerMessage",
        reason: "'play' at offset 20; send it in a DPSP_MSG_PLAYERWRAPPER (MC-DPL4CS 3.1.4.16.2)",
    }
}

fn read_ids(r: &mut Reader<'_>, ids_present: bool) -> Result<Option<PlayerIds>, WireError> {
    if !ids_present {
        return Ok(None);
    }
    Ok(Some(PlayerIds { id_from: r.u32("idFrom")?, id_to: r.u32("idTo")? }))
}

fn write_ids(w: &mut Writer<'_>, ids: Option<PlayerIds>) {
    if let Some(ids) = ids {
        w.u32(ids.id_from);
        w.u32(ids.id_to);
    }
}

/// DPSP_MSG_PLAYERMESSAGE in the stream form (MC-DPL4CS 2.2.45).
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

    /// Parses one whole stream message; `ids_present` is false in NM sessions. The size field
    /// must equal the length, and 'play' at offset 20 means a system message, not this one.
    pub fn parse(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
        refuse_signature(bytes)?;
        Self::parse_wrapped(bytes, ids_present)
    }

    /// Parses the content of a DPSP_MSG_PLAYERWRAPPER that came on a stream (MC-DPL4CS
    /// 2.2.47): like [`PlayerMessage::parse`], but 'play' at offset 20 is expected there.
    pub fn parse_wrapped(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
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
        let ids = read_ids(&mut r, ids_present)?;
        Ok(Self { token, sock_addr, ids, payload: Blob::new(r.rest()) })
    }

    /// Bytes on the wire.
    pub fn encoded_len(&self) -> usize {
        STREAM_PREFIX_LEN + self.ids.map_or(0, |_| IDS_LEN) + self.payload.len()
    }

    /// Whether the emitted bytes carry 'play' at offset 20 and so must travel in a
    /// DPSP_MSG_PLAYERWRAPPER (MC-DPL4CS 3.1.4.16.2).
    pub fn needs_wrapper(&self) -> bool {
        // Offset 20 is where the IDs start, or the payload in NM sessions.
        match self.ids {
            Some(ids) => ids.id_from.to_le_bytes() == SIGNATURE,
            None => self.payload.get(..4) == Some(&SIGNATURE[..]),
        }
    }

    /// Writes the message. Fails when it is too long for the size field, or when its bytes
    /// would carry 'play' at offset 20: such data must go in a PLAYERWRAPPER (3.1.4.16.2).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if self.needs_wrapper() {
            return Err(unwrapped_clash());
        }
        self.emit_wrapped(buf)
    }

    /// Writes the message whatever offset 20 holds, as the content of a PLAYERWRAPPER.
    pub fn emit_wrapped(&self, buf: &mut [u8]) -> Result<usize, WireError> {
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
        write_ids(&mut w, self.ids);
        w.bytes(&self.payload);
        w.finish()
    }

    /// Emits into a new vector (see [`PlayerMessage::emit`]).
    pub fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len()];
        self.emit(&mut out)?;
        Ok(out)
    }

    /// Emits into a new vector for a PLAYERWRAPPER (see [`PlayerMessage::emit_wrapped`]).
    pub fn to_wrapped_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len()];
        self.emit_wrapped(&mut out)?;
        Ok(out)
    }
}

/// DPSP_MSG_PLAYERMESSAGE in the datagram form: `idFrom`, `idTo` (absent with NM) and the
/// payload, with no size/token or SockAddr (MC-DPL4CS 2.2.45; Wine's dplayx tests, see the
/// module documentation). The same form travels inside MC-DPL4R data frames
/// (docs/decisions.md).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DatagramPlayerMessage {
    /// `idFrom`/`idTo`: absent when the session has NM.
    pub ids: Option<PlayerIds>,
    /// `PlayerMessage`: the application payload.
    pub payload: Blob,
}

impl DatagramPlayerMessage {
    /// A message with `ids` (None in NM sessions) and `payload`.
    pub fn new(ids: Option<PlayerIds>, payload: Blob) -> Self {
        Self { ids, payload }
    }

    /// Parses one whole datagram; `ids_present` is false in NM sessions. 'play' at offset 20
    /// means a system message, not this one (MC-DPL4CS 3.1.4.16.2).
    pub fn parse(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
        refuse_signature(bytes)?;
        Self::parse_wrapped(bytes, ids_present)
    }

    /// Parses the content of a DPSP_MSG_PLAYERWRAPPER that came in a datagram (MC-DPL4CS
    /// 2.2.47): like [`DatagramPlayerMessage::parse`], but 'play' at offset 20 is expected.
    pub fn parse_wrapped(bytes: &[u8], ids_present: bool) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let ids = read_ids(&mut r, ids_present)?;
        Ok(Self { ids, payload: Blob::new(r.rest()) })
    }

    /// Bytes on the wire.
    pub fn encoded_len(&self) -> usize {
        self.ids.map_or(0, |_| IDS_LEN) + self.payload.len()
    }

    /// Whether the emitted bytes carry 'play' at offset 20 and so must travel in a
    /// DPSP_MSG_PLAYERWRAPPER (MC-DPL4CS 3.1.4.16.2).
    pub fn needs_wrapper(&self) -> bool {
        let at = SIGNATURE_OFFSET - self.ids.map_or(0, |_| IDS_LEN);
        self.payload.get(at..at + 4) == Some(&SIGNATURE[..])
    }

    /// Writes the message; fails when its bytes would carry 'play' at offset 20.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        if self.needs_wrapper() {
            return Err(unwrapped_clash());
        }
        self.emit_wrapped(buf)
    }

    /// Writes the message whatever offset 20 holds, as the content of a PLAYERWRAPPER.
    pub fn emit_wrapped(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        write_ids(&mut w, self.ids);
        w.bytes(&self.payload);
        w.finish()
    }

    /// Emits into a new vector (see [`DatagramPlayerMessage::emit`]).
    pub fn to_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len()];
        self.emit(&mut out)?;
        Ok(out)
    }

    /// Emits into a new vector for a PLAYERWRAPPER.
    pub fn to_wrapped_vec(&self) -> Result<Vec<u8>, WireError> {
        let mut out = vec![0; self.encoded_len()];
        self.emit_wrapped(&mut out)?;
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
