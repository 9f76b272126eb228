//! The receiving half of a link: the sequence window, reassembly, ordered and unordered
//! delivery, the "+24" discard of stale unreliable messages, and what to answer (MC-DPL4R
//! 3.1.5.2, 3.1.5.4, 3.1.3).

use std::collections::VecDeque;
use std::time::Instant;

use dplay_wire::dp4::reliable::{AckFrame, DataFrame, FrameBody, ReliableFlags};

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
    /// An ACK must go now (SAK, end of message, a duplicate; 3.1.5.2).
    pub(crate) answer_now: bool,
    /// An ACK naming one message besides the in-order point's: a frame behind the in-order
    /// point came again (3.1.5.2 exception), or a message is held whole beyond a missing
    /// frame. For a sender that frees only the message an ACK names (3.1.5.3 "MAY" discard
    /// earlier ones, which Windows does not, 6).
    pub(crate) again: Option<FrameBody>,
}

/// One link's receiver.
#[derive(Debug)]
pub(crate) struct Receiver {
    /// The last sequence received in order. The first frame received sets it to the sequence
    /// before its own (3.1.5.2: the first messageid received becomes the first ongoing
    /// receive), so a peer numbering from 0 (the 4.1 examples) or 1 (3.1.3) is followed.
    cum: u8,
    cum_msg_id: u8,
    cum_serial: u8,
    any: bool,
    /// A data frame was received, so `cum` follows the peer's numbering.
    started: bool,
    /// The numbering was taken to start at 1 without seeing sequence 1 first.
    base_guessed: bool,
    /// The newest messageid seen: a message 24 or more before it can no longer be outstanding
    /// at the sender (2.2.2), so if still incomplete it was unreliable and is discarded
    /// (3.1.5.2 "+24").
    newest_msg: u8,
    /// Slot i holds sequence `cum + 1 + i`.
    slots: VecDeque<Option<Slot>>,
    assembly: Option<Assembly>,
    /// The messageid of the message at the in-order point, once one was seen (3.1.5.2: the
    /// earliest ongoing receive).
    expected_msg: Option<u8>,
    /// Bytes received, duplicates included, player indexes excluded (3.1.5.4).
    pub(crate) bytes_received: u32,
    pub(crate) ack_deadline: Option<Instant>,
}

