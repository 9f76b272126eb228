//! The DirectPlay 4 reliable protocol's frames: player-index header, data, ACK and NACK
//! (MC-DPL4R 2.2; INDEX A.5, B.13, C.4, D.18).
//!
//! The frame type follows from the flags (MC-DPL4R 2): ACK clear is a data frame; ACK set and
//! EXT clear is an ACK frame; ACK and EXT set is a NACK frame. Windows sends neither EXT nor
//! NACK (MC-DPL4R 6 <2>-<6>), but both are parsed and emitted. Bit positions of the extended
//! flags byte are LSB-first, like every MC-DPL4CS diagram (INDEX §0).

use bitflags::bitflags;

use crate::codec::{Reader, Wire, Writer};
use crate::{Blob, WireError};

bitflags! {
    /// The `flags` byte (MC-DPL4R 2.2.2-2.2.4; INDEX B.13).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct ReliableFlags: u8 {
        /// EXT: the extended flags byte is present.
        const EXT = 0x80;
        /// BIG: MUST be 0 (never implemented).
        const BIG = 0x40;
        /// CMD: MUST be set on data frames (the 4.1 examples leave it out, F-30).
        const CMD = 0x20;
        /// STA: the first frame of a message.
        const STA = 0x10;
        /// EOM: the last frame of a message.
        const EOM = 0x08;
        /// SAK: acknowledge immediately.
        const SAK = 0x04;
        /// ACK: an ACK or NACK frame; never on data frames.
        const ACK = 0x02;
        /// RLY: the message is reliable.
        const RLY = 0x01;
    }
}

/// The largest player index a varint can carry (MC-DPL4R 2.2.1).
pub const MAX_PLAYER_INDEX: u16 = 0xFFFF;

/// Reads a player index: 1-3 bytes, 7 bits each, LSB first, high bit = more follows; the third
/// byte carries the top 2 bits (MC-DPL4R 2.2.1). Longer-than-needed encodings are rejected so
/// that every frame re-emits byte for byte.
pub fn read_player_index(r: &mut Reader<'_>, field: &'static str) -> Result<u16, WireError> {
    let at = r.pos();
    let bad = |value: u64, reason| WireError::InvalidValue { field, offset: at, value, reason };
    let b0 = r.u8(field)?;
    if b0 & 0x80 == 0 {
        return Ok(b0.into());
    }
    let b1 = r.u8(field)?;
    let low = u16::from(b0 & 0x7F) | u16::from(b1 & 0x7F) << 7;
    if b1 & 0x80 == 0 {
        return if b1 == 0 { Err(bad(b1.into(), "non-minimal player index")) } else { Ok(low) };
    }
    let b2 = r.u8(field)?;
    match b2 {
        0 => Err(bad(0, "non-minimal player index")),
        1..=3 => Ok(low | u16::from(b2) << 14),
        _ => Err(bad(b2.into(), "the third byte of a player index holds 2 bits (max 0xFFFF)")),
    }
}

/// Bytes [`write_player_index`] writes for `index`.
pub fn player_index_len(index: u16) -> usize {
    match index {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        _ => 3,
    }
}

/// Writes a player index in 1-3 bytes (MC-DPL4R 2.2.1): 0xFFFE is `FE FF 03`.
#[allow(clippy::cast_possible_truncation)] // 7-bit chunks
pub fn write_player_index(w: &mut Writer<'_>, index: u16) {
    match player_index_len(index) {
        1 => w.u8(index as u8),
        2 => w.bytes(&[index as u8 | 0x80, (index >> 7) as u8]),
        _ => w.bytes(&[index as u8 | 0x80, (index >> 7) as u8 | 0x80, (index >> 14) as u8]),
    }
}

/// The NACK MASK and its length, the `nNACK` bits of the extended flags byte (MC-DPL4R
/// 2.2.2, 2.2.3). Bit i stands for `sequence + 1 + i` (INDEX C.4); the bytes are little-endian
/// (inferred).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct NackMask {
    /// `nNACK`: mask bytes, 0-3.
    pub len: u8,
    /// The mask; must fit in `len` bytes.
    pub bits: u32,
}

impl NackMask {
    /// The extended flags byte: COMMAND 0, nNACK, top bit 0.
    fn ext_byte(self) -> u8 {
        (self.len & 0x3) << 5
    }

