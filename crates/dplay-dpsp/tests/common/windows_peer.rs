//! A Windows-shaped MC-DPL4R peer for dplay-sim, scripted from the spec's product notes
//! (MC-DPL4R 6): it never sends a NACK or an EXT frame (<2>, <3>, <5>); it sends an
//! unreliable frame once and never again (<2>: with no NACK there is nothing to ask for it);
//! it numbers messageids and sequences from 0 as the 4.1 examples do; SAK as <8> says; an ACK
//! frees only the message it names (3.1.5.3 "MAY" discard earlier ones, and a MAY is not
//! what Windows does, 6), so its receiver names each message it completes and each duplicate
//! it gets again (3.1.5.2), and the in-order point on SAK.
#![allow(clippy::indexing_slicing, clippy::cast_possible_truncation)] // bounded test data
#![allow(dead_code)] // each binary uses a subset

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_sim::{Node, Transmit};
use dplay_wire::dp4::reliable::{AckFrame, DataFrame, FrameBody, ReliableFlags, ReliableFrame};
use dplay_wire::{Blob, Wire};

/// The retry time-out: fixed, as a first guess of "average round trip plus three deviations"
/// (3.1.2) on a 20 ms link.
const RTO: Duration = Duration::from_millis(400);

/// A reliable message sent and not yet acknowledged by name.
struct Outstanding {
    msg_id: u8,
    frames: Vec<DataFrame>,
    first_sent: Instant,
    last_sent: Instant,
    serial: u8,
}

/// The scripted Windows peer.
pub(crate) struct WindowsPeer {
    /// Our endpoint's address, the only peer.
    pub(crate) to: SocketAddr,
    local: u16,
    remote: u16,
    frame_data: usize,
    next_seq: u8,
    next_msg: u8,
    queue: VecDeque<(Vec<u8>, bool)>,
    outstanding: Vec<Outstanding>,
    out: VecDeque<Vec<u8>>,
    last_sak: Option<Instant>,
    since_sak: u32,
    /// Receiving: the next sequence expected (our sender numbers from 1, 3.1.3).
    rcv_next: u8,
    rcv_last: (u8, u8),
    held: BTreeMap<u8, DataFrame>,
    assembly: Option<(bool, Vec<u8>)>,
    bytes_received: u32,
    epoch: Option<Instant>,
    /// Messages handed up: (reliable, data).
    pub(crate) got: Vec<(bool, Vec<u8>)>,
    /// NACK frames and frames with EXT received: Windows does not expect any (6 <2>, <5>).
    pub(crate) nacks_seen: u64,
    /// For each reliable message, how long it waited for its ACK.
    pub(crate) ack_waits: Vec<Duration>,
}

impl WindowsPeer {
    pub(crate) fn new(to: SocketAddr, local: u16, remote: u16, frame_data: usize) -> Self {
        Self {
            to,
            local,
            remote,
            frame_data,
            next_seq: 0,
            next_msg: 0,
            queue: VecDeque::new(),
            outstanding: Vec::new(),
            out: VecDeque::new(),
            last_sak: None,
            since_sak: 0,
            rcv_next: 1,
            rcv_last: (0, 0),
            held: BTreeMap::new(),
            assembly: None,
            bytes_received: 0,
            epoch: None,
            got: Vec::new(),
            nacks_seen: 0,
            ack_waits: Vec::new(),
        }
    }

    /// Queues a message and sends what the 24-message window allows (2.2.2).
    pub(crate) fn send(&mut self, now: Instant, data: Vec<u8>, reliable: bool) {
        self.queue.push_back((data, reliable));
        self.pump(now);
    }

    /// Reliable messages still waiting for their ACK.
    pub(crate) fn unacknowledged(&self) -> usize {
        self.outstanding.len()
    }

    /// The messageids waiting for their ACK.
    pub(crate) fn waiting(&self) -> Vec<u8> {
        self.outstanding.iter().map(|o| o.msg_id).collect()
    }

    /// The oldest unacknowledged message's age at `now`.
    pub(crate) fn oldest_wait(&self, now: Instant) -> Option<Duration> {
        self.outstanding.iter().map(|o| now.saturating_duration_since(o.first_sent)).max()
    }

    fn emit(&mut self, body: FrameBody) {
        let f = ReliableFrame { id_from: self.local, id_to: self.remote, body };
        self.out.push_back(f.to_vec().expect("encodable"));
    }

    fn tick(&mut self, now: Instant) -> u32 {
        let epoch = *self.epoch.get_or_insert(now);
        now.saturating_duration_since(epoch).as_millis() as u32
    }

