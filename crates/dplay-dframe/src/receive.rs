//! The receiving half of a connection: the 64-frame receive window with duplicate
//! suppression, send-mask skips, in-order draining, reassembly of large messages, and the
//! delivery rules of the four message categories (MS-DPDX 1.3; MC-DPL8R 3.1.5.2.1,
//! 3.1.5.2.4, 3.1.5.2.6).

use std::collections::VecDeque;

use dplay_wire::budget::Charge;
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use crate::event::MessageKind;
use crate::seq::{WINDOW, distance, in_window};

/// A message ready for the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Delivery {
    pub(crate) data: Vec<u8>,
    pub(crate) kind: MessageKind,
}

/// What a received DFRAME carries.
#[derive(Debug)]
pub(crate) enum Content {
    /// A KeepAlive, or any frame without payload: nothing to deliver.
    Empty,
    /// One whole message (held without a `Vec` around it: one allocation per frame, not two).
    One(Delivery),
    /// The whole messages of a coalesced frame.
    Many(Vec<Delivery>),
    /// Whole messages already handed to the caller on arrival (non-sequential).
    Delivered,
    /// A piece of a large message.
    Piece(Vec<u8>),
}

impl Content {
    /// The payload bytes it holds.
    fn len(&self) -> usize {
        match self {
            Self::Empty | Self::Delivered => 0,
            Self::One(d) => d.data.len(),
            Self::Many(ds) => ds.iter().map(|d| d.data.len()).sum(),
            Self::Piece(p) => p.len(),
        }
    }
}

/// A received DFRAME, as the window keeps it.
#[derive(Debug)]
pub(crate) struct Frame {
    pub(crate) command: DframeCommand,
    pub(crate) control: DframeControl,
    pub(crate) content: Content,
}

impl Frame {
    pub(crate) fn new(command: DframeCommand, control: DframeControl, payload: Vec<u8>) -> Self {
        let content = if payload.is_empty() {
            Content::Empty
        } else if command.contains(DframeCommand::NEW_MSG | DframeCommand::END_MSG) {
            Content::One(Delivery { data: payload, kind: kind_of(command) })
        } else {
            Content::Piece(payload)
        };
        Self { command, control, content }
    }

    /// A coalesced frame: its sub-payloads were already split out (MC-DPL8R 3.1.5.2.5).
    pub(crate) fn coalesced(command: DframeCommand, control: DframeControl, subs: Vec<Delivery>) -> Self {
        let content = if subs.is_empty() { Content::Empty } else { Content::Many(subs) };
        Self { command, control, content }
    }
}

/// The category bits of a `bCommand`.
pub(crate) fn kind_of(command: DframeCommand) -> MessageKind {
    MessageKind {
        reliable: command.contains(DframeCommand::RELIABLE),
        sequential: command.contains(DframeCommand::SEQUENTIAL),
        user_1: command.contains(DframeCommand::USER_1),
        user_2: command.contains(DframeCommand::USER_2),
    }
}

#[derive(Debug)]
enum Slot {
    Frame(Frame),
    /// Named by a send mask: never coming, count it as received (MC-DPL8R 3.1.5.2.4).
    Skipped,
}

/// What `accept` made of a frame's `bSeq` (MC-DPL8R 3.1.5.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Accept {
    /// Stored; `in_order` when it was the next expected.
    Stored { in_order: bool },
    /// Already received (or behind the window).
    Duplicate,
    /// Ahead of the window, or after the peer's END_STREAM.
    OutOfWindow,
    /// Not stored: the memory budget is full. It is not acknowledged, so the peer sends it
    /// again (docs/limits.md).
    OverBudget,
}

/// What draining the window produced.
#[derive(Debug, Default)]
pub(crate) struct Drained {
    pub(crate) deliveries: Vec<Delivery>,
    /// The peer's END_STREAM was reached in order (MC-DPL8R 3.1.4.3).
    pub(crate) end_stream: bool,
    /// Pieces dropped because an earlier piece of their message never came.
    pub(crate) orphaned: u64,
    /// A message grew past the reassembly limit (MC-DPL8R 3.1.5.2.6).
    pub(crate) too_large: bool,
}