    fn read_ext(r: &mut Reader<'_>) -> Result<u8, WireError> {
        let at = r.pos();
        let ext = r.u8("extended flags")?;
        if ext & 0x9F != 0 {
            return Err(WireError::InvalidValue {
                field: "extended flags",
                offset: at,
                value: ext.into(),
                reason: "COMMAND and the top bit MUST be 0",
            });
        }
        Ok(ext >> 5)
    }

    fn read_mask(r: &mut Reader<'_>, len: u8) -> Result<Self, WireError> {
        let mut bits = 0u32;
        for (i, b) in r.bytes("NACK MASK", len.into())?.iter().enumerate() {
            bits |= u32::from(*b) << (8 * i);
        }
        Ok(Self { len, bits })
    }

    fn check(self) -> Result<(), WireError> {
        if self.len > 3 || u64::from(self.bits) >> (8 * u32::from(self.len)) != 0 {
            return Err(WireError::Unencodable {
                field: "NACK MASK",
                reason: "nNACK is 0-3 bytes and the mask must fit",
            });
        }
        Ok(())
    }

    fn write_mask(self, w: &mut Writer<'_>) {
        w.bytes(self.bits.to_le_bytes().get(..usize::from(self.len)).unwrap_or_default());
    }
}

/// A data frame (MC-DPL4R 2.2.2).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DataFrame {
    /// `flags`, as on the wire: ACK and BIG clear; EXT set exactly when `nack` is present.
    pub flags: ReliableFlags,
    /// `messageid`.
    pub message_id: u8,
    /// `sequence`.
    pub sequence: u8,
    /// `serial`: the send count (one frame) or frame-and-retry count (several frames).
    pub serial: u8,
    /// The extended flags' `nNACK` and the NACK MASK, present when EXT is set.
    pub nack: Option<NackMask>,
    /// `Data`: the rest of the frame.
    pub data: Blob,
}

/// An ACK frame: acknowledges `sequence` and everything before it (MC-DPL4R 2.2.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct AckFrame {
    /// `flags`, as on the wire: ACK set, EXT and BIG clear.
    pub flags: ReliableFlags,
    /// `messageid`.
    pub message_id: u8,
    /// `sequence`: the last frame received.
    pub sequence: u8,
    /// `serial`: the send count of the frame acknowledged.
    pub serial: u8,
    /// `bytes received` on the link.
    pub bytes_received: u32,
    /// `local tick count` when sent.
    pub local_tick_count: u32,
}

/// A NACK frame: `sequence` is the first frame missing, the mask marks more (MC-DPL4R 2.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct NackFrame {
    /// `flags`, as on the wire: ACK and EXT set, BIG clear.
    pub flags: ReliableFlags,
    /// `messageid`.
    pub message_id: u8,
    /// `sequence`: the first frame not received.
    pub sequence: u8,
    /// `bytes received` on the link.
    pub bytes_received: u32,
    /// `local tick count` when sent.
    pub local_tick_count: u32,
    /// `nNACK` and the NACK MASK. The 4.1.3 example has nNACK 0, so 0 is accepted (F-30).
    pub nack: NackMask,
}

/// The frame after the player indexes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum FrameBody {
    /// A data frame.
    Data(DataFrame),
    /// An ACK frame.
    Ack(AckFrame),
    /// A NACK frame.
    Nack(NackFrame),
}

/// One MC-DPL4R frame: `IdFrom`, `IdTo` (player indexes, MC-DPL4R 2.2.1) and the frame.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReliableFrame {
    /// `IdFrom`: the source's player index (the low 16 bits of the un-XORed ID, F-30).
    pub id_from: u16,
    /// `IdTo`: the destination's player index.
    pub id_to: u16,
    /// The frame.
    pub body: FrameBody,
}

fn bad_flags(flags: ReliableFlags, reason: &'static str) -> WireError {
    WireError::InvalidValue { field: "flags", offset: 0, value: flags.bits().into(), reason }
}

impl FrameBody {
    /// The `flags` byte.
    pub fn flags(&self) -> ReliableFlags {
        match self {
            Self::Data(d) => d.flags,
            Self::Ack(a) => a.flags,
            Self::Nack(n) => n.flags,
        }
    }

