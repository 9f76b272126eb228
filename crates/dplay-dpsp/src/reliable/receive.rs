//! The receiving half of a link: the sequence window, reassembly, ordered and unordered
//! delivery, and what to answer (MC-DPL4R 3.1.5.2, 3.1.5.4, 3.1.3).

use std::collections::VecDeque;
use std::time::Instant;

use dplay_wire::dp4::reliable::{AckFrame, DataFrame, FrameBody, NackFrame, NackMask, ReliableFlags};

use super::Config;
use super::config::{MAX_OUTSTANDING_MESSAGES, RECEIVE_WINDOW};
use super::event::DropReason;

/// A data frame held ahead of the in-order point.
#[derive(Debug)]
struct Slot {
    msg_id: u8,
    flags: ReliableFlags,
    serial: u8,
    data: Vec<u8>,
    /// Its message was already handed up out of order.
    delivered: bool,
}

/// The message being put together at the in-order point.
#[derive(Debug)]
struct Assembly {
    msg_id: u8,
    reliable: bool,
    data: Vec<u8>,
    delivered: bool,
    /// Over the size limit: its frames are consumed and forgotten.
    discard: bool,
}

/// A whole message for the layer above.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Delivery {
    pub(crate) msg_id: u8,
    pub(crate) reliable: bool,
    pub(crate) data: Vec<u8>,
}

/// What handling one data frame produced.
#[derive(Debug, Default)]
pub(crate) struct Received {
    pub(crate) deliveries: Vec<Delivery>,
    pub(crate) drops: Vec<DropReason>,
    /// An ACK or NACK must go now (SAK, end of message, a duplicate, a gap; 3.1.5.2).
    pub(crate) answer_now: bool,
}

/// One link's receiver.
#[derive(Debug)]
pub(crate) struct Receiver {
    /// The last sequence received in order; 0 before any, since the first is 1 (3.1.3).
    cum: u8,
    cum_msg_id: u8,
    cum_serial: u8,
    any: bool,
    /// Slot i holds sequence `cum + 1 + i`.
    slots: VecDeque<Option<Slot>>,
    assembly: Option<Assembly>,
    /// The messageid of the message at the in-order point, once one was seen (3.1.5.2: the
    /// earliest ongoing receive).
    expected_msg: Option<u8>,
    /// Bytes received, duplicates included, player indexes excluded (3.1.5.4).
    pub(crate) bytes_received: u32,
    pub(crate) ack_deadline: Option<Instant>,
    last_nack: Option<Instant>,
}

impl Receiver {
    pub(crate) fn new() -> Self {
        Self {
            cum: 0,
            cum_msg_id: 0,
            cum_serial: 0,
            any: false,
            slots: VecDeque::new(),
            assembly: None,
            expected_msg: None,
            bytes_received: 0,
            ack_deadline: None,
            last_nack: None,
        }
    }

    /// Bytes held for frames and the message being assembled.
    pub(crate) fn bytes_held(&self) -> usize {
        let slots: usize = self.slots.iter().flatten().map(|s| s.data.len()).sum();
        slots + self.assembly.as_ref().map_or(0, |a| a.data.len())
    }

    /// A data frame of `len` bytes after the player indexes (MC-DPL4R 3.1.5.2, 3.1.5.4).
    pub(crate) fn on_data(
        &mut self,
        config: &Config,
        now: Instant,
        frame: &DataFrame,
        len: usize,
    ) -> Received {
        let mut r = Received::default();
        self.bytes_received = self.bytes_received.wrapping_add(u32::try_from(len).unwrap_or(u32::MAX));
        let d = frame.sequence.wrapping_sub(self.cum);
        if d == 0 || d > RECEIVE_WINDOW {
            // Received before: its ACK may have been lost, so answer (3.1.5.2 exception).
            r.drops.push(DropReason::Duplicate);
            r.answer_now = true;
            return r;
        }
        if self.expected_msg.is_some_and(|e| frame.message_id.wrapping_sub(e) >= MAX_OUTSTANDING_MESSAGES) {
            r.drops.push(DropReason::OutOfWindow);
            return r;
        }
        let i = usize::from(d - 1);
        if self.slots.len() <= i {
            self.slots.resize_with(i + 1, || None);
        }
        let Some(slot) = self.slots.get_mut(i) else { return r };
        if slot.is_some() {
            r.drops.push(DropReason::Duplicate);
            r.answer_now = true;
            return r;
        }
        *slot = Some(Slot {
            msg_id: frame.message_id,
            flags: frame.flags,
            serial: frame.serial,
            data: frame.data.0.clone(),
            delivered: false,
        });
        r.answer_now = frame.flags.contains(ReliableFlags::SAK);
        self.deliver_early(config, i, &mut r);
        self.consume(config, &mut r);
        // A gap is answered by a NACK at once (6 <7>) unless one just went; anything else
        // not asked for now waits for the delayed-ACK timer (3.1.3).
        let nack_allowed =
            self.last_nack.is_none_or(|t| now.saturating_duration_since(t) >= config.nack_interval);
        if self.has_gap() && nack_allowed {
            r.answer_now = true;
        }
        if !r.answer_now && self.ack_deadline.is_none() {
            self.ack_deadline = now.checked_add(config.ack_delay);
        }
        r
    }

