//! Receiving: gathering fragments by `GuidMessage` in any order, checking each against the
//! others, and delivering the concatenation of their PacketData (MC-DPL4CS 2.2.39, 2.2.41,
//! 3.1.5.27, 3.1.5.28), within the configured limits.

use std::collections::{BTreeMap, VecDeque};

use dplay_wire::budget::Charge;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp4::fragment::{Fragment, PacketAck};
use uuid::Uuid;

use crate::event::{AbandonReason, DropReason, Event, Limit};
use crate::message::nested_command;
use crate::timer::{MessageKey, Timer, later};
use crate::{Config, DpspMessage, Io, Reliability};

/// Bookkeeping bytes charged for each fragment held, on top of its data, so that a flood of
/// one-byte fragments costs what it costs.
pub const PIECE_OVERHEAD: usize = 64;

/// One fragment held: where its data goes and the data.
#[derive(Debug)]
struct Piece {
    offset: u32,
    data: Vec<u8>,
}

impl Piece {
    fn end(&self) -> u64 {
        u64::from(self.offset) + self.data.len() as u64
    }
}

/// A message under reassembly. Fragments are kept as they come, never in a buffer sized by
/// `MessageSize`, so memory follows what the sender actually sent.
#[derive(Debug)]
struct Partial {
    reliability: Reliability,
    total_packets: u32,
    message_size: u32,
    pieces: BTreeMap<u32, Piece>,
    /// Bytes charged to the limits: data plus [`PIECE_OVERHEAD`] per piece.
    cost: usize,
    /// Arrival order of the first fragment; the smallest is the oldest, evicted first.
    age: u64,
    /// When the last fragment for it came, duplicates included.
    last_fragment: Instant,
}

impl Partial {
    /// Checks `f` against the fragments already held (issue item 2: consistent offsets).
    fn check(&self, reliability: Reliability, f: &Fragment) -> Result<(), DropReason> {
        if reliability != self.reliability
            || f.total_packets != self.total_packets
            || f.message_size != self.message_size
        {
            return Err(DropReason::Mismatch);
        }
        let index = f.packet_index;
        let start = u64::from(f.offset);
        let end = start + f.data.len() as u64;
        if let Some(held) = self.pieces.get(&index) {
            return if held.offset == f.offset && held.data.len() == f.data.len() {
                Err(DropReason::Duplicate)
            } else {
                Err(DropReason::OffsetConflict)
            };
        }
        // The fragments between two held ones each carry at least one byte; adjacent ones touch.
        if let Some((&j, before)) = self.pieces.range(..index).next_back() {
            let between = u64::from(index - j - 1);
            let gap = start.checked_sub(before.end()).ok_or(DropReason::OffsetConflict)?;
            if gap < between || (between == 0 && gap != 0) {
                return Err(DropReason::OffsetConflict);
            }
        }
        if let Some((&k, after)) = self.pieces.range(index.saturating_add(1)..).next() {
            let between = u64::from(k - index - 1);
            let gap = u64::from(after.offset).checked_sub(end).ok_or(DropReason::OffsetConflict)?;
            if gap < between || (between == 0 && gap != 0) {
                return Err(DropReason::OffsetConflict);
            }
        }
        Ok(())
    }

    fn is_complete(&self) -> bool {
        self.pieces.len() as u64 == u64::from(self.total_packets)
    }

    /// The concatenation of every PacketData in `PacketIndex` order (MC-DPL4CS 2.2.41). The
    /// checks made on insertion guarantee it is exactly `MessageSize` bytes.
    fn assemble(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.pieces.values().map(|p| p.data.len()).sum());
        for piece in self.pieces.values() {
            out.extend_from_slice(&piece.data);
        }
        out
    }
}

/// Checks that need no other fragment (issue item 2; INDEX E.5 step 9).
fn check_alone(f: &Fragment, max_message_size: u32) -> Result<(), DropReason> {
    let index = u64::from(f.packet_index);
    let total = u64::from(f.total_packets);
    let size = u64::from(f.message_size);
    let start = u64::from(f.offset);
    let end = start + f.data.len() as u64;
    if f.data.is_empty() {
        return Err(DropReason::EmptyFragment);
    }
    if f.message_size > max_message_size {
        return Err(DropReason::TooLarge);
    }
    if total == 0 || total > size {
        return Err(DropReason::BadTotalPackets);
    }
    if index >= total {
        return Err(DropReason::IndexOutOfRange);
    }
    if end > size {
        return Err(DropReason::OutsideMessage);
    }
    // Fragment 0 starts the message, the last one ends it, and every other fragment needs a byte.
    let first_ok = if index == 0 { start == 0 } else { start >= index };
    let last_ok = if index + 1 == total { end == size } else { size - end >= total - 1 - index };
    if !first_ok || !last_ok {
        return Err(DropReason::OffsetConflict);
    }
    Ok(())
}

