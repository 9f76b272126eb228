//! Messages that span several frames, put back together per flow direction for `dplay decode`:
//! DirectPlay 8 DFRAMEs from NEW_MSG to END_MSG (MC-DPL8R 2.2.2, 3.1.4.4), MC-DPL4R data
//! frames from STA to EOM with one messageid (MC-DPL4R 2.2.2, 3.1.5.2), and DirectPlay 4
//! PACKET/PACKET2_DATA fragments by offset ([`packets`]).
//!
//! Pieces are kept by direction and sequence number (`bSeq`, `sequence`); a retransmission
//! replaces its copy. A message is complete when consecutive sequence numbers run from a first
//! piece to a last one, which is how both senders number a message's frames. A capture is
//! hostile input, so what is held has caps: [`PER_DIRECTION`] bytes per direction, [`TOTAL`]
//! in all (each piece also charged [`PIECE_OVERHEAD`]), [`MAX_DIRECTIONS`] directions; and a
//! deadline in sequence numbers: a piece [`WINDOW`] or more behind the newest of its direction
//! can no longer be completed (neither sender has that many frames in flight: 64 in DirectPlay
//! 8, MC-DPL8R 3.1.4.4; at most 127 in MC-DPL4R, 2.2.2) and is forgotten. A piece that comes
//! again after its message was put back together is a retransmission and is not shown twice.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;

use dplay_wire::datagram::DframePayload;
use dplay_wire::dp4::header::SIGNATURE;
use dplay_wire::dp4::message::{Dp4Body, ShortMessage};
use dplay_wire::dp4::player_message::DatagramPlayerMessage;
use dplay_wire::dp4::reliable::{FrameBody, ReliableFlags};
use dplay_wire::dp8::cframe::Masks;
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl, DframeHeader};
use dplay_wire::{Datagram, Wire, WireError};

use crate::message::{Carrier, Message};

mod packets;

/// Bytes of pieces held for one direction at most.
pub(crate) const PER_DIRECTION: usize = 4 << 20;
/// Bytes of pieces held for the whole capture at most.
pub(crate) const TOTAL: usize = 64 << 20;
/// Directions with pieces or recent messages at most.
pub(crate) const MAX_DIRECTIONS: usize = 1 << 16;
/// What each piece is charged besides its data: its record.
pub(crate) const PIECE_OVERHEAD: usize = 64;
/// Sequence numbers behind the newest after which a piece is forgotten.
pub(crate) const WINDOW: u8 = 128;

/// Which protocol's frames: their sequence spaces are separate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Layer {
    /// DirectPlay 8 DFRAMEs (MC-DPL8R).
    Dp8,
    /// DirectPlay 4 reliable protocol data frames (MC-DPL4R).
    Dp4Reliable,
    /// DirectPlay 4 PACKET and PACKET2_DATA fragments (MC-DPL4CS 2.2.39, 2.2.41; [`packets`]).
    Dp4Packet,
}

/// One frame's piece of a larger message.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fragment<'a> {
    pub(crate) layer: Layer,
    /// `bSeq` or `sequence`.
    pub(crate) seq: u8,
    /// The MC-DPL4R messageid; 0 for DirectPlay 8.
    pub(crate) message_id: u8,
    /// NEW_MSG or STA.
    pub(crate) first: bool,
    /// END_MSG or EOM.
    pub(crate) last: bool,
    /// The first frame's `bCommand` (DirectPlay 8: USER_1 makes it a session message).
    pub(crate) command: u8,
    pub(crate) data: &'a [u8],
}

impl Fragment<'_> {
    /// Not a whole message.
    pub(crate) fn is_piece(&self) -> bool {
        !(self.first && self.last)
    }

    /// `first`, `middle` or `last`.
    pub(crate) fn position(&self) -> &'static str {
        match (self.first, self.last) {
            (true, _) => "first",
            (false, true) => "last",
            (false, false) => "middle",
        }
    }
}

/// A message put back together.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Whole {
    pub(crate) layer: Layer,
    /// The first frame's `bCommand` (DirectPlay 8).
    pub(crate) command: u8,
    pub(crate) bytes: Vec<u8>,
    /// The capture frames that carried it, in the message's order.
    pub(crate) frames: Vec<u64>,
}

#[derive(Debug)]
struct Piece {
    message_id: u8,
    first: bool,
    last: bool,
    command: u8,
    data: Vec<u8>,
    frame: u64,
}

impl Piece {
    fn cost(&self) -> usize {
        self.data.len().saturating_add(PIECE_OVERHEAD)
    }
}