    /// Why `flags` cannot go with this frame type, if they cannot.
    fn flag_error(&self) -> Option<&'static str> {
        let f = self.flags();
        if f.contains(ReliableFlags::BIG) {
            return Some("BIG MUST be 0");
        }
        match self {
            Self::Data(_) if f.contains(ReliableFlags::ACK) => Some("ACK is never set on data frames"),
            Self::Data(_) if f.contains(ReliableFlags::CMD | ReliableFlags::EXT) => {
                Some("CMD with EXT: the frame MUST be ignored")
            }
            Self::Data(d) if f.contains(ReliableFlags::EXT) != d.nack.is_some() => {
                Some("EXT must match the presence of the extended flags")
            }
            Self::Ack(_) if !f.contains(ReliableFlags::ACK) || f.contains(ReliableFlags::EXT) => {
                Some("an ACK frame has ACK set and EXT clear")
            }
            Self::Nack(_) if !f.contains(ReliableFlags::ACK | ReliableFlags::EXT) => {
                Some("a NACK frame has ACK and EXT set")
            }
            _ => None,
        }
    }

    fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let at = r.pos();
        let flags = ReliableFlags::from_bits_retain(r.u8("flags")?);
        let located = |e: WireError| match e {
            WireError::InvalidValue { field, value, reason, .. } => {
                WireError::InvalidValue { field, offset: at, value, reason }
            }
            e => e,
        };
        let body = if !flags.contains(ReliableFlags::ACK) {
            if flags.contains(ReliableFlags::CMD | ReliableFlags::EXT) {
                return Err(located(bad_flags(flags, "CMD with EXT: the frame MUST be ignored")));
            }
            let message_id = r.u8("messageid")?;
            let sequence = r.u8("sequence")?;
            let serial = r.u8("serial")?;
            let nack = if flags.contains(ReliableFlags::EXT) {
                let len = NackMask::read_ext(r)?;
                Some(NackMask::read_mask(r, len)?)
            } else {
                None
            };
            Self::Data(DataFrame { flags, message_id, sequence, serial, nack, data: Blob::new(r.rest()) })
        } else if !flags.contains(ReliableFlags::EXT) {
            let frame = AckFrame {
                flags,
                message_id: r.u8("messageid")?,
                sequence: r.u8("sequence")?,
                serial: r.u8("serial")?,
                bytes_received: r.u32("bytes received")?,
                local_tick_count: r.u32("local tick count")?,
            };
            r.finish("local tick count")?;
            Self::Ack(frame)
        } else {
            let len = NackMask::read_ext(r)?;
            let message_id = r.u8("messageid")?;
            let sequence = r.u8("sequence")?;
            let bytes_received = r.u32("bytes received")?;
            let local_tick_count = r.u32("local tick count")?;
            let nack = NackMask::read_mask(r, len)?;
            r.finish("NACK MASK")?;
            Self::Nack(NackFrame { flags, message_id, sequence, bytes_received, local_tick_count, nack })
        };
        match body.flag_error() {
            Some(reason) => Err(located(bad_flags(flags, reason))),
            None => Ok(body),
        }
    }

    fn encoded_len(&self) -> usize {
        match self {
            Self::Data(d) => 4 + d.nack.map_or(0, |n| 1 + usize::from(n.len)) + d.data.len(),
            Self::Ack(_) => 12,
            Self::Nack(n) => 12 + usize::from(n.nack.len),
        }
    }

    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        if let Some(reason) = self.flag_error() {
            return Err(WireError::Unencodable { field: "flags", reason });
        }
        w.u8(self.flags().bits());
        match self {
            Self::Data(d) => {
                w.bytes(&[d.message_id, d.sequence, d.serial]);
                if let Some(nack) = d.nack {
                    nack.check()?;
                    w.u8(nack.ext_byte());
                    nack.write_mask(w);
                }
                w.bytes(&d.data);
            }
            Self::Ack(a) => {
                w.bytes(&[a.message_id, a.sequence, a.serial]);
                w.u32(a.bytes_received);
                w.u32(a.local_tick_count);
            }
            Self::Nack(n) => {
                n.nack.check()?;
                w.bytes(&[n.nack.ext_byte(), n.message_id, n.sequence]);
                w.u32(n.bytes_received);
                w.u32(n.local_tick_count);
                n.nack.write_mask(w);
            }
        }
        Ok(())
    }
}

impl Wire for ReliableFrame {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let id_from = read_player_index(&mut r, "IdFrom")?;
        let id_to = read_player_index(&mut r, "IdTo")?;
        Ok(Self { id_from, id_to, body: FrameBody::read(&mut r)? })
    }

    fn encoded_len(&self) -> usize {
        player_index_len(self.id_from) + player_index_len(self.id_to) + self.body.encoded_len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        write_player_index(&mut w, self.id_from);
        write_player_index(&mut w, self.id_to);
        self.body.write(&mut w)?;
        w.finish()
    }
}

#[cfg(test)]
mod tests;