/// How a remembered message ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Delivered,
    Abandoned,
}

/// What one sender holds.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    partials: usize,
    bytes: usize,
}

/// Every partial message, by sender and `GuidMessage`, with the limits' accounting.
#[derive(Debug, Default)]
pub(crate) struct Reassembler {
    partials: BTreeMap<MessageKey, Partial>,
    by_age: BTreeMap<u64, MessageKey>,
    next_age: u64,
    usage: BTreeMap<SocketAddr, Usage>,
    total_bytes: usize,
    finished: BTreeMap<MessageKey, (Outcome, Instant)>,
    finished_order: VecDeque<(Instant, MessageKey)>,
    /// `total_bytes`, charged to the host's memory budget.
    charge: Charge,
}

impl Reassembler {
    /// A PACKET or PACKET2_DATA from `from` (MC-DPL4CS 3.1.5.27, 3.1.5.28).
    pub(crate) fn handle_fragment(
        &mut self,
        io: &mut Io,
        config: &Config,
        now: Instant,
        from: SocketAddr,
        reliability: Reliability,
        f: &Fragment,
    ) {
        io.stats.fragments_received += 1;
        self.forget_finished(config, now);
        let key = MessageKey { peer: from, guid: f.guid_message };
        if let Some(&(outcome, _)) = self.finished.get(&key) {
            match outcome {
                // The ACK may have been lost: acknowledge again so the sender can finish.
                Outcome::Delivered => {
                    io.stats.drop(DropReason::Duplicate);
                    ack(io, config, key, reliability, f);
                }
                Outcome::Abandoned => io.stats.drop(DropReason::Abandoned),
            }
            return;
        }
        if let Err(reason) = check_alone(f, config.limits.max_message_size) {
            io.stats.drop(reason);
            if reason == DropReason::TooLarge {
                report(io, from, Limit::MessageSize);
            }
            return;
        }
        match self.partials.get(&key).map(|p| p.check(reliability, f)) {
            Some(Err(DropReason::Duplicate)) => {
                io.stats.drop(DropReason::Duplicate);
                self.touch(key, now);
                ack(io, config, key, reliability, f);
                return;
            }
            Some(Err(reason)) => {
                io.stats.drop(reason);
                return;
            }
            Some(Ok(())) => {}
            None => self.make_room_for_partial(io, config, now, key),
        }
        let cost = f.data.len().saturating_add(PIECE_OVERHEAD);
        if let Err(limit) = self.make_room(io, config, now, key, cost) {
            io.stats.drop(DropReason::OverLimit);
            if self.partials.contains_key(&key) {
                self.abandon(io, config, now, key, AbandonReason::Evicted(limit));
            }
            return;
        }
        if self.insert(key, reliability, f, cost, now) {
            io.timers.set(Timer::Discard, key, later(now, idle_time(config, reliability)));
        }
        ack(io, config, key, reliability, f);
        if self.partials.get(&key).is_some_and(Partial::is_complete) {
            self.complete(io, config, now, key);
        }
    }

    /// The Discard timer of `key` expired. The timer is armed once per message, not on every
    /// fragment, since re-arming per fragment was a large share of the benchmark: a message that had
    /// a fragment since is re-armed for its true deadline; one idle for the whole time is
    /// discarded (MC-DPL4CS 2.2.41).
    pub(crate) fn handle_timer(&mut self, io: &mut Io, config: &Config, now: Instant, key: MessageKey) {
        if let Some(p) = self.partials.get(&key) {
            let due = later(p.last_fragment, idle_time(config, p.reliability));
            if due > now {
                io.timers.set(Timer::Discard, key, due);
            } else {
                self.abandon(io, config, now, key, AbandonReason::Idle);
            }
        }
        self.forget_finished(config, now);
    }

