//! Sending: cutting a message into fragments, and the PACKET2_DATA stop-and-wait with its
//! Packetize timer (MC-DPL4CS 3.1.4.18, 3.1.5.29, 3.1.2.4, 3.1.6.1).

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::Blob;
use dplay_wire::budget::{Charge, MemoryBudget};
use dplay_wire::dp4::fragment::{Fragment, PACKET_DATA_OFFSET, PacketAck};
use uuid::Uuid;

use crate::event::{AbortReason, DropReason, Event};
use crate::timer::{MessageKey, Timer, later};
use crate::{Config, DpspMessage, Io, Reliability};

/// Why [`crate::Dpsp::send`] or [`split_message`] refused a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendError {
    /// There is nothing to send.
    #[error("the message is empty")]
    Empty,
    /// The message is above `Limits::max_message_size`.
    #[error("the message is {size} bytes, above the {max}-byte limit")]
    TooLarge {
        /// The message's length.
        size: usize,
        /// The limit.
        max: u32,
    },
    /// No data fits in a fragment.
    #[error("fragments must carry at least one data byte")]
    NoRoom,
}

/// How a message is cut: `TotalPackets` fragments of `data_len` bytes, the last one shorter.
#[derive(Debug, Clone, Copy)]
struct Plan {
    guid: Uuid,
    message_size: u32,
    data_len: u32,
    total_packets: u32,
}

impl Plan {
    fn new(guid: Uuid, message: &[u8], data_len: usize, max: u32) -> Result<Self, SendError> {
        if message.is_empty() {
            return Err(SendError::Empty);
        }
        let message_size = u32::try_from(message.len())
            .ok()
            .filter(|&n| n <= max)
            .ok_or(SendError::TooLarge { size: message.len(), max })?;
        // A fragment never carries more than the message, so the clamp keeps it in u32.
        let data_len = u32::try_from(data_len.min(message.len())).unwrap_or(message_size);
        if data_len == 0 {
            return Err(SendError::NoRoom);
        }
        Ok(Self { guid, message_size, data_len, total_packets: message_size.div_ceil(data_len) })
    }

    /// Fragment `index`: `Offset` = index × data_len, `PacketOffset` = 48 (decision F-25).
    fn fragment(&self, message: &[u8], index: u32) -> Option<Fragment> {
        let offset = index.checked_mul(self.data_len).filter(|&o| o < self.message_size)?;
        let end = offset.saturating_add(self.data_len).min(self.message_size);
        let data = message.get(offset as usize..end as usize)?;
        Some(Fragment {
            guid_message: self.guid,
            packet_index: index,
            offset,
            total_packets: self.total_packets,
            message_size: self.message_size,
            packet_offset: PACKET_DATA_OFFSET,
            data: Blob::new(data),
        })
    }
}

/// Cuts `message` into fragments of at most `data_len` data bytes, all carrying `guid`
/// (MC-DPL4CS 3.1.4.18; field values as 2.2.39 and 2.2.41 define them).
///
/// Fragment i has `PacketIndex` i, `Offset` i × `data_len`, `DataSize` its data length,
/// `TotalPackets` and `MessageSize` of the whole message, and `PacketOffset` 48, where
/// PacketData starts counted from the 'play' signature (decision F-25). Concatenating the
/// PacketData in index order gives `message` back.
pub fn split_message(
    guid: Uuid,
    message: &[u8],
    data_len: usize,
) -> Result<impl Iterator<Item = Fragment> + '_, SendError> {
    let plan = Plan::new(guid, message, data_len, u32::MAX)?;
    Ok((0..plan.total_packets).filter_map(move |i| plan.fragment(message, i)))
}

/// A reliable message being sent, one PACKET2_DATA at a time.
#[derive(Debug)]
struct Outgoing {
    message: Vec<u8>,
    plan: Plan,
    /// `PacketIndex` of the fragment in flight.
    current: u32,
    /// Sends of the current fragment.
    sends: u32,
    first_send: Instant,
    last_send: Instant,
    /// The Packetize timer's value: 900 ms, then 1.5 × the last round trip (3.1.2.4).
    timeout: Duration,
}

/// Every reliable message in flight, by receiver and `GuidMessage`.
#[derive(Debug)]
pub(crate) struct Sender {
    outgoing: BTreeMap<MessageKey, Outgoing>,
    /// The bytes of the messages in `outgoing`, charged to the host's memory budget as held
    /// (docs/limits.md): each is kept until acknowledged or given up (MC-DPL4CS 3.1.6.1).
    charge: Charge,
}

impl Default for Sender {
    fn default() -> Self {
        Self { outgoing: BTreeMap::new(), charge: MemoryBudget::unlimited().account() }
    }
}

impl Sender {
    /// Charges the messages in flight to `charge` from now on.
    pub(crate) fn set_charge(&mut self, mut charge: Charge) {
        charge.set_held(self.charge.bytes());
        self.charge = charge;
    }

    /// Bytes of the reliable messages in flight.
    pub(crate) fn bytes_held(&self) -> usize {
        self.charge.bytes()
    }

    /// Forgets the message `key`, releasing its charge.
    fn remove(&mut self, key: &MessageKey) {
        if let Some(out) = self.outgoing.remove(key) {
            self.charge.shrink(out.message.len());
        }
    }

