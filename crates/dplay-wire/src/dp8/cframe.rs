//! CFRAMEs: the DirectPlay 8 transport's command frames (MC-DPL8R 2.2.1; MS-DPDX 2.2.7-2.2.9).
//!
//! A CFRAME has `PACKET_COMMAND_CFRAME` (0x80) in `bCommand`, optionally `PACKET_COMMAND_POLL`
//! (0x08), and any other bit set means it MUST be ignored (MC-DPL8R 2.2.1). `bExtOpCode` picks
//! the frame: CONNECT, CONNECTED, CONNECTED_SIGNED, HARD_DISCONNECT or SACK.

use bitflags::bitflags;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::codec::{Reader, Wire, Writer};
use crate::{WireError, open_enum};

/// `PACKET_COMMAND_CFRAME`: set on every CFRAME (MC-DPL8R 2.2.1).
pub const PACKET_COMMAND_CFRAME: u8 = 0x80;
/// `PACKET_COMMAND_POLL`: asks for an immediate answer (MC-DPL8R 2.2.1).
pub const PACKET_COMMAND_POLL: u8 = 0x08;
/// The smallest CFRAME (MC-DPL8R 3.1.5): shorter frames with a CFRAME lead byte are ignored.
pub const CFRAME_MIN_LEN: usize = 12;

open_enum! {
    /// `bExtOpCode` of a CFRAME (MC-DPL8R 2.2.1.1-2.2.1.5). MS-DPDX calls CONNECTED
    /// TRANS_COMMAND_CONNECT_ACCEPT and SACK TRANS_COMMAND_SACK.
    pub struct ExtOpCode(u8) {
        /// `FRAME_EXOPCODE_CONNECT` (MC-DPL8R 2.2.1.1; MS-DPDX 2.2.7 TRANS_COMMAND_CONNECT).
        CONNECT = 0x01,
        /// `FRAME_EXOPCODE_CONNECTED` (MC-DPL8R 2.2.1.2; MS-DPDX 2.2.8 TRANS_COMMAND_CONNECT_ACCEPT).
        CONNECTED = 0x02,
        /// `FRAME_EXOPCODE_CONNECTED_SIGNED` (MC-DPL8R 2.2.1.3).
        CONNECTED_SIGNED = 0x03,
        /// `FRAME_EXOPCODE_HARD_DISCONNECT` (MC-DPL8R 2.2.1.4).
        HARD_DISCONNECT = 0x04,
        /// `FRAME_EXOPCODE_SACK` (MC-DPL8R 2.2.1.5; MS-DPDX 2.2.9 TRANS_COMMAND_SACK).
        SACK = 0x06,
    }
}

open_enum! {
    /// `dwSigningOpts` of CONNECTED_SIGNED: exactly one of the two (MC-DPL8R 2.2.1.3).
    pub struct SigningOpts(u32) {
        /// `PACKET_SIGNING_FAST`: the signature is the sender's secret.
        PACKET_SIGNING_FAST = 0x1,
        /// `PACKET_SIGNING_FULL`: the signature is a SHA-1 over the frame and the secret.
        PACKET_SIGNING_FULL = 0x2,
    }
}

/// The 16-byte layout shared by CONNECT, CONNECTED and HARD_DISCONNECT (MC-DPL8R 2.2.1.1,
/// 2.2.1.2, 2.2.1.4): the first 16 bytes of CONNECTED_SIGNED too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ConnectFields {
    /// `PACKET_COMMAND_POLL` in `bCommand`.
    pub poll: bool,
    /// `bMsgID`: 0, then +1 for every retry and every further non-SACK CFRAME.
    pub msg_id: u8,
    /// `bRspId`: the `bMsgID` being answered (CONNECTED); 0 in a CONNECT.
    pub rsp_id: u8,
    /// `dwCurrentProtocolVersion`: 0x0001xxxx; a major version other than 1 MUST be ignored.
    pub protocol_version: u32,
    /// `dwSessID`: the connection attempt's identifier, echoed by every answer.
    pub sess_id: u32,
    /// `tTimestamp`: the sender's tick count in milliseconds.
    pub timestamp: u32,
}

/// Bytes 2-15 of CONNECT, CONNECTED, HARD_DISCONNECT and CONNECTED_SIGNED (MC-DPL8R 2.2.1.1).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawConnectFields {
    b_msg_id: u8,
    b_rsp_id: u8,
    dw_current_protocol_version: U32,
    dw_sess_id: U32,
    t_timestamp: U32,
}
const _: () = assert!(size_of::<RawConnectFields>() == 14);

/// A CONNECT or CONNECTED frame: 16 bytes (MC-DPL8R 2.2.1.1, 2.2.1.2).
pub type ConnectFrame = ConnectFields;

