//! Large-message fragments: DPSP_MSG_PACKET (0x15), DPSP_MSG_PACKET2_DATA (0x30) and
//! DPSP_MSG_PACKET2_ACK (0x31) (MC-DPL4CS 2.2.39-2.2.41; INDEX D.16, E.5).
//!
//! These types are the message **bodies**: the bytes after the 28-byte DPSP_MSG_HEADER. The
//! header's Command tells PACKET from PACKET2_DATA, both of which carry a [`Fragment`];
//! [`crate::dp4::message::Dp4Message`] pairs a header with a body and is what goes on the wire.
//! Parsing a body never allocates more than the body's length.

use uuid::Uuid;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::codec::{Reader, Wire, Writer, len_u32};
use crate::{Blob, WireError};

/// Where PacketData starts, counted from the 'play' signature: the value written in
/// `PackedOffset`/`PacketOffset` (INDEX D.16; decision F-25).
pub const PACKET_DATA_OFFSET: u32 = 48;
/// Length of a fragment body before its PacketData (GuidMessage through PacketOffset).
pub const FRAGMENT_BODY_FIXED_LEN: usize = 40;
/// Length of a PACKET2_ACK body (GuidMessage, PacketID).
pub const PACKET_ACK_BODY_LEN: usize = 20;

/// GuidMessage through PacketOffset (MC-DPL4CS 2.2.39, 2.2.41).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawFragment {
    guid_message: [u8; 16],
    packet_index: U32,
    data_size: U32,
    offset: U32,
    total_packets: U32,
    message_size: U32,
    packet_offset: U32,
}
const _: () = assert!(size_of::<RawFragment>() == FRAGMENT_BODY_FIXED_LEN);

/// One fragment of a large message: the body of DPSP_MSG_PACKET (MC-DPL4CS 2.2.39) and of
/// DPSP_MSG_PACKET2_DATA (MC-DPL4CS 2.2.41).
///
/// `DataSize` is not stored: it is `data.len()`. On receipt PacketData is taken from right
/// after the fixed fields whatever `PackedOffset` says, and `DataSize` must equal the bytes left
/// in the message (decision F-25).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Fragment {
    /// `GuidMessage`: the same for every fragment of one message.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub guid_message: Uuid,
    /// `PacketIndex`: this fragment's number, 0-based (INDEX D.16, inferred).
    pub packet_index: u32,
    /// `Offset`: where this fragment goes in the reassembled message.
    pub offset: u32,
    /// `TotalPackets`: how many fragments make up the message.
    pub total_packets: u32,
    /// `MessageSize`: the size of the reassembled message.
    pub message_size: u32,
    /// `PackedOffset` (PACKET) / `PacketOffset` (PACKET2_DATA): kept as read so that it re-emits;
    /// senders write [`PACKET_DATA_OFFSET`] (decision F-25).
    pub packet_offset: u32,
    /// `PacketData`: `DataSize` bytes of the reassembled message.
    pub data: Blob,
}

impl Fragment {
    /// Reads a fragment body that runs to the end of the reader (the header's size bounds it).
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let start = r.pos();
        let raw = r.layout::<RawFragment>("DPSP_MSG_PACKET")?;
        let data_size = raw.data_size.get();
        if data_size as usize != r.remaining() {
            return Err(WireError::InvalidValue {
                field: "DataSize",
                offset: start + 20,
                value: data_size.into(),
                reason: "DataSize must equal the bytes after PacketOffset",
            });
        }
        Ok(Self {
            guid_message: Uuid::from_bytes_le(raw.guid_message),
            packet_index: raw.packet_index.get(),
            offset: raw.offset.get(),
            total_packets: raw.total_packets.get(),
            message_size: raw.message_size.get(),
            packet_offset: raw.packet_offset.get(),
            data: Blob::new(r.rest()),
        })
    }

    /// Writes the body; `w` must have room for [`Wire::encoded_len`] bytes.
    pub fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.layout(&RawFragment {
            guid_message: self.guid_message.to_bytes_le(),
            packet_index: self.packet_index.into(),
            data_size: len_u32("DataSize", self.data.len())?.into(),
            offset: self.offset.into(),
            total_packets: self.total_packets.into(),
            message_size: self.message_size.into(),
            packet_offset: self.packet_offset.into(),
        });
        w.bytes(&self.data);
        Ok(())
    }
}

impl Wire for Fragment {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        Self::read(&mut Reader::new(bytes))
    }

    fn encoded_len(&self) -> usize {
        FRAGMENT_BODY_FIXED_LEN + self.data.len()
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, self.encoded_len())?;
        self.write(&mut w)?;
        w.finish()
    }
}

/// The body of DPSP_MSG_PACKET2_ACK: acknowledges one PACKET2_DATA (MC-DPL4CS 2.2.40).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct PacketAck {
    /// `GuidMessage`: the acknowledged fragment's message.
    #[serde(serialize_with = "crate::guid::serialize")]
    pub guid_message: Uuid,
    /// `PacketID`: the acknowledged fragment's `PacketIndex` (INDEX D.16, inferred).
    pub packet_id: u32,
}

impl PacketAck {
    /// Reads the 20-byte body.
    pub fn read(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { guid_message: r.guid("GuidMessage")?, packet_id: r.u32("PacketID")? })
    }

    /// Writes the 20-byte body.
    pub fn write(&self, w: &mut Writer<'_>) {
        w.guid(&self.guid_message);
        w.u32(self.packet_id);
    }
}

impl Wire for PacketAck {
    fn parse(bytes: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader::new(bytes);
        let ack = Self::read(&mut r)?;
        r.finish("PacketID")?;
        Ok(ack)
    }

    fn encoded_len(&self) -> usize {
        PACKET_ACK_BODY_LEN
    }

    fn emit(&self, buf: &mut [u8]) -> Result<usize, WireError> {
        let mut w = Writer::new(buf, PACKET_ACK_BODY_LEN)?;
        self.write(&mut w);
        w.finish()
    }
}

#[cfg(test)]
pub(crate) mod tests;