/// The pieces of one direction of a flow.
#[derive(Debug, Default)]
struct Direction {
    pieces: BTreeMap<u8, Piece>,
    /// Sequence numbers of the pieces of messages already put back together: a copy that comes
    /// again is a retransmission, not a new message.
    done: BTreeSet<u8>,
    newest: u8,
    held: usize,
}

/// What reassembly held back.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Dropped {
    /// Pieces refused because a cap was reached.
    pub(crate) over_cap: u64,
    /// Pieces forgotten: too far behind, or left when the capture ended.
    pub(crate) incomplete: u64,
}

/// Every direction's pieces.
#[derive(Debug, Default)]
pub(crate) struct Reassembly {
    directions: HashMap<(SocketAddr, SocketAddr, Layer), Direction>,
    packets: packets::PendingMessages,
    held: usize,
    pub(crate) dropped: Dropped,
}

impl Reassembly {
    /// Takes the frame `frame` carried from `src` to `dst` (see [`frame`]); returns the message
    /// its piece completes, if any.
    pub(crate) fn offer(
        &mut self,
        src: SocketAddr,
        dst: SocketAddr,
        frame: u64,
        f: Fragment<'_>,
    ) -> Option<Whole> {
        let key = (src, dst, f.layer);
        if !self.directions.contains_key(&key) && self.directions.len() >= MAX_DIRECTIONS {
            self.dropped.over_cap += u64::from(f.is_piece());
            return None;
        }
        let dir =
            self.directions.entry(key).or_insert_with(|| Direction { newest: f.seq, ..Direction::default() });
        // Serial-number arithmetic: ahead when less than half the space forward.
        if f.seq.wrapping_sub(dir.newest) < WINDOW {
            dir.newest = f.seq;
        }
        let newest = dir.newest;
        dir.done.retain(|&s| newest.wrapping_sub(s) < WINDOW);
        let stale: Vec<u8> =
            dir.pieces.keys().copied().filter(|&s| newest.wrapping_sub(s) >= WINDOW || s == f.seq).collect();
        for s in stale {
            if let Some(p) = dir.pieces.remove(&s) {
                dir.held = dir.held.saturating_sub(p.cost());
                self.held = self.held.saturating_sub(p.cost());
                // A retransmission replaces its copy; anything else was never completed.
                if s != f.seq || !f.is_piece() {
                    self.dropped.incomplete += 1;
                }
            }
        }
        if !f.is_piece() {
            dir.done.remove(&f.seq);
        }
        if !f.is_piece() || dir.done.contains(&f.seq) {
            if dir.pieces.is_empty() && dir.done.is_empty() {
                self.directions.remove(&key);
            }
            return None;
        }
        let piece = Piece {
            message_id: f.message_id,
            first: f.first,
            last: f.last,
            command: f.command,
            data: f.data.to_vec(),
            frame,
        };
        let cost = piece.cost();
        if dir.held.saturating_add(cost) > PER_DIRECTION || self.held.saturating_add(cost) > TOTAL {
            self.dropped.over_cap += 1;
        } else {
            dir.held += cost;
            self.held += cost;
            dir.pieces.insert(f.seq, piece);
        }
        let whole = complete(dir, f.seq, f.layer);
        if let Some(w) = &whole {
            let freed = w.bytes.len().saturating_add(PIECE_OVERHEAD.saturating_mul(w.frames.len()));
            self.held = self.held.saturating_sub(freed);
        }
        if dir.pieces.is_empty() && dir.done.is_empty() {
            self.directions.remove(&key);
        }
        whole
    }

    /// Pieces still held (the capture ended before their messages did); counted as incomplete.
    pub(crate) fn finish(&mut self) {
        let left: usize = self.directions.values().map(|d| d.pieces.len()).sum::<usize>()
            + self.packets.values().map(packets::Pending::len).sum::<usize>();
        self.dropped.incomplete += u64::try_from(left).unwrap_or(u64::MAX);
        self.directions.clear();
        self.packets.clear();
        self.held = 0;
    }

    /// Bytes held now, records included.
    #[cfg(test)]
    pub(crate) fn held(&self) -> usize {
        self.held
    }
}

/// The DPSP_MSG_PACKET or PACKET2_DATA fragment `m` is (MC-DPL4CS 2.2.39, 2.2.41).
pub(crate) fn packet_fragment(m: &Message) -> Option<&dplay_wire::dp4::fragment::Fragment> {
    let Message::Wire(w) = m else { return None };
    let Datagram::Dp4(d) = &**w else { return None };
    match &d.body {
        Dp4Body::Packet(f) | Dp4Body::Packet2Data(f) => Some(f),
        _ => None,
    }
}