impl Receiver {
    pub(crate) fn new() -> Self {
        Self {
            cum: 0,
            cum_msg_id: 0,
            cum_serial: 0,
            any: false,
            started: false,
            base_guessed: false,
            newest_msg: 0,
            slots: VecDeque::new(),
            assembly: None,
            expected_msg: None,
            bytes_received: 0,
            ack_deadline: None,
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
        if !self.started {
            self.start(frame);
        } else if self.base_guessed && !self.any && self.cum == 0 && frame.sequence == 0 {
            // The peer numbers from 0 after all (4.1) and its first frame came late: make room.
            self.cum = u8::MAX;
            self.expected_msg = Some(0);
            self.slots.push_front(None);
            self.base_guessed = false;
        }
        let d = frame.sequence.wrapping_sub(self.cum);
        if self.base_guessed && frame.sequence == 0 && d > RECEIVE_WINDOW {
            // A peer numbering from 0 whose first frame came after we had started from 1:
            // handed up late rather than lost, when it is a whole message.
            self.base_guessed = false;
            let whole = ReliableFlags::STA | ReliableFlags::EOM;
            if frame.flags.contains(whole) {
                let reliable = frame.flags.contains(ReliableFlags::RLY);
                r.deliveries.push(Delivery {
                    msg_id: frame.message_id,
                    reliable,
                    data: frame.data.0.clone(),
                });
            }
        }
        if d == 0 || d > RECEIVE_WINDOW {
            // Received before: its ACK may have been lost, so answer (3.1.5.2 exception).
            r.drops.push(DropReason::Duplicate);
            r.answer_now = true;
            if d != 0 {
                r.again = Some(self.ack_body(frame.message_id, frame.sequence, frame.serial, 0));
            }
            return r;
        }
        let ahead = self.expected_msg.map_or(0, |e| frame.message_id.wrapping_sub(e));
        if ahead >= RECEIVE_WINDOW {
            // Behind the earliest ongoing receive, or absurdly far ahead (3.1.5.2: ignored).
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
            r.again = self.named_ack(frame);
            return r;
        }
        *slot = Some(Slot {
            msg_id: frame.message_id,
            flags: frame.flags,
            serial: frame.serial,
            data: frame.data.0.clone(),
            delivered: false,
        });
        if ahead > self.ahead(self.newest_msg) {
            self.newest_msg = frame.message_id;
        }
        r.answer_now = frame.flags.contains(ReliableFlags::SAK);
        self.deliver_early(config, i, &mut r);
        self.consume(config, &mut r);
        while self.skip_stale_hole(&mut r) {
            self.consume(config, &mut r);
        }
        if r.again.is_none() {
            r.again = self.named_ack(frame).or_else(|| self.passed_ack(frame));
        }
        // Anything not asked for now waits for the delayed-ACK timer (3.1.3). A gap is not
        // answered: Windows has no NACK (6 <2>), and our ACK names the in-order point.
        if !r.answer_now && self.ack_deadline.is_none() {
            self.ack_deadline = now.checked_add(config.ack_delay);
        }
        r
    }

    /// The numbering, from the first data frame received (3.1.5.2: "If there are no ongoing
    /// receives or completed receives, then this messageid MUST become the first ongoing
    /// receive"). A first frame numbered 0 starts there (the 4.1 examples); one numbered 1 to
    /// 24 is taken to follow frames from 1 (3.1.3), which may have been lost and will be
    /// resent; any other, from a link opened while the peer was already sending, starts at
    /// itself. Should a frame numbered 0 come later after all, it is taken in (before anything
    /// was handed up) or handed up late (docs/decisions.md).
    fn start(&mut self, frame: &DataFrame) {
        self.started = true;
        let (seq, msg) = (frame.sequence, frame.message_id);
        let from_one = (1..=MAX_OUTSTANDING_MESSAGES).contains(&seq) && msg <= seq;
        self.base_guessed = from_one;
        (self.cum, self.expected_msg) =
            if from_one { (0, Some(1)) } else { (seq.wrapping_sub(1), Some(msg)) };
        self.newest_msg = msg;
    }

    /// Whether message `msg_id` lies 24 or more messageids before the newest one seen: no
    /// longer outstanding at the sender, which may have only 24 (2.2.2).
    fn is_stale(&self, msg_id: u8) -> bool {
        let ahead = self.ahead(msg_id);
        ahead < RECEIVE_WINDOW
            && ahead.saturating_add(MAX_OUTSTANDING_MESSAGES) <= self.ahead(self.newest_msg)
    }

    /// How far `msg_id` lies after the message at the in-order point; 0 for one before it.
    fn ahead(&self, msg_id: u8) -> u8 {
        let ahead = self.expected_msg.map_or(0, |e| msg_id.wrapping_sub(e));
        if ahead >= RECEIVE_WINDOW { 0 } else { ahead }
    }

    /// MC-DPL4R 3.1.5.2 "+24": moves the in-order point over missing frames that can only
    /// belong to stale messages, which the sender will never send again (Windows never resends
    /// unreliable frames, 6 <2>), discarding the incomplete message they belonged to. The
    /// missing frames belong to messages from the one at the in-order point up to the next held
    /// frame's (or the one before it, when that frame starts a message); all of those must be
    /// stale. Returns whether it moved.
    fn skip_stale_hole(&mut self, r: &mut Received) -> bool {
        let Some(j) = self.slots.iter().position(Option::is_some) else { return false };
        let Some(Some(next)) = self.slots.get(j) else { return false };
        let last_missing =
            if next.flags.contains(ReliableFlags::STA) { next.msg_id.wrapping_sub(1) } else { next.msg_id };
        let (next_msg, next_sta) = (next.msg_id, next.flags.contains(ReliableFlags::STA));
        if j == 0 || !self.is_stale(last_missing) {
            return false;
        }
        self.slots.drain(..j);
        self.cum = self.cum.wrapping_add(u8::try_from(j).unwrap_or(u8::MAX));
        self.cum_msg_id = last_missing;
        self.cum_serial = 0;
        let partial = self.assembly.take().filter(|a| !a.delivered && !a.discard).map(|a| a.msg_id);
        if partial.is_some() {
            r.drops.push(DropReason::Abandoned);
        }
        if !next_sta {
            // The rest of a stale message whose start was lost: its frames are passed over.
            if partial != Some(next_msg) {
                r.drops.push(DropReason::Abandoned);
            }
            while let Some(Some(s)) = self.slots.front() {
                if s.msg_id != next_msg {
                    break;
                }
                let eom = s.flags.contains(ReliableFlags::EOM);
                (self.cum_msg_id, self.cum_serial) = (s.msg_id, s.serial);
                self.slots.pop_front();
                self.cum = self.cum.wrapping_add(1);
                if eom {
                    break;
                }
            }
        }
        self.expected_msg = Some(if next_sta { next_msg } else { next_msg.wrapping_add(1) });
        self.any = true;
        r.answer_now = true;
        true
    }

    /// Hands up, before the in-order point reaches it, a message whose frames are all held
    /// and that need not wait for order: an unreliable one, or any on an unordered link.
    fn deliver_early(&mut self, config: &Config, i: usize, r: &mut Received) {
        let Some(Some(at)) = self.slots.get(i) else { return };
        let (msg_id, reliable) = (at.msg_id, at.flags.contains(ReliableFlags::RLY));
        if config.ordered && reliable {
            return;
        }
        let Some((start, end)) = self.whole_span(i, false) else { return };
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

    /// The slots from STA to EOM of the message whose frame is in slot `i`, when all are held
    /// (and not handed up, unless `delivered_too`).
    fn whole_span(&self, i: usize, delivered_too: bool) -> Option<(usize, usize)> {
        let msg_id = self.slots.get(i)?.as_ref()?.msg_id;
        let member = |i: usize| {
            self.slots.get(i)?.as_ref().filter(|s| s.msg_id == msg_id && (delivered_too || !s.delivered))
        };
        let mut start = i;
        while !member(start)?.flags.contains(ReliableFlags::STA) {
            start = start.checked_sub(1)?;
        }
        let mut end = i;
        while !member(end)?.flags.contains(ReliableFlags::EOM) {
            end += 1;
        }
        Some((start, end))
    }

    /// The ACK naming the message `frame` ended, when the in-order point went on past it to
    /// another message, so that the ACK of the in-order point does not name it.
    fn passed_ack(&self, frame: &DataFrame) -> Option<FrameBody> {
        let behind = frame.sequence.wrapping_sub(self.cum) > RECEIVE_WINDOW;
        (frame.flags.contains(ReliableFlags::EOM) && behind && frame.message_id != self.cum_msg_id)
            .then(|| self.ack_body(frame.message_id, frame.sequence, frame.serial, 0))
    }

    /// The ACK naming a message held whole beyond a missing frame (2.2.4: messageid and the
    /// sequence of its last frame). A Windows sender frees only the message an ACK names
    /// (3.1.5.3 "MAY" discard earlier ones) and may have only 24 outstanding (2.2.2), so
    /// without it a lost unreliable frame could stop the sender before the "+24" frame that
    /// lets the receiver pass the hole. Our sender reads ACKs the same way.
    fn named_ack(&self, frame: &DataFrame) -> Option<FrameBody> {
        let i = usize::from(frame.sequence.wrapping_sub(self.cum).checked_sub(1)?);
        let (_, end) = self.whole_span(i, true)?;
        let last = self.slots.get(end)?.as_ref()?;
        let end_seq = self.cum.wrapping_add(u8::try_from(end + 1).ok()?);
        Some(self.ack_body(last.msg_id, end_seq, last.serial, 0))
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

    /// The answer for now: an ACK of the in-order point (MC-DPL4R 2.2.4), or nothing before
    /// any frame arrived. Never a NACK: Windows neither sends nor expects one (6 <2>, <5>).
    pub(crate) fn answer(&mut self, tick: u32) -> Option<FrameBody> {
        self.ack_deadline = None;
        self.any.then(|| self.ack_body(self.cum_msg_id, self.cum, self.cum_serial, tick))
    }

    /// An ACK frame (2.2.4) naming `message_id` at `sequence`, with our bytes received.
    fn ack_body(&self, message_id: u8, sequence: u8, serial: u8, tick: u32) -> FrameBody {
        let bytes_received = self.bytes_received;
        let flags = ReliableFlags::ACK;
        FrameBody::Ack(AckFrame {
            flags,
            message_id,
            sequence,
            serial,
            bytes_received,
            local_tick_count: tick,
        })
    }
}
