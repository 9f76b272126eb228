//! DFRAME: the DirectPlay 8 transport's data frame header (MC-DPL8R 2.2.2; MS-DPDX 2.2.17
//! TRANS_USERDATA_HEADER), including the KeepAlive (MS-DPDX 2.2.22) and END_OF_STREAM
//! (MS-DPDX 2.2.16) forms.
//!
//! The header is 4 bytes, then one DWORD per mask bit of `bControl`, then `ullSignature` on a
//! signed connection, then `dwSessID` on a KeepAlive between peers of version 0x00010005 or
//! later. What follows is the payload: one message, a piece of one, or the coalesced format.
//! Whether the signature and `dwSessID` are present depends on the connection, so parsing
//! takes a [`DframeContext`].

use bitflags::bitflags;

use super::cframe::Masks;
use crate::WireError;
use crate::codec::{Reader, Wire, Writer};
use crate::text::Blob;

/// The smallest DFRAME (MC-DPL8R 3.1.5).
pub const DFRAME_MIN_LEN: usize = 4;

bitflags! {
    /// `bCommand` of a DFRAME (MC-DPL8R 2.2.2; INDEX B.3).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct DframeCommand: u8 {
        /// `PACKET_COMMAND_DATA`: set on every DFRAME.
        const DATA = 0x01;
        /// `PACKET_COMMAND_RELIABLE`.
        const RELIABLE = 0x02;
        /// `PACKET_COMMAND_SEQUENTIAL`.
        const SEQUENTIAL = 0x04;
        /// `PACKET_COMMAND_POLL`: asks the peer to acknowledge now.
        const POLL = 0x08;
        /// `PACKET_COMMAND_NEW_MSG`: first frame of a message.
        const NEW_MSG = 0x10;
        /// `PACKET_COMMAND_END_MSG`: last frame of a message.
        const END_MSG = 0x20;
        /// `PACKET_COMMAND_USER_1`: a DirectPlay 8 core (session) message.
        const USER_1 = 0x40;
        /// `PACKET_COMMAND_USER_2`: voice (MC-DPLVP).
        const USER_2 = 0x80;
    }
}

bitflags! {
    /// `bControl` of a DFRAME (MC-DPL8R 2.2.2; INDEX B.4).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct DframeControl: u8 {
        /// `PACKET_CONTROL_RETRY`: this frame is a retransmission.
        const RETRY = 0x01;
        /// `PACKET_CONTROL_KEEPALIVE_OR_CORRELATE`: a KeepAlive at 0x00010005 and later.
        const KEEPALIVE_OR_CORRELATE = 0x02;
        /// `PACKET_CONTROL_COALESCE`: the payload is in the coalesced format.
        const COALESCE = 0x04;
        /// `PACKET_CONTROL_END_STREAM`: graceful disconnect.
        const END_STREAM = 0x08;
        /// `PACKET_CONTROL_SACK1`: `dwSACKMask1` present.
        const SACK1 = 0x10;
        /// `PACKET_CONTROL_SACK2`: `dwSACKMask2` present.
        const SACK2 = 0x20;
        /// `PACKET_CONTROL_SEND1`: `dwSendMask1` present.
        const SEND1 = 0x40;
        /// `PACKET_CONTROL_SEND2`: `dwSendMask2` present.
        const SEND2 = 0x80;
    }
}

/// The mask-presence bits of `bControl` (`PACKET_CONTROL_VARIABLE_MASKS`, MS-DPDX 2.2.17).
const MASK_BITS: DframeControl =
    DframeControl::SACK1.union(DframeControl::SACK2).union(DframeControl::SEND1).union(DframeControl::SEND2);

/// What the connection, not the frame, says about the header layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DframeContext {
    /// The connection signs its frames: `ullSignature` follows the masks (MC-DPL8R 2.2.2).
    pub signed: bool,
    /// Both sides are at 0x00010005 or later, so `bControl` 0x02 is a KeepAlive carrying
    /// `dwSessID` (MC-DPL8R 2.2.2; decision F-3).
    pub keepalive_sess_id: bool,
}

impl Default for DframeContext {
    /// An unsigned connection between peers of version 0x00010005 or later: what every
    /// DirectPlay 8 peer since DirectX 9 speaks.
    fn default() -> Self {
        Self { signed: false, keepalive_sess_id: true }
    }
}

/// A DFRAME header (MC-DPL8R 2.2.2). The mask bits of `bControl` follow from `masks`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DframeHeader {
    /// `bCommand`; `DATA` is always set on the wire.
    pub command: DframeCommand,
    /// `bControl` without the four mask bits, which [`DframeHeader::control`] derives.
    pub control: DframeControl,
    /// `bSeq`: this frame's sequence number.
    pub seq: u8,
    /// `bNRcv`: the next sequence number the sender expects; acknowledges everything before.
    pub n_rcv: u8,
    /// `dwSACKMask1/2`, `dwSendMask1/2`.
    pub masks: Masks,
    /// `ullSignature`, on signed connections.
    pub signature: Option<u64>,
    /// `dwSessID` of a KeepAlive.
    pub sess_id: Option<u32>,
}