/// The piece of a larger message `m` carries: a DFRAME with data and not both NEW_MSG and
/// END_MSG, or an MC-DPL4R data frame without both STA and EOM.
pub(crate) fn fragment(m: &Message) -> Option<Fragment<'_>> {
    frame(m).filter(Fragment::is_piece)
}

/// The sequenced frame `m` is, whole or a piece: every DFRAME (one that is not a piece of data
/// is whole) and every MC-DPL4R data frame. Whole frames only move the window.
pub(crate) fn frame(m: &Message) -> Option<Fragment<'_>> {
    match m {
        Message::Wire(w) => {
            let Datagram::Dframe(d) = &**w else { return None };
            let c = d.header.command;
            let (first, last, data) = match &d.payload {
                DframePayload::Data(data) => {
                    (c.contains(DframeCommand::NEW_MSG), c.contains(DframeCommand::END_MSG), &data.0[..])
                }
                _ => (true, true, &[][..]),
            };
            let (seq, command) = (d.header.seq, c.bits());
            Some(Fragment { layer: Layer::Dp8, seq, message_id: 0, first, last, command, data })
        }
        Message::Reliable(f, _) => {
            let FrameBody::Data(d) = &f.body else { return None };
            Some(Fragment {
                layer: Layer::Dp4Reliable,
                seq: d.sequence,
                message_id: d.message_id,
                first: d.flags.contains(ReliableFlags::STA),
                last: d.flags.contains(ReliableFlags::EOM),
                command: 0,
                data: &d.data.0[..],
            })
        }
        _ => None,
    }
}

/// Reads a message put back together: DirectPlay 8 as one frame's payload with the first
/// frame's `bCommand` and NEW_MSG and END_MSG (USER_1: a session message, MC-DPL8CS 2.1.1);
/// MC-DPL4R as a short-form system message ('play' first) or a player message in the datagram
/// form, with `idFrom` and `idTo` when `ids` (MC-DPL4CS 3.1.4.16, 2.2.45); PACKET fragments as
/// a DirectPlay 4 datagram.
pub(crate) fn parse(whole: &Whole, ids: bool) -> Result<Message, WireError> {
    match whole.layer {
        Layer::Dp8 => {
            let command = DframeCommand::from_bits_retain(whole.command)
                | DframeCommand::NEW_MSG
                | DframeCommand::END_MSG;
            let header = DframeHeader {
                command,
                control: DframeControl::empty(),
                seq: 0,
                n_rcv: 0,
                masks: Masks::default(),
                signature: None,
                sess_id: None,
            };
            DframePayload::parse(&header, &whole.bytes).map(|p| Message::Dp8Whole(command, p))
        }
        Layer::Dp4Reliable if whole.bytes.starts_with(&SIGNATURE) => {
            ShortMessage::parse(&whole.bytes).map(Message::Dp4Short)
        }
        Layer::Dp4Reliable => DatagramPlayerMessage::parse(&whole.bytes, ids).map(Message::PlayerDatagram),
        // What the fragments carry is what a datagram would (MC-DPL4CS 3.1.5.27, 3.1.5.28).
        Layer::Dp4Packet => Message::parse(&whole.bytes, Carrier::Dp4Datagram, ids),
    }
}

/// The message the piece at `seq` completes: walk back to a first piece and forward to a last
/// one through consecutive sequence numbers of one messageid, then take them out.
fn complete(dir: &mut Direction, seq: u8, layer: Layer) -> Option<Whole> {
    let id = dir.pieces.get(&seq)?.message_id;
    let same = |s: u8| dir.pieces.get(&s).filter(|p| p.message_id == id);
    let mut start = seq;
    while !same(start)?.first {
        start = start.wrapping_sub(1);
        if start == seq || same(start)?.last {
            return None;
        }
    }
    let mut end = seq;
    while !same(end)?.last {
        end = end.wrapping_add(1);
        if end == start || same(end)?.first {
            return None;
        }
    }
    let count = usize::from(end.wrapping_sub(start)) + 1;
    let pieces: Vec<Piece> =
        (0..count).filter_map(|i| dir.pieces.remove(&start.wrapping_add(u8::try_from(i).ok()?))).collect();
    dir.done.extend((0..count).filter_map(|i| Some(start.wrapping_add(u8::try_from(i).ok()?))));
    let command = pieces.first().map_or(0, |p| p.command);
    let held: usize = pieces.iter().map(Piece::cost).sum();
    dir.held = dir.held.saturating_sub(held);
    Some(Whole {
        layer,
        command,
        frames: pieces.iter().map(|p| p.frame).collect(),
        bytes: pieces.into_iter().flat_map(|p| p.data).collect(),
    })
}

#[cfg(test)]
mod tests;