    /// Abandons every partial message from `peer`.
    pub(crate) fn forget_peer(&mut self, io: &mut Io, config: &Config, now: Instant, peer: SocketAddr) {
        while let Some(key) = self.oldest_of(peer, None) {
            self.abandon(io, config, now, key, AbandonReason::PeerForgotten);
        }
    }

    /// Partial messages held.
    pub(crate) fn len(&self) -> usize {
        self.partials.len()
    }

    /// Draws on `charge` from now on.
    pub(crate) fn set_charge(&mut self, mut charge: Charge) {
        charge.set_held(self.total_bytes);
        self.charge = charge;
    }

    /// Bytes charged to the limits, all senders together.
    pub(crate) fn bytes_held(&self) -> usize {
        self.total_bytes
    }

    /// Before a new partial message of `key.peer`: evict its oldest while it is at its limit.
    fn make_room_for_partial(&mut self, io: &mut Io, config: &Config, now: Instant, key: MessageKey) {
        let limit = Limit::PartialsPerSender;
        if self.usage_of(key.peer).partials < config.limits.max_partials_per_sender {
            return;
        }
        report(io, key.peer, limit);
        while self.usage_of(key.peer).partials >= config.limits.max_partials_per_sender {
            let Some(victim) = self.oldest_of(key.peer, None) else { break };
            self.abandon(io, config, now, victim, AbandonReason::Evicted(limit));
        }
    }

    /// Makes room for `cost` more bytes of `key`, evicting other messages oldest first: the
    /// sender's own for its budget, anyone's for the total. Fails if `key` alone is too big.
    fn make_room(
        &mut self,
        io: &mut Io,
        config: &Config,
        now: Instant,
        key: MessageKey,
        cost: usize,
    ) -> Result<(), Limit> {
        let max = config.limits.max_bytes_per_sender;
        if self.usage_of(key.peer).bytes.saturating_add(cost) > max {
            report(io, key.peer, Limit::BytesPerSender);
            while self.usage_of(key.peer).bytes.saturating_add(cost) > max {
                let victim = self.oldest_of(key.peer, Some(key)).ok_or(Limit::BytesPerSender)?;
                self.abandon(io, config, now, victim, AbandonReason::Evicted(Limit::BytesPerSender));
            }
        }
        while self.total_bytes.saturating_add(cost) > config.limits.max_bytes_total {
            let victim = self.by_age.values().find(|&&k| k != key).copied().ok_or(Limit::BytesTotal)?;
            self.abandon(io, config, now, victim, AbandonReason::Evicted(Limit::BytesTotal));
        }
        // The host's budget: the oldest partial messages (anyone's) go first, as for the total.
        while !self.charge.budget().fits(cost) {
            let victim = self.by_age.values().find(|&&k| k != key).copied().ok_or(Limit::MemoryBudget)?;
            self.abandon(io, config, now, victim, AbandonReason::Evicted(Limit::MemoryBudget));
        }
        Ok(())
    }

    /// Notes that a fragment for `key` came at `now`.
    fn touch(&mut self, key: MessageKey, now: Instant) {
        if let Some(p) = self.partials.get_mut(&key) {
            p.last_fragment = p.last_fragment.max(now);
        }
    }

    /// Holds `f`; true if it started a new partial message.
    fn insert(
        &mut self,
        key: MessageKey,
        reliability: Reliability,
        f: &Fragment,
        cost: usize,
        now: Instant,
    ) -> bool {
        let usage = self.usage.entry(key.peer).or_default();
        let mut new = false;
        let partial = self.partials.entry(key).or_insert_with(|| {
            new = true;
            usage.partials += 1;
            let age = self.next_age;
            self.next_age += 1;
            self.by_age.insert(age, key);
            Partial {
                reliability,
                total_packets: f.total_packets,
                message_size: f.message_size,
                pieces: BTreeMap::new(),
                cost: 0,
                age,
                last_fragment: now,
            }
        });
        partial.pieces.insert(f.packet_index, Piece { offset: f.offset, data: f.data.to_vec() });
        partial.cost += cost;
        partial.last_fragment = partial.last_fragment.max(now);
        usage.bytes += cost;
        self.total_bytes += cost;
        self.charge.set_held(self.total_bytes);
        new
    }