impl DframeHeader {
    /// `bControl` as sent, mask bits included.
    pub fn control(&self) -> DframeControl {
        let mut c = self.control.difference(MASK_BITS);
        c.set(DframeControl::SACK1, self.masks.sack1.is_some());
        c.set(DframeControl::SACK2, self.masks.sack2.is_some());
        c.set(DframeControl::SEND1, self.masks.send1.is_some());
        c.set(DframeControl::SEND2, self.masks.send2.is_some());
        c
    }

    /// True for a KeepAlive (MS-DPDX 2.2.22): the KEEPALIVE bit with `dwSessID` present.
    pub fn is_keepalive(&self) -> bool {
        self.sess_id.is_some()
    }

    /// Header length on the wire.
    pub fn len(&self) -> usize {
        4 + 4 * self.masks.count()
            + 8 * usize::from(self.signature.is_some())
            + 4 * usize::from(self.sess_id.is_some())
    }

    /// A header is never empty; present for API symmetry with `len`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Parses the header at the front of `frame` and returns it with the payload that follows.
    ///
    /// `bCommand` must have `DATA` set (MC-DPL8R 3.1.5); a mask bit whose DWORD is missing
    /// makes the frame invalid (MS-DPDX 3.1.5.9).
    pub fn parse(frame: &[u8], ctx: DframeContext) -> Result<(Self, &[u8]), WireError> {
        let mut r = Reader::new(frame);
        let raw_command = r.u8("bCommand")?;
        let command = DframeCommand::from_bits_retain(raw_command);
        if !command.contains(DframeCommand::DATA) {
            return Err(WireError::InvalidValue {
                field: "bCommand",
                offset: 0,
                value: raw_command.into(),
                reason: "PACKET_COMMAND_DATA (0x01) is set on every DFRAME",
            });
        }
        let control = DframeControl::from_bits_retain(r.u8("bControl")?);
        let seq = r.u8("bSeq")?;
        let n_rcv = r.u8("bNRcv")?;
        let masks = Masks::read(
            &mut r,
            [
                control.contains(DframeControl::SACK1),
                control.contains(DframeControl::SACK2),
                control.contains(DframeControl::SEND1),
                control.contains(DframeControl::SEND2),
            ],
        )?;
        let signature = if ctx.signed { Some(r.u64("ullSignature")?) } else { None };
        let sess_id = if ctx.keepalive_sess_id && control.contains(DframeControl::KEEPALIVE_OR_CORRELATE) {
            Some(r.u32("dwSessID")?)
        } else {
            None
        };
        let header =
            Self { command, control: control.difference(MASK_BITS), seq, n_rcv, masks, signature, sess_id };
        Ok((header, r.rest()))
    }

    /// Writes the header into the front of `buf`; returns its length.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.len())?;
        w.u8((self.command | DframeCommand::DATA).bits());
        w.u8(self.control().bits());
        w.u8(self.seq);
        w.u8(self.n_rcv);
        self.masks.write(&mut w);
        if let Some(sig) = self.signature {
            w.u64(sig);
        }
        if let Some(sess_id) = self.sess_id {
            w.u32(sess_id);
        }
        w.finish()
    }
}

/// A whole DFRAME datagram: header and payload, parsed with the default context (unsigned,
/// version 0x00010005 or later). The transport uses [`DframeHeader::parse`] instead, which
/// borrows the payload.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Dframe {
    /// The header.
    pub header: DframeHeader,
    /// Everything after the header.
    pub payload: Blob,
}

impl Dframe {
    /// The message name: `KEEPALIVE`, `END_OF_STREAM` (MS-DPDX 2.2.22, 2.2.16) or `DFRAME`.
    pub fn name(&self) -> &'static str {
        if self.header.is_keepalive() {
            "KEEPALIVE"
        } else if self.header.control.contains(DframeControl::END_STREAM) {
            "END_OF_STREAM"
        } else {
            "DFRAME"
        }
    }
}

impl Wire for Dframe {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let (header, payload) = DframeHeader::parse(bytes, DframeContext::default())?;
        Ok(Self { header, payload: Blob::new(payload) })
    }

    fn encoded_len(&self) -> usize {
        self.header.len() + self.payload.len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let len = self.encoded_len();
        let got = buf.len();
        let out = buf.get_mut(..len).ok_or(WireError::BufferTooSmall { needed: len, got })?;
        let (head, body) = out.split_at_mut(self.header.len());
        self.header.emit(head)?;
        body.copy_from_slice(&self.payload);
        Ok(len)
    }
}

#[cfg(test)]
mod tests;
