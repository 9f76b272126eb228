//! Secure sessions: NEGOTIATE, CHALLENGE, CHALLENGERESPONSE, ACCESSGRANTED, KEYEXCHANGE,
//! KEYEXCHANGEREPLY and SIGNED (MC-DPL4CS 2.2.7, 2.2.17, 2.2.18, 2.2.34, 2.2.35, 2.2.38,
//! 2.2.52). SSPI tokens, keys and signatures stay opaque; their offsets and sizes are checked.

use bitflags::bitflags;

use crate::codec::{Reader, Writer, located};
use crate::dp4::fields::{BODY_START, Body, blob_at, off, place_blob};
use crate::{Blob, WireError};

/// `SEC_E_INVALID_TOKEN`: an AUTHERROR `Error` (MC-DPL4CS 2.2.16).
pub const SEC_E_INVALID_TOKEN: u32 = 0x8009_0308;
/// `SEC_E_INVALID_HANDLE`: an AUTHERROR `Error` (MC-DPL4CS 2.2.16).
pub const SEC_E_INVALID_HANDLE: u32 = 0x8009_0301;
/// `SEC_E_INTERNAL_ERROR`: an AUTHERROR `Error` (MC-DPL4CS 2.2.16).
pub const SEC_E_INTERNAL_ERROR: u32 = 0x8009_0304;
/// `SEC_E_NO_AUTHENTICATING_AUTHORITY`: an AUTHERROR `Error` (MC-DPL4CS 2.2.16).
pub const SEC_E_NO_AUTHENTICATING_AUTHORITY: u32 = 0x8009_0311;

bitflags! {
    /// SIGNED `Flags` (MC-DPL4CS 2.2.52; INDEX B.12). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct SignedFlags: u32 {
        /// SS: signed by SSPI (an NTLMSSP_MESSAGE_SIGNATURE).
        const SSPI_SIGNED = 0x1;
        /// SC: signed with the CAPI algorithm.
        const CAPI_SIGNED = 0x2;
        /// EC: encrypted with CAPI; the Message is ciphertext.
        const ENCRYPTED = 0x4;
        const _ = !0;
    }
}

/// NEGOTIATE (0x20), CHALLENGE (0x1C) and CHALLENGERESPONSE (0x21): an SSPI token at
/// `DataOffset`, `DataSize` bytes (MC-DPL4CS 2.2.38, 2.2.17, 2.2.18).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SecurityToken {
    /// `IDFrom`: the sender's system player.
    pub id_from: u32,
    /// `SecurityToken`: opaque (NTLM).
    pub security_token: Blob,
}

impl Body for SecurityToken {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_from = r.u32("IDFrom")?;
        let size = r.u32("DataSize")?;
        let offset = r.u32("DataOffset")?;
        Ok(Self { id_from, security_token: blob_at(msg, "SecurityToken", offset, size)? })
    }
    fn len(&self) -> usize {
        12 + self.security_token.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_from);
        w.u32(off(self.security_token.len()));
        w.u32(place_blob(&mut (BODY_START + 12), &self.security_token));
        w.bytes(&self.security_token);
        Ok(())
    }
}

/// DPSP_MSG_ACCESSGRANTED (0x1D): authentication succeeded; carries the host's signed public
/// key at `PublicKeyOffset`, `PublicKeySize` bytes (24 per the spec, not enforced)
/// (MC-DPL4CS 2.2.7).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct AccessGranted {
    /// `PublicKey`.
    pub public_key: Blob,
}

impl Body for AccessGranted {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let size = r.u32("PublicKeySize")?;
        let offset = r.u32("PublicKeyOffset")?;
        Ok(Self { public_key: blob_at(msg, "PublicKey", offset, size)? })
    }
    fn len(&self) -> usize {
        8 + self.public_key.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(off(self.public_key.len()));
        w.u32(place_blob(&mut (BODY_START + 8), &self.public_key));
        w.bytes(&self.public_key);
        Ok(())
    }
}

/// DPSP_MSG_KEYEXCHANGE (0x2B): the client's session key and public key (MC-DPL4CS 2.2.34).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyExchange {
    /// `SessionKey`, at `SessionKeyOffset`.
    pub session_key: Blob,
    /// `PublicKey`, at `PublicKeyOffset`.
    pub public_key: Blob,
}