#[derive(Debug)]
struct Partial {
    data: Vec<u8>,
    kind: MessageKind,
}

/// The receive window of one connection.
#[derive(Debug)]
pub(crate) struct Receiver {
    /// Next Receive: `bNRcv` (MC-DPL8R 3.1.1).
    next: u8,
    /// The window from Next Receive on: index i holds `next + i`. It only grows as far as the
    /// furthest frame held, so an idle or in-order connection holds no slots.
    slots: VecDeque<Option<Slot>>,
    partial: Option<Partial>,
    /// Next Receive after the peer's END_STREAM: nothing later is accepted.
    ended: bool,
    max_message: usize,
    /// The payload bytes held in `slots` and `partial`, charged to the host's memory budget.
    charge: Charge,
}

impl Receiver {
    pub(crate) fn new(max_message: usize, charge: Charge) -> Self {
        Self { next: 0, slots: VecDeque::new(), partial: None, ended: false, max_message, charge }
    }

    /// Sets the largest message reassembled from now on.
    pub(crate) fn set_max_message(&mut self, bytes: usize) {
        self.max_message = bytes;
    }

    /// Bytes held for reassembly: frames kept out of order and the message being put
    /// together (MC-DPL8R 3.1.5.2.1, 3.1.5.2.6); O(window). What is charged to the memory
    /// budget.
    pub(crate) fn held_bytes(&self) -> usize {
        let frames: usize = self
            .slots
            .iter()
            .map(|slot| match slot {
                Some(Slot::Frame(f)) => f.content.len(),
                _ => 0,
            })
            .sum();
        frames + self.partial.as_ref().map_or(0, |p| p.data.len())
    }

    /// Next Receive.
    pub(crate) fn next(&self) -> u8 {
        self.next
    }

    /// True while frames are held beyond a missing one.
    pub(crate) fn has_gap(&self) -> bool {
        !self.slots.is_empty()
    }

    /// The slot of `seq`, which must be in the window, made to exist.
    fn slot(&mut self, seq: u8) -> Option<&mut Option<Slot>> {
        let index = usize::from(distance(self.next, seq));
        if index >= usize::from(WINDOW) {
            return None;
        }
        if index >= self.slots.len() {
            self.slots.resize_with(index + 1, || None);
        }
        self.slots.get_mut(index)
    }

    /// Validates `bSeq` and stores the frame. A non-sequential whole message is delivered at
    /// once into `early` (MS-DPDX 1.3); everything else waits for its turn.
    pub(crate) fn accept(&mut self, seq: u8, mut frame: Frame, early: &mut Vec<Delivery>) -> Accept {
        let ahead = distance(self.next, seq);
        if ahead >= WINDOW {
            return if ahead >= 192 { Accept::Duplicate } else { Accept::OutOfWindow };
        }
        if self.ended {
            return Accept::OutOfWindow;
        }
        if matches!(self.slots.get(usize::from(ahead)), Some(Some(_))) {
            return Accept::Duplicate;
        }
        let sequential = frame.command.contains(DframeCommand::SEQUENTIAL);
        // Whole messages are not held: non-sequential ones are handed over now, and in-order
        // ones by the drain that follows in the same call. So a full budget never stops a
        // peer's ordinary messages, only what it makes us keep (docs/limits.md).
        let kept = match &frame.content {
            Content::One(_) | Content::Many(_) if !sequential || ahead == 0 => 0,
            content => content.len(),
        };
        if !self.charge.grow(kept) {
            return Accept::OverBudget;
        }
        if !sequential {
            match std::mem::replace(&mut frame.content, Content::Delivered) {
                Content::One(d) => early.push(d),
                Content::Many(ds) => early.extend(ds),
                other => frame.content = other,
            }
        }
        let Some(slot) = self.slot(seq) else { return Accept::OutOfWindow };
        *slot = Some(Slot::Frame(frame));
        Accept::Stored { in_order: ahead == 0 }
    }