/// HARD_DISCONNECT: 16 bytes, or 24 with `ullSignature` on a signed link (MC-DPL8R 2.2.1.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct HardDisconnect {
    /// The common fields; `bMsgID` is the previous non-SACK CFRAME's plus one (ignored on receipt).
    pub fields: ConnectFields,
    /// `ullSignature`, present on signed connections.
    pub signature: Option<u64>,
}

/// CONNECTED_SIGNED: 48 bytes (MC-DPL8R 2.2.1.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ConnectedSigned {
    /// Offsets 0-15, as in CONNECTED.
    pub fields: ConnectFields,
    /// `ullConnectSig`: the listener's stateless cookie, echoed by the connector.
    pub connect_sig: u64,
    /// `ullSenderSecret`: 0 from the listener; the connector→listener secret from the connector.
    pub sender_secret: u64,
    /// `ullReceiverSecret`: 0 from the listener; the listener→connector secret from the connector.
    pub receiver_secret: u64,
    /// `dwSigningOpts`: FAST or FULL.
    pub signing_opts: SigningOpts,
    /// `dwEchoTimestamp`: 0 when answering a CONNECT, else the answered frame's `tTimestamp`.
    pub echo_timestamp: u32,
}

bitflags! {
    /// `bFlags` of a SACK (MC-DPL8R 2.2.1.5; MS-DPDX 2.2.9). Other bits MUST be 0.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct SackFlags: u8 {
        /// `SACK_FLAGS_RESPONSE`: `bRetry` is valid.
        const RESPONSE = 0x01;
        /// `SACK_FLAGS_SACK_MASK1`: `dwSACKMask1` present.
        const SACK_MASK1 = 0x02;
        /// `SACK_FLAGS_SACK_MASK2`: `dwSACKMask2` present.
        const SACK_MASK2 = 0x04;
        /// `SACK_FLAGS_SEND_MASK1`: `dwSendMask1` present.
        const SEND_MASK1 = 0x08;
        /// `SACK_FLAGS_SEND_MASK2`: `dwSendMask2` present.
        const SEND_MASK2 = 0x10;
    }
}

/// The four optional 32-bit masks carried by a SACK or a DFRAME header, in wire order.
///
/// A SACK mask bit i (LSB first) stands for sequence `bNRcv + 1 + i`; a send mask bit i for
/// `bSeq - 1 - i` (`bNSeq` in a SACK) (MC-DPL8R 3.1.5.2.3-4; decision F-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Masks {
    /// `dwSACKMask1`: sequences NRcv+1 .. NRcv+32.
    pub sack1: Option<u32>,
    /// `dwSACKMask2`: sequences NRcv+33 .. NRcv+64.
    pub sack2: Option<u32>,
    /// `dwSendMask1`: sequences Seq-1 .. Seq-32.
    pub send1: Option<u32>,
    /// `dwSendMask2`: sequences Seq-33 .. Seq-64.
    pub send2: Option<u32>,
}

impl Masks {
    /// The 64-bit selective-ACK mask; a missing half counts as 0.
    pub fn sack(&self) -> u64 {
        u64::from(self.sack1.unwrap_or(0)) | u64::from(self.sack2.unwrap_or(0)) << 32
    }

    /// The 64-bit send mask; a missing half counts as 0.
    pub fn send(&self) -> u64 {
        u64::from(self.send1.unwrap_or(0)) | u64::from(self.send2.unwrap_or(0)) << 32
    }

    /// Masks carrying `sack` and `send`, each half present only when non-zero.
    #[allow(clippy::cast_possible_truncation)] // halves of a u64, by construction
    pub fn new(sack: u64, send: u64) -> Self {
        let half = |v: u64| (v != 0).then_some(v as u32);
        Self { sack1: half(sack), sack2: half(sack >> 32), send1: half(send), send2: half(send >> 32) }
    }

    /// How many of the four are present.
    pub fn count(&self) -> usize {
        [self.sack1, self.sack2, self.send1, self.send2].iter().filter(|m| m.is_some()).count()
    }

    pub(crate) fn read(
        r: &mut Reader<'_>,
        [sack1, sack2, send1, send2]: [bool; 4],
    ) -> Result<Self, WireError> {
        let mut opt = |present: bool, field| if present { r.u32(field).map(Some) } else { Ok(None) };
        Ok(Self {
            sack1: opt(sack1, "dwSACKMask1")?,
            sack2: opt(sack2, "dwSACKMask2")?,
            send1: opt(send1, "dwSendMask1")?,
            send2: opt(send2, "dwSendMask2")?,
        })
    }

    pub(crate) fn write(&self, w: &mut Writer<'_>) {
        for mask in [self.sack1, self.sack2, self.send1, self.send2].into_iter().flatten() {
            w.u32(mask);
        }
    }
}

