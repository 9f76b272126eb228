//! Player traffic and routing: PING, PINGREPLY, CHAT, VOICE, PLAYERWRAPPER, ASK4MULTICAST,
//! ASK4MULTICASTGUARANTEED and MULTICASTDELIVERY (MC-DPL4CS 2.2.14, 2.2.15, 2.2.19, 2.2.37,
//! 2.2.42, 2.2.43, 2.2.47, 2.2.54).

use bitflags::bitflags;

use crate::codec::{Reader, Writer};
use crate::dp4::fields::{BODY_START, Body, off, place, reader_at, wide_at, wide_len, write_wide};
use crate::{Blob, WideString, WireError};

bitflags! {
    /// CHAT `Flags` (MC-DPL4CS 2.2.19). Unknown bits are kept.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
    pub struct ChatFlags: u32 {
        /// GS: sent guaranteed.
        const GUARANTEED = 0x1;
        const _ = !0;
    }
}

/// PING (0x16) and PINGREPLY (0x17): keep-alive; the reply echoes the ping's `TickCount`
/// (MC-DPL4CS 2.2.42, 2.2.43).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Ping {
    /// `IDFrom`: who sent the ping (in a reply too).
    pub id_from: u32,
    /// `TickCount`: the pinger's milliseconds since boot.
    pub tick_count: u32,
}

impl Body for Ping {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_from = r.u32("IDFrom")?;
        let tick_count = r.u32("TickCount")?;
        r.finish("TickCount")?;
        Ok(Self { id_from, tick_count })
    }
    fn len(&self) -> usize {
        8
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_from);
        w.u32(self.tick_count);
        Ok(())
    }
}

/// DPSP_MSG_CHAT (0x2D): a text message between players; sent with the short header
/// (MC-DPL4CS 2.2.19; INDEX D.15).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Chat {
    /// `IDFrom`.
    pub id_from: u32,
    /// `IDTo`: a player or group.
    pub id_to: u32,
    /// `Flags`.
    pub flags: ChatFlags,
    /// `ChatMessage`, at `MessageOffset` (0: a NULL message).
    pub chat_message: Option<WideString>,
}

impl Body for Chat {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_from = r.u32("IDFrom")?;
        let id_to = r.u32("IDTo")?;
        let flags = ChatFlags::from_bits_retain(r.u32("Flags")?);
        let offset = r.u32("MessageOffset")?;
        let chat_message = wide_at(msg, "ChatMessage", offset)?.map(|(s, _)| s);
        Ok(Self { id_from, id_to, flags, chat_message })
    }
    fn len(&self) -> usize {
        16 + wide_len(&self.chat_message).unwrap_or(0)
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_from);
        w.u32(self.id_to);
        w.u32(self.flags.bits());
        w.u32(place(&mut (BODY_START + 16), wide_len(&self.chat_message)));
        write_wide(w, &self.chat_message);
        Ok(())
    }
}

/// DPSP_MSG_VOICE (0x36): one DirectPlay Voice message between players (MC-DPL4CS 2.2.54;
/// MC-DPLVP 2.1). `dwIDFrom` is the sender's DVID (MC-DPLVP 3.1.5.1.3 <1>).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Voice {
    /// `dwIDFrom`.
    pub id_from: u32,
    /// `dwIDTo`.
    pub id_to: u32,
    /// `voiceData`: the rest of the message, one voice message.
    pub message: crate::voice::VoiceMessage,
}

impl Body for Voice {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let id_from = r.u32("dwIDFrom")?;
        let id_to = r.u32("dwIDTo")?;
        Ok(Self { id_from, id_to, message: crate::Wire::parse(r.rest())? })
    }
    fn len(&self) -> usize {
        8 + crate::Wire::encoded_len(&self.message)
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.id_from);
        w.u32(self.id_to);
        w.bytes(&crate::Wire::to_vec(&self.message)?);
        Ok(())
    }
}

/// DPSP_MSG_PLAYERWRAPPER (0x19): a player message whose bytes would look like a system
/// message, wrapped (MC-DPL4CS 2.2.47, 3.1.4.16.2). Decode the content with
/// `PlayerWrapper::inner` (stream form) or `PlayerWrapper::inner_datagram` (datagram form).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PlayerWrapper {
    /// `PlayerMessage`: the enclosed DPSP_MSG_PLAYERMESSAGE, to the end of the message.
    pub player_message: Blob,
}

impl Body for PlayerWrapper {
    fn read(_: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Self { player_message: Blob::new(r.rest()) })
    }
    fn len(&self) -> usize {
        self.player_message.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.bytes(&self.player_message);
        Ok(())
    }
}

/// ASK4MULTICAST (0x25), ASK4MULTICASTGUARANTEED (0x26) and MULTICASTDELIVERY (0x37): a
/// short-form DP4 message routed through the multicast server (MC-DPL4CS 2.2.14, 2.2.15,
/// 2.2.37). The message runs from `MessageOffset` to the end; decode it with
/// [`crate::dp4::message::ShortMessage`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Multicast {
    /// `GroupTo` / `GroupIDTo`: the target group.
    pub group_to: u32,
    /// `PlayerFrom` / `PlayerIDFrom`: the originating player.
    pub player_from: u32,
    /// `MulticastMessage` / `BroadcastMessage`: from its signature on.
    pub message: Blob,
}

impl Body for Multicast {
    fn read(msg: &[u8], r: &mut Reader<'_>) -> Result<Self, WireError> {
        let group_to = r.u32("GroupTo")?;
        let player_from = r.u32("PlayerFrom")?;
        let offset = r.u32("MessageOffset")?;
        let message = Blob::new(reader_at(msg, "MessageOffset", offset)?.rest());
        Ok(Self { group_to, player_from, message })
    }
    fn len(&self) -> usize {
        12 + self.message.len()
    }
    fn write(&self, w: &mut Writer<'_>) -> Result<(), WireError> {
        w.u32(self.group_to);
        w.u32(self.player_from);
        w.u32(off(BODY_START + 12));
        w.bytes(&self.message);
        Ok(())
    }
}