    /// Applies a send mask based at `base` (MC-DPL8R 3.1.5.2.4; decision F-10): bit i names
    /// `base - 1 - i`; a missing frame it names is skipped as if received.
    pub(crate) fn apply_send_mask(&mut self, base: u8, mask: u64) {
        if mask == 0 || self.ended {
            return;
        }
        for i in 0..64u8 {
            if mask >> i & 1 == 0 {
                continue;
            }
            let seq = base.wrapping_sub(1).wrapping_sub(i);
            if !in_window(self.next, seq) || distance(self.next, seq) >= distance(self.next, base) {
                continue;
            }
            if let Some(slot) = self.slot(seq)
                && slot.is_none()
            {
                *slot = Some(Slot::Skipped);
            }
        }
    }

    /// The SACK mask: bit i set when `NRcv + 1 + i` is held out of order (MC-DPL8R 3.1.5.2.3).
    pub(crate) fn sack_mask(&self) -> u64 {
        let mut mask = 0u64;
        for (i, slot) in self.slots.iter().enumerate().skip(1).take(64) {
            if matches!(slot, Some(Slot::Frame(_))) {
                mask |= 1 << (i - 1);
            }
        }
        mask
    }

    /// Processes the frames now in order: advances Next Receive, reassembles and delivers
    /// (MC-DPL8R 3.1.5.2.1, 3.1.5.2.6).
    pub(crate) fn drain(&mut self) -> Drained {
        let mut out = Drained::default();
        while let Some(Some(_)) = self.slots.front() {
            let Some(Some(slot)) = self.slots.pop_front() else { break };
            self.next = self.next.wrapping_add(1);
            match slot {
                Slot::Skipped => {
                    if self.partial.take().is_some() {
                        out.orphaned += 1;
                    }
                }
                Slot::Frame(frame) => {
                    self.process(frame, &mut out);
                    if out.end_stream || out.too_large {
                        self.ended = true;
                        self.slots = VecDeque::new();
                        break;
                    }
                }
            }
        }
        // Delivered and dropped bytes are freed; draining never holds more than before.
        let held = self.held_bytes();
        self.charge.set(held);
        out
    }

    fn process(&mut self, frame: Frame, out: &mut Drained) {
        let end_stream = frame.control.contains(DframeControl::END_STREAM);
        let new = frame.command.contains(DframeCommand::NEW_MSG);
        let end = frame.command.contains(DframeCommand::END_MSG);
        match frame.content {
            Content::Empty => {
                out.end_stream |= end_stream;
                return;
            }
            whole @ (Content::One(_) | Content::Many(_) | Content::Delivered) => {
                // A new message interrupts an unfinished one: its pieces cannot all be there.
                if self.partial.take().is_some() {
                    out.orphaned += 1;
                }
                match whole {
                    Content::One(d) => out.deliveries.push(d),
                    Content::Many(ds) => out.deliveries.extend(ds),
                    _ => {}
                }
            }
            Content::Piece(piece) if new => {
                if self.partial.take().is_some() {
                    out.orphaned += 1;
                }
                self.partial = Some(Partial { data: piece, kind: kind_of(frame.command) });
            }
            Content::Piece(piece) => {
                if let Some(partial) = &mut self.partial {
                    if partial.data.len().saturating_add(piece.len()) > self.max_message {
                        self.partial = None;
                        out.too_large = true;
                        return;
                    }
                    partial.data.extend_from_slice(&piece);
                    if end && let Some(done) = self.partial.take() {
                        out.deliveries.push(Delivery { data: done.data, kind: done.kind });
                    }
                } else {
                    out.orphaned += 1;
                }
            }
        }
        // F-7: a final data frame may carry END_STREAM; deliver it, then close.
        out.end_stream |= end_stream;
    }
}