/// SACK: selective acknowledgement without data; 12 bytes plus 4 per mask, plus 8 when signed
/// (MC-DPL8R 2.2.1.5; MS-DPDX 2.2.9 TRANS_COMMAND_SACK).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Sack {
    /// `PACKET_COMMAND_POLL` in `bCommand` (allowed, but ignored on receipt).
    pub poll: bool,
    /// `SACK_FLAGS_RESPONSE`.
    pub response: bool,
    /// `bRetry`: non-zero if the last DFRAME received was a retry.
    pub retry: u8,
    /// `bNSeq`: the sender's next sequence number to send.
    pub n_seq: u8,
    /// `bNRcv`: the sender's next expected sequence number.
    pub n_rcv: u8,
    /// `tTimestamp`: tick count in milliseconds.
    pub timestamp: u32,
    /// The optional masks, present per `bFlags`.
    pub masks: Masks,
    /// `ullSignature`, on signed connections.
    pub signature: Option<u64>,
}

impl Sack {
    /// `bFlags` as sent: RESPONSE plus one bit per present mask.
    pub fn flags(&self) -> SackFlags {
        let mut f = SackFlags::empty();
        f.set(SackFlags::RESPONSE, self.response);
        f.set(SackFlags::SACK_MASK1, self.masks.sack1.is_some());
        f.set(SackFlags::SACK_MASK2, self.masks.sack2.is_some());
        f.set(SackFlags::SEND_MASK1, self.masks.send1.is_some());
        f.set(SackFlags::SEND_MASK2, self.masks.send2.is_some());
        f
    }
}

/// Any CFRAME (MC-DPL8R 2.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "frame")]
pub enum Cframe {
    /// CONNECT (0x01).
    Connect(ConnectFrame),
    /// CONNECTED (0x02).
    Connected(ConnectFrame),
    /// CONNECTED_SIGNED (0x03).
    ConnectedSigned(ConnectedSigned),
    /// HARD_DISCONNECT (0x04).
    HardDisconnect(HardDisconnect),
    /// SACK (0x06).
    Sack(Sack),
}

impl Cframe {
    /// The `bExtOpCode` of this frame.
    pub fn ext_op_code(&self) -> ExtOpCode {
        match self {
            Self::Connect(_) => ExtOpCode::CONNECT,
            Self::Connected(_) => ExtOpCode::CONNECTED,
            Self::ConnectedSigned(_) => ExtOpCode::CONNECTED_SIGNED,
            Self::HardDisconnect(_) => ExtOpCode::HARD_DISCONNECT,
            Self::Sack(_) => ExtOpCode::SACK,
        }
    }

    /// The message name as MC-DPL8R spells it (`CONNECT`, `SACK`, ...).
    pub fn name(&self) -> &'static str {
        self.ext_op_code().name().unwrap_or("CFRAME")
    }

    fn poll(&self) -> bool {
        match self {
            Self::Connect(f) | Self::Connected(f) => f.poll,
            Self::ConnectedSigned(s) => s.fields.poll,
            Self::HardDisconnect(h) => h.fields.poll,
            Self::Sack(s) => s.poll,
        }
    }
}

fn read_connect_fields(r: &mut Reader<'_>, poll: bool) -> Result<ConnectFields, WireError> {
    let raw: &RawConnectFields = r.layout("bMsgID..tTimestamp")?;
    Ok(ConnectFields {
        poll,
        msg_id: raw.b_msg_id,
        rsp_id: raw.b_rsp_id,
        protocol_version: raw.dw_current_protocol_version.get(),
        sess_id: raw.dw_sess_id.get(),
        timestamp: raw.t_timestamp.get(),
    })
}

fn write_connect_fields(w: &mut Writer<'_>, f: &ConnectFields) {
    w.layout(&RawConnectFields {
        b_msg_id: f.msg_id,
        b_rsp_id: f.rsp_id,
        dw_current_protocol_version: f.protocol_version.into(),
        dw_sess_id: f.sess_id.into(),
        t_timestamp: f.timestamp.into(),
    });
}