    fn pump(&mut self, now: Instant) {
        loop {
            let first = self.outstanding.first().map_or(self.next_msg, |o| o.msg_id);
            if self.next_msg.wrapping_sub(first) >= 24 {
                return;
            }
            let Some((data, reliable)) = self.queue.pop_front() else { return };
            let msg_id = self.next_msg;
            self.next_msg = self.next_msg.wrapping_add(1);
            let chunks: Vec<&[u8]> =
                if data.is_empty() { vec![&data[..]] } else { data.chunks(self.frame_data).collect() };
            let n = chunks.len();
            let mut frames = Vec::new();
            for (i, chunk) in chunks.into_iter().enumerate() {
                let (sta, eom) = (i == 0, i + 1 == n);
                let mut flags = ReliableFlags::CMD;
                flags.set(ReliableFlags::STA, sta);
                flags.set(ReliableFlags::EOM, eom);
                flags.set(ReliableFlags::RLY, reliable);
                // 6 <8>: not the end, or reliable, and 50 ms since the last SAK; or 24 frames.
                self.since_sak += 1;
                let quiet = self
                    .last_sak
                    .is_none_or(|t| now.saturating_duration_since(t) > Duration::from_millis(50));
                if ((!eom || reliable) && quiet) || self.since_sak >= 24 {
                    flags |= ReliableFlags::SAK;
                    (self.last_sak, self.since_sak) = (Some(now), 0);
                }
                let frame = DataFrame {
                    flags,
                    message_id: msg_id,
                    sequence: self.next_seq,
                    serial: if n == 1 { 0 } else { i as u8 },
                    nack: None,
                    data: Blob::new(chunk),
                };
                self.next_seq = self.next_seq.wrapping_add(1);
                self.emit(FrameBody::Data(frame.clone()));
                frames.push(frame);
            }
            if reliable {
                let serial = (n - 1) as u8;
                self.outstanding.push(Outstanding {
                    msg_id,
                    frames,
                    first_sent: now,
                    last_sent: now,
                    serial,
                });
            }
        }
    }

    fn on_ack(&mut self, now: Instant, a: &AckFrame) {
        let named = self.outstanding.iter().position(|o| {
            o.msg_id == a.message_id && o.frames.last().is_some_and(|f| f.sequence == a.sequence)
        });
        if let Some(i) = named {
            let o = self.outstanding.remove(i);
            self.ack_waits.push(now.saturating_duration_since(o.first_sent));
            self.pump(now);
        }
    }

    fn on_data(&mut self, now: Instant, d: &DataFrame, len: usize) {
        self.bytes_received = self.bytes_received.wrapping_add(len as u32);
        let ahead = d.sequence.wrapping_sub(self.rcv_next);
        let mut named = Vec::new();
        if ahead >= 128 {
            // Received before: its ACK may have been lost; it names this message (3.1.5.2).
            named.push((d.message_id, d.sequence, d.serial));
        } else if ahead < 64 {
            self.held.entry(d.sequence).or_insert_with(|| d.clone());
        }
        while let Some(f) = self.held.remove(&self.rcv_next) {
            self.rcv_last = (f.message_id, f.serial);
            if f.flags.contains(ReliableFlags::STA) {
                self.assembly = Some((f.flags.contains(ReliableFlags::RLY), Vec::new()));
            }
            if let Some((_, buf)) = self.assembly.as_mut() {
                buf.extend_from_slice(&f.data);
            }
            if f.flags.contains(ReliableFlags::EOM) {
                if let Some(m) = self.assembly.take() {
                    self.got.push(m);
                }
                // The end of a message: an ACK naming it (3.1.5.2).
                named.push((f.message_id, self.rcv_next, f.serial));
            }
            self.rcv_next = self.rcv_next.wrapping_add(1);
        }
        if named.is_empty() && d.flags.contains(ReliableFlags::SAK) {
            named.push((self.rcv_last.0, self.rcv_next.wrapping_sub(1), self.rcv_last.1));
        }
        let tick = self.tick(now);
        for (message_id, sequence, serial) in named {
            let ack = AckFrame {
                flags: ReliableFlags::ACK,
                message_id,
                sequence,
                serial,
                bytes_received: self.bytes_received,
                local_tick_count: tick,
            };
            self.emit(FrameBody::Ack(ack));
        }
    }
}

impl Node for WindowsPeer {
    fn handle_datagram(&mut self, now: Instant, _from: SocketAddr, data: &[u8]) {
        if data.get(2).is_some_and(|f| f & 0x80 != 0) {
            self.nacks_seen += 1;
        }
        let Ok(frame) = ReliableFrame::parse(data) else { return };
        match &frame.body {
            FrameBody::Nack(_) => self.nacks_seen += 1,
            FrameBody::Ack(a) => self.on_ack(now, a),
            FrameBody::Data(d) => self.on_data(now, d, data.len() - 2),
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        let mut resend = Vec::new();
        for o in &mut self.outstanding {
            if now.saturating_duration_since(o.last_sent) >= RTO {
                o.last_sent = now;
                for f in &mut o.frames {
                    // 2.2.2 serial: one more per retry; 6 <8>: a retransmission asks for an ACK.
                    o.serial = o.serial.wrapping_add(1);
                    f.serial = o.serial;
                    f.flags |= ReliableFlags::SAK;
                    resend.push(f.clone());
                }
            }
        }
        for f in resend {
            self.emit(FrameBody::Data(f));
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        self.out.pop_front().map(|contents| Transmit { destination: self.to, contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.outstanding.iter().map(|o| o.last_sent + RTO).min()
    }
}