    fn complete(&mut self, io: &mut Io, config: &Config, now: Instant, key: MessageKey) {
        let Some(partial) = self.partials.get(&key) else { return };
        let message = partial.assemble();
        let reliability = partial.reliability;
        if nested_command(&message).is_some_and(DpspMessage::is_dpsp_command) {
            self.abandon(io, config, now, key, AbandonReason::NestedFragment);
            return;
        }
        self.remove(io, config, now, key, Outcome::Delivered);
        io.stats.messages_delivered += 1;
        io.events.push_back(Event::Delivered { from: key.peer, guid: key.guid, reliability, message });
    }

    fn abandon(
        &mut self,
        io: &mut Io,
        config: &Config,
        now: Instant,
        key: MessageKey,
        reason: AbandonReason,
    ) {
        if self.remove(io, config, now, key, Outcome::Abandoned) {
            io.stats.reassemblies_abandoned += 1;
            io.events.push_back(Event::ReassemblyAbandoned { from: key.peer, guid: key.guid, reason });
        }
    }

    /// Removes a partial message and its accounting, and remembers how it ended.
    fn remove(
        &mut self,
        io: &mut Io,
        config: &Config,
        now: Instant,
        key: MessageKey,
        outcome: Outcome,
    ) -> bool {
        let Some(partial) = self.partials.remove(&key) else { return false };
        io.timers.cancel(Timer::Discard, key);
        self.by_age.remove(&partial.age);
        self.total_bytes = self.total_bytes.saturating_sub(partial.cost);
        self.charge.set_held(self.total_bytes);
        if let Some(usage) = self.usage.get_mut(&key.peer) {
            usage.partials = usage.partials.saturating_sub(1);
            usage.bytes = usage.bytes.saturating_sub(partial.cost);
            if usage.partials == 0 {
                self.usage.remove(&key.peer);
            }
        }
        let expiry = later(now, config.finished_memory);
        self.finished.insert(key, (outcome, expiry));
        self.finished_order.push_back((expiry, key));
        self.forget_finished(config, now);
        true
    }

    /// Drops remembered outcomes that expired, and the oldest beyond `max_finished`.
    fn forget_finished(&mut self, config: &Config, now: Instant) {
        while let Some(&(expiry, key)) = self.finished_order.front() {
            if expiry > now && self.finished_order.len() <= config.limits.max_finished {
                break;
            }
            self.finished_order.pop_front();
            if self.finished.get(&key).is_some_and(|&(_, e)| e == expiry) {
                self.finished.remove(&key);
            }
        }
    }

    fn usage_of(&self, peer: SocketAddr) -> Usage {
        self.usage.get(&peer).copied().unwrap_or_default()
    }

    /// The oldest partial message of `peer`, other than `except`.
    fn oldest_of(&self, peer: SocketAddr, except: Option<MessageKey>) -> Option<MessageKey> {
        let range = MessageKey { peer, guid: Uuid::nil() }..=MessageKey { peer, guid: Uuid::max() };
        self.partials
            .range(range)
            .filter(|&(k, _)| Some(*k) != except)
            .min_by_key(|&(_, p)| p.age)
            .map(|(&k, _)| k)
    }
}

/// How long a partial message may go without a fragment: 15 s without reliability
/// (MC-DPL4CS 2.2.41), `reliable_idle` with it (decision).
fn idle_time(config: &Config, reliability: Reliability) -> std::time::Duration {
    match reliability {
        Reliability::Unreliable => config.unreliable_idle,
        Reliability::Reliable => config.reliable_idle,
    }
}

/// Acknowledges a PACKET2_DATA: GuidMessage echoed, PacketID = its PacketIndex
/// (MC-DPL4CS 3.1.5.28, 2.2.40; INDEX D.16, inferred).
fn ack(io: &mut Io, config: &Config, key: MessageKey, reliability: Reliability, f: &Fragment) {
    if reliability == Reliability::Reliable {
        io.stats.acks_sent += 1;
        let ack = PacketAck { guid_message: key.guid, packet_id: f.packet_index };
        io.transmit(config, key.peer, DpspMessage::Packet2Ack(ack));
    }
}

fn report(io: &mut Io, from: SocketAddr, limit: Limit) {
    io.stats.limits_exceeded += 1;
    io.events.push_back(Event::LimitExceeded { from, limit });
}
