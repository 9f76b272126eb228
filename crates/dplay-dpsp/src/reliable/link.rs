//! One link: a sender and a receiver between our player index and one peer's.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_wire::dp4::reliable::{FrameBody, ReliableFrame};

use super::event::{DropReason, Event, LinkInfo};
use super::receive::Receiver;
use dplay_wire::budget::Charge;

use super::send::{AckOutcome, Sender};
use super::{Config, Io, Transmit};

#[derive(Debug)]
pub(crate) struct Link {
    peer: SocketAddr,
    pub(crate) local: u16,
    pub(crate) remote: u16,
    /// The indexes of the peer instance's other players (MC-DPL4R 3.1.5.1).
    pub(crate) remote_players: std::collections::BTreeSet<u16>,
    pub(crate) sender: Sender,
    receiver: Receiver,
    /// Gave up; the endpoint removes it.
    pub(crate) failed: bool,
    /// What the receiver holds, charged to the host's memory budget; released with the link.
    pub(crate) charge: Charge,
    /// What the sender holds for the peer ([`Sender::held_bytes`]), charged as held.
    send_charge: Charge,
}

impl Link {
    pub(crate) fn new(peer: SocketAddr, local: u16, remote: u16, charge: Charge) -> Self {
        let send_charge = charge.budget().account();
        let (sender, receiver) = (Sender::new(), Receiver::new());
        let remote_players = std::collections::BTreeSet::new();
        Self { peer, local, remote, remote_players, sender, receiver, failed: false, charge, send_charge }
    }

    /// Charges what the sender holds now: counted, never refused here (`Reliable::send`
    /// refuses new messages to a peer that is behind when the budget is full).
    pub(crate) fn sync_send_charge(&mut self) {
        let held = self.sender.held_bytes();
        self.send_charge.set_held(held);
    }

    fn emit(&self, io: &mut Io, body: FrameBody) {
        let frame = ReliableFrame { id_from: self.local, id_to: self.remote, body };
        io.transmits.push_back(Transmit { to: self.peer, frame });
    }

    fn emit_data(&self, io: &mut Io, frames: Vec<FrameBody>) {
        io.stats.frames_sent += frames.len() as u64;
        for body in frames {
            self.emit(io, body);
        }
    }

    /// Frames and sends what the windows allow.
    pub(crate) fn pump(&mut self, config: &Config, io: &mut Io, now: Instant) {
        let mut out = Vec::new();
        self.sender.pump(config, now, &mut out);
        self.emit_data(io, out);
    }

    /// Sends the receiver's ACK now.
    fn answer(&mut self, io: &mut Io, tick: u32) {
        if let Some(body) = self.receiver.answer(tick) {
            io.stats.acks_sent += 1;
            self.emit(io, body);
        }
    }

    fn ack_outcome(io: &mut Io, outcome: AckOutcome) {
        match outcome {
            AckOutcome::Applied => {}
            AckOutcome::Stale => io.stats.drop(DropReason::StaleAck),
            AckOutcome::Bad => io.stats.drop(DropReason::BadAck),
        }
    }

    /// A frame for this link; `len` is its size after the player indexes (3.1.5.4).
    pub(crate) fn handle(
        &mut self,
        config: &Config,
        io: &mut Io,
        now: Instant,
        tick: u32,
        body: &FrameBody,
        len: usize,
    ) {
        match body {
            FrameBody::Data(d) => {
                // A piggybacked NACK MASK (EXT) is not acted on: Windows never sends one
                // (6 <3>, <4>) and its base is not defined for data frames.
                let r = self.receiver.on_data(config, now, d, len);
                r.drops.iter().for_each(|&reason| io.stats.drop(reason));
                for m in r.deliveries {
                    io.stats.messages_delivered += 1;
                    io.events.push_back(Event::Delivered {
                        from: self.peer,
                        message_id: m.msg_id,
                        reliable: m.reliable,
                        data: m.data,
                    });
                }
                if r.answer_now {
                    self.answer(io, tick);
                }
                if let Some(FrameBody::Ack(mut again)) = r.again {
                    again.local_tick_count = tick;
                    io.stats.acks_sent += 1;
                    self.emit(io, FrameBody::Ack(again));
                }
            }
            FrameBody::Ack(a) => {
                let outcome = self.sender.on_ack(
                    now,
                    a.message_id,
                    a.sequence,
                    a.serial,
                    a.bytes_received,
                    a.local_tick_count,
                );
                Self::ack_outcome(io, outcome);
                self.pump(config, io, now);
            }
            FrameBody::Nack(n) => {
                let mut out = Vec::new();
                let mask = (n.nack.len, n.nack.bits);
                let (outcome, resent) = self.sender.on_nack(
                    now,
                    n.sequence,
                    mask,
                    n.bytes_received,
                    n.local_tick_count,
                    &mut out,
                );
                Self::ack_outcome(io, outcome);
                io.stats.frames_resent += resent;
                self.emit_data(io, out);
                self.pump(config, io, now);
            }
        }
    }

    /// The link's timers: the delayed ACK (3.1.3) and the retry timer with its give-up
    /// (3.1.2).
    pub(crate) fn handle_timeout(&mut self, config: &Config, io: &mut Io, now: Instant, tick: u32) {
        if self.receiver.ack_deadline.is_some_and(|t| t <= now) {
            self.answer(io, tick);
        }
        if self.sender.retry_deadline(config).is_some_and(|t| t <= now) {
            if let Some((sends, elapsed)) = self.sender.give_up(config, now) {
                self.failed = true;
                io.stats.links_failed += 1;
                io.events.push_back(Event::LinkFailed { peer: self.peer, sends, elapsed });
                return;
            }
            let mut out = Vec::new();
            io.stats.frames_resent += self.sender.on_retry(config, now, &mut out);
            self.emit_data(io, out);
        }
    }

    /// The earliest of the link's timers.
    pub(crate) fn deadline(&self, config: &Config) -> Option<Instant> {
        match (self.receiver.ack_deadline, self.sender.retry_deadline(config)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub(crate) fn bytes_held(&self) -> usize {
        self.receiver.bytes_held()
    }

    pub(crate) fn info(&self, config: &Config) -> LinkInfo {
        LinkInfo {
            srtt: self.sender.rtt.srtt,
            rttvar: self.sender.rtt.rttvar,
            rto: self.sender.rtt.rto(config),
            bytes_received: self.receiver.bytes_received,
            peer_bytes_received: self.sender.peer.bytes_received,
            peer_receive_rate: self.sender.peer.rate,
            in_flight: self.sender.in_flight.len(),
            queued_bytes: self.sender.queued_bytes,
        }
    }
}