    /// Starts sending `message`: every PACKET at once, or the first PACKET2_DATA with the
    /// Packetize timer (MC-DPL4CS 3.1.4.18).
    pub(crate) fn send(
        &mut self,
        io: &mut Io,
        config: &Config,
        now: Instant,
        key: MessageKey,
        message: &[u8],
        reliability: Reliability,
    ) -> Result<(), SendError> {
        let MessageKey { peer: to, guid } = key;
        let plan = Plan::new(guid, message, config.fragment_data_len(), config.limits.max_message_size)?;
        io.stats.messages_sent += 1;
        match reliability {
            Reliability::Unreliable => {
                for fragment in (0..plan.total_packets).filter_map(|i| plan.fragment(message, i)) {
                    io.stats.fragments_sent += 1;
                    io.transmit(config, to, DpspMessage::Packet(fragment));
                }
            }
            Reliability::Reliable => {
                let out = Outgoing {
                    message: message.to_vec(),
                    plan,
                    current: 0,
                    sends: 0,
                    first_send: now,
                    last_send: now,
                    timeout: config.packetize_initial,
                };
                // Counted as held, never refused: the Packetize give-up bounds how long
                // (MC-DPL4CS 3.1.6.1), as MC-DPL4R's send side counts what is queued.
                self.charge.set_held(self.charge.bytes().saturating_add(message.len()));
                if let Some(old) = self.outgoing.insert(key, out) {
                    self.charge.shrink(old.message.len());
                }
                self.transmit_current(io, config, now, key);
            }
        }
        Ok(())
    }

    /// A PACKET2_ACK: on the first ACK of the fragment in flight, measure the round trip, send
    /// the next fragment or finish (MC-DPL4CS 3.1.5.29).
    pub(crate) fn handle_ack(
        &mut self,
        io: &mut Io,
        config: &Config,
        now: Instant,
        from: SocketAddr,
        ack: &PacketAck,
    ) {
        io.stats.acks_received += 1;
        let key = MessageKey { peer: from, guid: ack.guid_message };
        let Some(out) = self.outgoing.get_mut(&key) else {
            io.stats.drop(DropReason::UnknownAck);
            return;
        };
        if ack.packet_id < out.current {
            io.stats.drop(DropReason::RepeatedAck);
            return;
        }
        if ack.packet_id > out.current {
            io.stats.drop(DropReason::UnknownAck);
            return;
        }
        // Karn's rule: a fragment sent more than once gives no trustworthy sample.
        if out.sends == 1 {
            let rtt = now.saturating_duration_since(out.last_send).max(config.packetize_rtt_floor);
            out.timeout = rtt.saturating_mul(3) / 2;
        }
        out.current += 1;
        if out.current >= out.plan.total_packets {
            self.remove(&key);
            io.timers.cancel(Timer::Packetize, key);
            io.stats.sends_completed += 1;
            io.events.push_back(Event::SendComplete { to: from, guid: ack.guid_message });
        } else {
            out.sends = 0;
            self.transmit_current(io, config, now, key);
        }
    }

    /// The Packetize timer of `key` expired: resend, or give up after `give_up_sends` sends
    /// and `give_up_after` since the first (MC-DPL4CS 3.1.6.1).
    pub(crate) fn handle_timer(&mut self, io: &mut Io, config: &Config, now: Instant, key: MessageKey) {
        let Some(out) = self.outgoing.get(&key) else { return };
        let elapsed = now.saturating_duration_since(out.first_send);
        if out.sends >= config.give_up_sends && elapsed >= config.give_up_after {
            let reason = AbortReason::GaveUp { packet_index: out.current, sends: out.sends, elapsed };
            self.remove(&key);
            io.stats.sends_aborted += 1;
            io.events.push_back(Event::SendAborted { to: key.peer, guid: key.guid, reason });
            return;
        }
        io.stats.fragments_resent += 1;
        self.transmit_current(io, config, now, key);
    }

    /// Aborts every message to `peer`.
    pub(crate) fn forget_peer(&mut self, io: &mut Io, peer: SocketAddr) {
        let keys: Vec<MessageKey> = self.outgoing.keys().filter(|k| k.peer == peer).copied().collect();
        for key in keys {
            self.remove(&key);
            io.timers.cancel(Timer::Packetize, key);
            io.stats.sends_aborted += 1;
            io.events.push_back(Event::SendAborted {
                to: peer,
                guid: key.guid,
                reason: AbortReason::PeerForgotten,
            });
        }
    }

    /// Reliable messages in flight.
    pub(crate) fn len(&self) -> usize {
        self.outgoing.len()
    }

    fn transmit_current(&mut self, io: &mut Io, config: &Config, now: Instant, key: MessageKey) {
        let Some(out) = self.outgoing.get_mut(&key) else { return };
        let Some(fragment) = out.plan.fragment(&out.message, out.current) else { return };
        if out.sends == 0 {
            out.first_send = now;
        }
        out.sends = out.sends.saturating_add(1);
        out.last_send = now;
        io.timers.set(Timer::Packetize, key, later(now, out.timeout));
        io.stats.fragments_sent += 1;
        io.transmit(config, key.peer, DpspMessage::Packet2Data(fragment));
    }
}