impl Wire for Cframe {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let command = r.u8("bCommand")?;
        if command & !(PACKET_COMMAND_CFRAME | PACKET_COMMAND_POLL) != 0
            || command & PACKET_COMMAND_CFRAME == 0
        {
            return Err(WireError::InvalidValue {
                field: "bCommand",
                offset: 0,
                value: command.into(),
                reason: "a CFRAME has 0x80 and at most 0x08 besides (MC-DPL8R 2.2.1)",
            });
        }
        let poll = command & PACKET_COMMAND_POLL != 0;
        let op = ExtOpCode(r.u8("bExtOpCode")?);
        let frame = match op {
            ExtOpCode::CONNECT => Self::Connect(read_connect_fields(&mut r, poll)?),
            ExtOpCode::CONNECTED => Self::Connected(read_connect_fields(&mut r, poll)?),
            ExtOpCode::CONNECTED_SIGNED => {
                let fields = read_connect_fields(&mut r, poll)?;
                let connect_sig = r.u64("ullConnectSig")?;
                let sender_secret = r.u64("ullSenderSecret")?;
                let receiver_secret = r.u64("ullReceiverSecret")?;
                let opts_at = r.pos();
                let signing_opts = SigningOpts(r.u32("dwSigningOpts")?);
                if signing_opts.name().is_none() {
                    return Err(WireError::InvalidValue {
                        field: "dwSigningOpts",
                        offset: opts_at,
                        value: signing_opts.0.into(),
                        reason: "exactly one of PACKET_SIGNING_FAST and PACKET_SIGNING_FULL",
                    });
                }
                let echo_timestamp = r.u32("dwEchoTimestamp")?;
                Self::ConnectedSigned(ConnectedSigned {
                    fields,
                    connect_sig,
                    sender_secret,
                    receiver_secret,
                    signing_opts,
                    echo_timestamp,
                })
            }
            ExtOpCode::HARD_DISCONNECT => {
                let fields = read_connect_fields(&mut r, poll)?;
                let signature = optional_signature(&mut r)?;
                Self::HardDisconnect(HardDisconnect { fields, signature })
            }
            ExtOpCode::SACK => {
                let flags_at = r.pos();
                let raw_flags = r.u8("bFlags")?;
                let flags = SackFlags::from_bits(raw_flags).ok_or(WireError::InvalidValue {
                    field: "bFlags",
                    offset: flags_at,
                    value: raw_flags.into(),
                    reason: "undefined SACK flag bits MUST be 0 (MC-DPL8R 2.2.1.5)",
                })?;
                let retry = r.u8("bRetry")?;
                let n_seq = r.u8("bNSeq")?;
                let n_rcv = r.u8("bNRcv")?;
                let _padding = r.u16("wPadding")?;
                let timestamp = r.u32("tTimestamp")?;
                let masks = Masks::read(
                    &mut r,
                    [
                        flags.contains(SackFlags::SACK_MASK1),
                        flags.contains(SackFlags::SACK_MASK2),
                        flags.contains(SackFlags::SEND_MASK1),
                        flags.contains(SackFlags::SEND_MASK2),
                    ],
                )?;
                let signature = optional_signature(&mut r)?;
                Self::Sack(Sack {
                    poll,
                    response: flags.contains(SackFlags::RESPONSE),
                    retry,
                    n_seq,
                    n_rcv,
                    timestamp,
                    masks,
                    signature,
                })
            }
            other => return Err(WireError::Unknown { what: "CFRAME bExtOpCode", value: other.0.into() }),
        };
        r.finish("CFRAME")?;
        Ok(frame)
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Connect(_) | Self::Connected(_) => 16,
            Self::ConnectedSigned(_) => 48,
            Self::HardDisconnect(h) => 16 + 8 * usize::from(h.signature.is_some()),
            Self::Sack(s) => 12 + 4 * s.masks.count() + 8 * usize::from(s.signature.is_some()),
        }
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        w.u8(PACKET_COMMAND_CFRAME | if self.poll() { PACKET_COMMAND_POLL } else { 0 });
        w.u8(self.ext_op_code().0);
        match self {
            Self::Connect(f) | Self::Connected(f) => write_connect_fields(&mut w, f),
            Self::ConnectedSigned(s) => {
                write_connect_fields(&mut w, &s.fields);
                w.u64(s.connect_sig);
                w.u64(s.sender_secret);
                w.u64(s.receiver_secret);
                w.u32(s.signing_opts.0);
                w.u32(s.echo_timestamp);
            }
            Self::HardDisconnect(h) => {
                write_connect_fields(&mut w, &h.fields);
                if let Some(sig) = h.signature {
                    w.u64(sig);
                }
            }
            Self::Sack(s) => {
                w.u8(s.flags().bits());
                w.u8(s.retry);
                w.u8(s.n_seq);
                w.u8(s.n_rcv);
                w.u16(0);
                w.u32(s.timestamp);
                s.masks.write(&mut w);
                if let Some(sig) = s.signature {
                    w.u64(sig);
                }
            }
        }
        w.finish()
    }
}

/// Reads a trailing `ullSignature`: none left means unsigned, exactly 8 means signed.
fn optional_signature(r: &mut Reader<'_>) -> Result<Option<u64>, WireError> {
    match r.remaining() {
        0 => Ok(None),
        _ => r.u64("ullSignature").map(Some),
    }
}

#[cfg(test)]
pub(crate) mod tests;