    /// Whether a frame is missing before one that arrived.
    fn has_gap(&self) -> bool {
        matches!(self.slots.front(), Some(None))
    }

    /// Hands up, before the in-order point reaches it, a message whose frames are all held
    /// and that need not wait for order: an unreliable one, or any on an unordered link.
    fn deliver_early(&mut self, config: &Config, i: usize, r: &mut Received) {
        let Some(Some(at)) = self.slots.get(i) else { return };
        let (msg_id, reliable) = (at.msg_id, at.flags.contains(ReliableFlags::RLY));
        if config.ordered && reliable {
            return;
        }
        let mut start = i;
        loop {
            let Some(s) = self.member(start, msg_id) else { return };
            if s.flags.contains(ReliableFlags::STA) {
                break;
            }
            let Some(prev) = start.checked_sub(1) else { return };
            start = prev;
        }
        let mut end = i;
        loop {
            let Some(s) = self.member(end, msg_id) else { return };
            if s.flags.contains(ReliableFlags::EOM) {
                break;
            }
            end += 1;
        }
        let size: usize = self.slots.range(start..=end).flatten().map(|s| s.data.len()).sum();
        if size > config.limits.max_message_size {
            return;
        }
        let mut data = Vec::with_capacity(size);
        for s in self.slots.range_mut(start..=end).flatten() {
            data.append(&mut s.data);
            s.delivered = true;
        }
        r.deliveries.push(Delivery { msg_id, reliable, data });
    }

    /// The frame in slot `i` if it belongs to message `msg_id` and was not handed up.
    fn member(&self, i: usize, msg_id: u8) -> Option<&Slot> {
        self.slots.get(i)?.as_ref().filter(|s| s.msg_id == msg_id && !s.delivered)
    }

    /// Moves the in-order point over every held frame, assembling and handing up messages
    /// (3.1.5.2: STA, the contiguous frames, EOM).
    fn consume(&mut self, config: &Config, r: &mut Received) {
        while let Some(Some(_)) = self.slots.front() {
            let Some(Some(s)) = self.slots.pop_front() else { break };
            self.cum = self.cum.wrapping_add(1);
            (self.cum_msg_id, self.cum_serial, self.any) = (s.msg_id, s.serial, true);
            if s.flags.contains(ReliableFlags::STA) {
                if self.assembly.is_some() {
                    r.drops.push(DropReason::Inconsistent);
                }
                self.assembly = Some(Assembly {
                    msg_id: s.msg_id,
                    reliable: s.flags.contains(ReliableFlags::RLY),
                    data: Vec::new(),
                    delivered: s.delivered,
                    discard: false,
                });
            }
            let Some(a) = self.assembly.as_mut().filter(|a| a.msg_id == s.msg_id) else {
                r.drops.push(DropReason::Inconsistent);
                self.assembly = None;
                continue;
            };
            if !a.delivered && !a.discard {
                if a.data.len().saturating_add(s.data.len()) > config.limits.max_message_size {
                    r.drops.push(DropReason::TooLarge);
                    a.discard = true;
                    a.data = Vec::new();
                } else {
                    a.data.extend_from_slice(&s.data);
                }
            }
            self.expected_msg = Some(s.msg_id);
            if s.flags.contains(ReliableFlags::EOM) {
                if let Some(a) = self.assembly.take().filter(|a| !a.delivered && !a.discard) {
                    r.deliveries.push(Delivery { msg_id: a.msg_id, reliable: a.reliable, data: a.data });
                }
                self.expected_msg = Some(s.msg_id.wrapping_add(1));
                // The end of a message is acknowledged at once (3.1.3, 3.1.5.2).
                r.answer_now = true;
            }
        }
    }

    /// The answer for now: a NACK while a frame is missing, else an ACK of the in-order point
    /// (MC-DPL4R 2.2.3, 2.2.4), or nothing before any frame arrived.
    pub(crate) fn answer(&mut self, now: Instant, tick: u32) -> Option<FrameBody> {
        self.ack_deadline = None;
        if self.has_gap() {
            self.last_nack = Some(now);
            let mut bits = 0u32;
            let last = self.slots.iter().rposition(Option::is_some).unwrap_or(0);
            for (k, s) in self.slots.iter().enumerate().take(last.min(24) + 1).skip(1) {
                if s.is_none() {
                    bits |= 1 << (k - 1);
                }
            }
            let len = u8::try_from((32 - bits.leading_zeros()).div_ceil(8)).unwrap_or(3);
            return Some(FrameBody::Nack(NackFrame {
                flags: ReliableFlags::ACK | ReliableFlags::EXT,
                message_id: self.expected_msg.unwrap_or(self.cum_msg_id),
                sequence: self.cum.wrapping_add(1),
                bytes_received: self.bytes_received,
                local_tick_count: tick,
                nack: NackMask { len, bits },
            }));
        }
        self.any.then_some(FrameBody::Ack(AckFrame {
            flags: ReliableFlags::ACK,
            message_id: self.cum_msg_id,
            sequence: self.cum,
            serial: self.cum_serial,
            bytes_received: self.bytes_received,
            local_tick_count: tick,
        }))
    }
}