impl Body for KeyExchange {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let session_key_size = r.u32("SessionKeySize")?;
        let session_key_offset = r.u32("SessionKeyOffset")?;
        let public_key_size = r.u32("PublicKeySize")?;
        let public_key_offset = r.u32("PublicKeyOffset")?;
        Ok(Self {
            session_key: blob_at(msg, "SessionKey", session_key_offset, session_key_size)?,
            public_key: blob_at(msg, "PublicKey", public_key_offset, public_key_size)?,
        })
    }
    fn len(&self) -> usize {
        16 + self.session_key.len() + self.public_key.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        let mut at = BODY_START + 16;
        w.u32(off(self.session_key.len()));
        w.u32(place_blob(&mut at, &self.session_key));
        w.u32(off(self.public_key.len()));
        w.u32(place_blob(&mut at, &self.public_key));
        w.bytes(&self.session_key);
        w.bytes(&self.public_key);
        Ok(())
    }
}

/// DPSP_MSG_KEYEXCHANGEREPLY (0x2C): the host's session key (MC-DPL4CS 2.2.35).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyExchangeReply {
    /// `SessionKey`, at `SessionKeyOffset`.
    pub session_key: Blob,
    /// `PublicKeySize`: not used, kept as read.
    pub public_key_size: u32,
    /// `PublicKeyOffset`: not used, kept as read.
    pub public_key_offset: u32,
}

impl Body for KeyExchangeReply {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let size = r.u32("SessionKeySize")?;
        let offset = r.u32("SessionKeyOffset")?;
        let public_key_size = r.u32("PublicKeySize")?;
        let public_key_offset = r.u32("PublicKeyOffset")?;
        Ok(Self {
            session_key: blob_at(msg, "SessionKey", offset, size)?,
            public_key_size,
            public_key_offset,
        })
    }
    fn len(&self) -> usize {
        16 + self.session_key.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(off(self.session_key.len()));
        w.u32(place_blob(&mut (BODY_START + 16), &self.session_key));
        w.u32(self.public_key_size);
        w.u32(self.public_key_offset);
        w.bytes(&self.session_key);
        Ok(())
    }
}

/// DPSP_MSG_SIGNED (0x22): a short-form DP4 message and its signature (MC-DPL4CS 2.2.52).
///
/// `Message` sits at `DataOffset`, `DataSize` bytes; `Signature` follows it, `SignatureSize`
/// bytes. The message stays bytes because it may be encrypted (EC); decode a plain one with
/// [`crate::dp4::message::ShortMessage`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Signed {
    /// `IDFrom`: the sender's system player.
    pub id_from: u32,
    /// `Flags`.
    pub flags: SignedFlags,
    /// `Message`: a DP4 message from its signature on (ciphertext when EC is set).
    pub message: Blob,
    /// `Signature`.
    pub signature: Blob,
}

impl Body for Signed {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_from = r.u32("IDFrom")?;
        let data_offset = r.u32("DataOffset")?;
        let data_size = r.u32("DataSize")?;
        let signature_size = r.u32("SignatureSize")?;
        let flags = SignedFlags::from_bits_retain(r.u32("Flags")?);
        let message = blob_at(msg, "Message", data_offset, data_size)?;
        let sig_at = data_offset.checked_add(data_size).ok_or(WireError::BadOffset {
            field: "DataSize",
            offset: data_offset.into(),
            size: data_size.into(),
            len: msg.len(),
        })?;
        let signature = match located(msg, 0, "Signature", sig_at, signature_size)? {
            Some(bytes) => Blob::new(bytes),
            None => Blob::default(),
        };
        Ok(Self { id_from, flags, message, signature })
    }
    fn len(&self) -> usize {
        20 + self.message.len() + self.signature.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_from);
        // The message is always placed, even empty, so that the signature can follow it.
        w.u32(off(BODY_START + 20));
        w.u32(off(self.message.len()));
        w.u32(off(self.signature.len()));
        w.u32(self.flags.bits());
        w.bytes(&self.message);
        w.bytes(&self.signature);
        Ok(())
    }
}
