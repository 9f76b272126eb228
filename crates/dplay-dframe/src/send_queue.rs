//! The sending half of a connection: the message queue, the frames in flight with their retry
//! deadlines, acknowledgement by `bNRcv` and SACK masks, the send mask of unreliable frames that
//! will never be resent, RTT and the congestion window (MC-DPL8R 3.1.4.4, 3.1.5.2.2-3,
//! 3.1.6.5).

use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use dplay_wire::budget::Charge;
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use crate::config::Config;
use crate::event::{Cancelled, FirstFrame, MessageKind, Priority, SendOutcome, Tracked};
use crate::seq::{WINDOW, distance};

/// What a queued entry becomes on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Body {
    /// An application message, split into frames if large (MC-DPL8R 3.1.4.4).
    Data,
    /// A KeepAlive: reliable, no payload (MC-DPL8R 3.1.6.6).
    KeepAlive,
    /// A reliable frame with `PACKET_CONTROL_END_STREAM` and no payload (MC-DPL8R 3.1.4.3).
    EndStream,
}

/// A message waiting for its frames to be sent.
#[derive(Debug)]
pub(crate) struct OutMessage {
    pub(crate) data: Vec<u8>,
    pub(crate) kind: MessageKind,
    pub(crate) body: Body,
    /// How much of `data` earlier frames carried.
    offset: usize,
    pub(crate) priority: Priority,
    /// Reported in `Event::SendDone` when done with.
    pub(crate) id: Option<u64>,
    /// Dropped unsent if not started by then.
    expires: Option<Instant>,
}

impl OutMessage {
    pub(crate) fn new(data: Vec<u8>, kind: MessageKind, body: Body) -> Self {
        // A KeepAlive or END_STREAM goes after everything queued before it (MC-DPL8R 3.1.4.3:
        // END_STREAM after what is queued).
        let priority = if body == Body::Data { Priority::Normal } else { Priority::Low };
        Self { data, kind, body, offset: 0, priority, id: None, expires: None }
    }

    /// The same, tracked: its priority, deadline and id.
    pub(crate) fn tracked(mut self, track: Tracked) -> Self {
        self.priority = track.priority;
        self.id = Some(track.id);
        self.expires = track.expires;
        self
    }

    /// An application message (not a session message, KeepAlive or END_STREAM): what
    /// [`Sender::queued`] counts.
    fn is_application(&self) -> bool {
        self.body == Body::Data && !self.kind.user_1
    }

    fn command(&self, first: bool, last: bool) -> DframeCommand {
        let mut c = DframeCommand::DATA;
        c.set(DframeCommand::RELIABLE, self.kind.reliable);
        c.set(DframeCommand::SEQUENTIAL, self.kind.sequential);
        c.set(DframeCommand::NEW_MSG, first);
        c.set(DframeCommand::END_MSG, last);
        c.set(DframeCommand::USER_1, self.kind.user_1);
        c.set(DframeCommand::USER_2, self.kind.user_2);
        c
    }
}

/// A new frame, before it has a sequence number.
pub(crate) struct NewFrame {
    /// `bCommand` without POLL.
    pub(crate) command: DframeCommand,
    /// `bControl` extras (COALESCE, END_STREAM).
    pub(crate) control: DframeControl,
    pub(crate) keepalive: bool,
    pub(crate) payload: Vec<u8>,
    /// Tracked reliable messages done when it is acknowledged, with their priorities.
    pub(crate) done: Vec<(u64, Priority)>,
    /// Tracked reliable messages whose first frame this is.
    pub(crate) first_of: Vec<u64>,
}

/// Where a frame in flight stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameState {
    /// Sent, waiting for an acknowledgement.
    Sent,
    /// A SACK mask says the peer has it (MC-DPL8R 3.1.5.2.3); never retried.
    Sacked,
    /// Unreliable and timed out: announced in the send mask until `bNRcv` passes it
    /// (MC-DPL8R 3.1.6.5).
    Masked,
}

/// One DFRAME in flight: everything needed to resend it with a fresh header.
#[derive(Debug)]
pub(crate) struct InFlight {
    pub(crate) seq: u8,
    /// `bCommand` without POLL.
    pub(crate) command: DframeCommand,
    /// `bControl` extras (COALESCE, END_STREAM); RETRY and the masks are added on emission.
    pub(crate) control: DframeControl,
    pub(crate) keepalive: bool,
    pub(crate) payload: Vec<u8>,
    /// Tracked reliable messages whose last frame this is, with their priorities:
    /// acknowledged with it.
    done: Vec<(u64, Priority)>,
    /// Tracked reliable messages whose first frame this is: its acknowledgement is their
    /// [`FirstFrame`].
    first_of: Vec<u64>,
    pub(crate) state: FrameState,
    /// When it was last sent (first transmission or retry).
    sent_at: Instant,
    /// Transmission order of its last sending: a SACK for a frame sent later than this one
    /// is evidence that this one was lost.
    sent_order: u64,
    /// Retries sent (or send-mask announcements, once masked).
    retries: u32,
    deadline: Option<Instant>,
}

impl InFlight {
    pub(crate) fn reliable(&self) -> bool {
        self.command.contains(DframeCommand::RELIABLE)
    }
}

/// What an acknowledgement did.
#[derive(Debug, Default)]
pub(crate) struct Acked {
    /// Our END_STREAM frame is acknowledged.
    pub(crate) end_stream: bool,
    /// Reliable frames the SACK mask shows lost: resend now (decision in docs/decisions.md,
    /// MC-DPL8R 3.1.5.2.3).
    pub(crate) resend: Vec<u8>,
    /// Unreliable frames the SACK mask shows lost: now in the send mask.
    pub(crate) newly_masked: u64,
    /// Their payload bytes.
    pub(crate) masked_bytes: u64,
}

/// What the retry timer did (MC-DPL8R 3.1.6.5).
#[derive(Debug, Default)]
pub(crate) struct Retried {
    /// Sequence numbers to resend now.
    pub(crate) resend: Vec<u8>,
    /// An unreliable frame timed out: arm the delayed send mask timer.
    pub(crate) newly_masked: u64,
    /// Their payload bytes.
    pub(crate) masked_bytes: u64,
    /// A send mask needs announcing again: send a SACK now.
    pub(crate) announce_mask: bool,
    /// A frame reached the retry limit: the connection is lost.
    pub(crate) lost: bool,
}

/// `frame` is acknowledged (or reported received) `now`: the first frame of the messages it
/// starts went out `frame.retries` times, the latest answered after the RTT.
fn record_first(first_frames: &mut HashMap<u64, FirstFrame>, now: Instant, frame: &InFlight) {
    let rtt = now.saturating_duration_since(frame.sent_at);
    for id in &frame.first_of {
        first_frames.insert(*id, FirstFrame { rtt, retries: frame.retries });
    }
}

/// Counts one message of `priority` in per-priority counters.
fn count(counters: &mut [u64; 3], priority: Priority) {
    if let Some(n) = counters.get_mut(priority.index()) {
        *n += 1;
    }
}

/// The sending half of a connection.
#[derive(Debug)]
pub(crate) struct Sender {
    queue: VecDeque<OutMessage>,
    queued_bytes: usize,
    inflight: VecDeque<InFlight>,
    /// Next Send: the next new frame's `bSeq` (MC-DPL8R 3.1.1).
    next_seq: u8,
    cwnd: u8,
    /// Frames in flight that a SACK mask reported received: no longer on the network.
    sacked: u8,
    /// New frames sent since the last one that carried POLL.
    since_poll: u8,
    /// Next Send when the window was last reduced, while frames sent before it are in flight:
    /// their losses belong to the same loss event.
    recovery: Option<u8>,
    /// Transmissions so far (the next one's `sent_order`).
    sent_count: u64,
    srtt: Option<Duration>,
    /// Mean deviation of the RTT samples (RFC 6298).
    rttvar: Duration,
    /// What we hold unsent and unacknowledged for the peer, charged to the memory budget as
    /// held ([`Sender::sync_charge`]; docs/limits.md).
    charge: Charge,
    /// Tracked messages done with, for the connection to report.
    pub(crate) completions: Vec<(u64, SendOutcome)>,
    /// How the first frame of tracked reliable messages went, once acknowledged: reported
    /// with their completion (then removed; a message's last frame is never acknowledged
    /// before its first).
    pub(crate) first_frames: HashMap<u64, FirstFrame>,
    /// Tracked messages dropped by [`Sender::clear`], reported lost with the connection.
    lost: Vec<u64>,
    /// The earliest deadline of a queued message, when one may have one (a stale, earlier
    /// value only costs a scan).
    next_expiry: Option<Instant>,
    /// Application messages whose last frame went out, and those dropped at their deadline,
    /// by [`Priority::index`].
    pub(crate) transmitted: [u64; 3],
    pub(crate) timed_out: [u64; 3],
}

impl Sender {
    pub(crate) fn new(cfg: &Config, charge: Charge) -> Self {
        Self {
            queue: VecDeque::new(),
            queued_bytes: 0,
            inflight: VecDeque::new(),
            next_seq: 0,
            cwnd: cfg.initial_window(),
            sacked: 0,
            since_poll: 0,
            recovery: None,
            sent_count: 0,
            srtt: None,
            rttvar: Duration::ZERO,
            charge,
            completions: Vec::new(),
            first_frames: HashMap::new(),
            lost: Vec::new(),
            next_expiry: None,
            transmitted: [0; 3],
            timed_out: [0; 3],
        }
    }

    /// Payload bytes we hold for the peer: messages queued (less what their frames in flight
    /// already carry) and frames not yet acknowledged. A peer that acknowledges slowly, or
    /// not at all until the retries run out, makes us keep them. O(window).
    pub(crate) fn held_bytes(&self) -> usize {
        let sent_of_first = self.queue.front().map_or(0, |m| m.offset);
        let in_flight: usize = self.inflight.iter().map(|f| f.payload.len()).sum();
        (self.queued_bytes - sent_of_first).saturating_add(in_flight)
    }

    /// Charges what we hold now ([`Sender::held_bytes`]) to the memory budget. Counted, never
    /// refused here: the endpoint refuses new messages to a peer that is behind when the
    /// budget is full (`Endpoint::send`).
    pub(crate) fn sync_charge(&mut self) {
        let held = self.held_bytes();
        self.charge.set_held(held);
    }

    pub(crate) fn next_seq(&self) -> u8 {
        self.next_seq
    }

    pub(crate) fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }

    pub(crate) fn rtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// Records an RTT sample: a running average weighting the new sample 1/8 (MC-DPL8R 3.1.1),
    /// and the mean deviation weighting it 1/4 (RFC 6298).
    pub(crate) fn sample_rtt(&mut self, sample: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(sample);
                self.rttvar = sample / 2;
            }
            Some(old) => {
                let deviation = old.abs_diff(sample);
                self.rttvar = (self.rttvar * 3 + deviation) / 4;
                self.srtt = Some((old * 7 + sample) / 8);
            }
        }
    }

    /// Queues `msg` after every message of its priority or higher, and after the head when
    /// frames of it are already out (a message's frames are never interleaved).
    pub(crate) fn push(&mut self, msg: OutMessage) {
        self.queued_bytes += msg.data.len();
        if let Some(at) = msg.expires {
            self.next_expiry = Some(self.next_expiry.map_or(at, |e| e.min(at)));
        }
        let mut at = self.queue.len();
        while at > 0 {
            let Some(prev) = self.queue.get(at - 1) else { break };
            if prev.priority >= msg.priority || (at == 1 && prev.offset > 0) {
                break;
            }
            at -= 1;
        }
        self.queue.insert(at, msg);
    }

    /// The deadline of the earliest queued message that has one (or an earlier, stale one).
    pub(crate) fn next_expiry(&self) -> Option<Instant> {
        self.next_expiry
    }

    /// Drops the queued messages not yet started whose deadline passed: each completes
    /// [`SendOutcome::TimedOut`], unsent. O(queue), only while some message has a deadline.
    pub(crate) fn expire(&mut self, now: Instant) {
        if self.next_expiry.is_none_or(|at| at > now) {
            return;
        }
        let mut next = None;
        let mut kept = VecDeque::with_capacity(self.queue.len());
        for msg in std::mem::take(&mut self.queue) {
            // A message partly on the wire is finished: its deadline no longer counts.
            match msg.expires.filter(|_| msg.offset == 0) {
                Some(at) if at <= now => {
                    self.queued_bytes -= msg.data.len();
                    count(&mut self.timed_out, msg.priority);
                    if let Some(id) = msg.id {
                        self.completions.push((id, SendOutcome::TimedOut));
                    }
                }
                Some(at) => {
                    next = Some(next.map_or(at, |n: Instant| n.min(at)));
                    kept.push_back(msg);
                }
                None => kept.push_back(msg),
            }
        }
        self.queue = kept;
        self.next_expiry = next;
    }

    /// Application messages queued and their bytes not yet sent, of `priority` (or all).
    pub(crate) fn queued(&self, priority: Option<Priority>) -> (usize, usize) {
        self.queue
            .iter()
            .filter(|m| m.is_application() && priority.is_none_or(|p| p == m.priority))
            .fold((0, 0), |(n, b), m| (n + 1, b + (m.data.len() - m.offset)))
    }

    /// `msg`'s last frame is being built: counted, and, when tracked, done now (not reliable)
    /// or once `done`'s frame is acknowledged.
    pub(crate) fn last_frame_of(&mut self, msg: &OutMessage, done: &mut Vec<(u64, Priority)>) {
        if msg.is_application() {
            count(&mut self.transmitted, msg.priority);
        }
        match msg.id {
            Some(id) if msg.kind.reliable => done.push((id, msg.priority)),
            Some(id) => self.completions.push((id, SendOutcome::Sent)),
            None => {}
        }
    }

    /// Every tracked message not yet done (queued, in flight, or dropped by
    /// [`Sender::clear`]): the connection is ending.
    pub(crate) fn abandon(&mut self) -> Vec<u64> {
        let mut ids = std::mem::take(&mut self.lost);
        ids.extend(self.queue.iter_mut().filter_map(|m| m.id.take()));
        for f in &mut self.inflight {
            ids.extend(f.done.drain(..).map(|(id, _)| id));
        }
        ids
    }

    /// Takes the tracked messages `which` selects (by id and priority) out of the queue when
    /// no frame of theirs went out yet: each completes [`SendOutcome::Cancelled`], unsent.
    /// Those it selects that are partly on the wire or wait for their acknowledgement stay
    /// (their frames cannot be taken back) and are counted as started. O(queue + window).
    pub(crate) fn cancel(&mut self, which: impl Fn(u64, Priority) -> bool) -> Cancelled {
        let mut result = Cancelled::default();
        let mut kept = VecDeque::with_capacity(self.queue.len());
        for msg in std::mem::take(&mut self.queue) {
            match msg.id {
                Some(id) if which(id, msg.priority) && msg.offset == 0 => {
                    self.queued_bytes -= msg.data.len();
                    self.completions.push((id, SendOutcome::Cancelled));
                    result.removed += 1;
                }
                Some(id) if which(id, msg.priority) => {
                    result.started += 1;
                    kept.push_back(msg);
                }
                _ => kept.push_back(msg),
            }
        }
        self.queue = kept;
        let in_flight = self.inflight.iter().flat_map(|f| &f.done);
        result.started += in_flight.filter(|(id, p)| which(*id, *p)).count();
        result
    }

    /// True when nothing is queued or in flight.
    pub(crate) fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.inflight.is_empty()
    }

    /// Drops everything queued and in flight (hard disconnect, MC-DPL8R 3.1.4.5).
    pub(crate) fn clear(&mut self) {
        let ids = self.abandon();
        self.lost = ids;
        self.first_frames = HashMap::new();
        self.queue = VecDeque::new();
        self.inflight = VecDeque::new();
        self.queued_bytes = 0;
        self.sacked = 0;
        self.recovery = None;
    }

    /// The wait before retry `n` (1-based): linear backoff for retries 2-3, exponential for
    /// 4-8, capped (MC-DPL8R 3.1.2.5). The base is the measured RTT plus four mean deviations
    /// (RFC 6298) with a floor, in place of the spec's 2.5 RTT plus the delayed-ACK time: the
    /// frames we need acknowledged soon carry POLL, which the peer answers at once (decision
    /// in docs/decisions.md). Before any sample: the spec's value from the initial RTT.
    pub(crate) fn retry_interval(&self, cfg: &Config, n: u32) -> Duration {
        let base = match self.srtt {
            Some(srtt) => (srtt + self.rttvar * 4).max(cfg.retry_min_interval),
            None => cfg.initial_rtt * 5 / 2 + cfg.delayed_ack,
        };
        let factor = match n {
            0..=3 => n.max(1),
            4..=8 => 3 << (n - 3),
            _ => 3 << 5,
        };
        (base * factor).min(cfg.retry_max_interval)
    }

    /// True when a new frame may go out: something is queued, the frames on the network (sent
    /// and not reported received) are fewer than the congestion window, and the frames from the
    /// oldest unacknowledged one stay within 64 (MC-DPL8R 3.1.4.4).
    pub(crate) fn can_send(&self, cfg: &Config) -> bool {
        let span = usize::from(cfg.max_window());
        let on_network = self.inflight.len() - usize::from(self.sacked);
        !self.queue.is_empty() && self.inflight.len() < span && on_network < usize::from(self.cwnd)
    }

    /// Called for each new frame built: true when it should carry POLL so the peer acknowledges
    /// at once. That is when the sender must wait after it (nothing queued, or the window
    /// full), and on every quarter window (at least every 4th frame), so a lost POLL frame
    /// does not leave the window waiting for the peer's delayed ACK.
    pub(crate) fn take_poll(&mut self, cfg: &Config) -> bool {
        self.since_poll = self.since_poll.saturating_add(1);
        let poll = !self.can_send(cfg) || self.since_poll >= (self.cwnd / 4).max(4);
        if poll {
            self.since_poll = 0;
        }
        poll
    }

    fn next_order(&mut self) -> u64 {
        self.sent_count += 1;
        self.sent_count
    }

    /// Puts a new frame in flight with Next Send as its `bSeq` (a coalesced frame the caller
    /// built, or the next one of [`Sender::next_frame`]).
    pub(crate) fn put_in_flight(&mut self, now: Instant, cfg: &Config, frame: NewFrame) -> Option<&InFlight> {
        let NewFrame { command, control, keepalive, payload, done, first_of } = frame;
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        let deadline = Some(now + self.retry_interval(cfg, 1));
        let sent_order = self.next_order();
        self.inflight.push_back(InFlight {
            seq,
            command,
            control,
            keepalive,
            payload,
            done,
            first_of,
            state: FrameState::Sent,
            sent_at: now,
            sent_order,
            retries: 0,
            deadline,
        });
        self.inflight.back()
    }

    /// Takes the next frame's worth from the queue, assigns it Next Send and puts it in flight.
    /// Large messages are split; no other message's frames are interleaved (MC-DPL8R 3.1.4.4).
    pub(crate) fn next_frame(&mut self, now: Instant, cfg: &Config) -> Option<&InFlight> {
        let max = cfg.max_frame_payload();
        let msg = self.queue.front_mut()?;
        let first = msg.offset == 0;
        let total = msg.data.len();
        let (payload, last) = match msg.body {
            // A whole single-frame message moves its bytes into the frame, without a copy.
            Body::Data if first && msg.data.len() <= max => (std::mem::take(&mut msg.data), true),
            Body::Data => {
                let end = msg.data.len().min(msg.offset.saturating_add(max));
                let piece = msg.data.get(msg.offset..end).unwrap_or_default().to_vec();
                msg.offset = end;
                (piece, end == msg.data.len())
            }
            Body::KeepAlive | Body::EndStream => (Vec::new(), true),
        };
        let command = msg.command(first, last);
        let control =
            if msg.body == Body::EndStream { DframeControl::END_STREAM } else { DframeControl::empty() };
        let keepalive = msg.body == Body::KeepAlive;
        let first_of: Vec<u64> = msg.id.filter(|_| first && msg.kind.reliable).into_iter().collect();
        let mut done = Vec::new();
        if last && let Some(msg) = self.queue.pop_front() {
            self.queued_bytes -= total;
            self.last_frame_of(&msg, &mut done);
        }
        self.put_in_flight(now, cfg, NewFrame { command, control, keepalive, payload, done, first_of })
    }

    /// The queue, for the coalescer to look at and take whole small messages from.
    pub(crate) fn queue_mut(&mut self) -> (&mut VecDeque<OutMessage>, &mut usize) {
        (&mut self.queue, &mut self.queued_bytes)
    }

    pub(crate) fn frame(&self, seq: u8) -> Option<&InFlight> {
        let oldest = self.inflight.front()?.seq;
        self.inflight.get(usize::from(distance(oldest, seq)))
    }

    /// A loss was detected, `seq` the latest frame lost: halve the congestion window (not below the initial
    /// window), once per loss event. Losses of frames sent before the last reduction belong to
    /// the event that caused it (RFC 6582's recovery point; MC-DPL8R 3.1.4.4 asks for
    /// TCP-friendly congestion control).
    fn on_loss(&mut self, cfg: &Config, seq: u8) {
        let oldest = self.inflight.front().map_or(seq, |f| f.seq);
        if self.recovery.is_some_and(|r| distance(oldest, seq) < distance(oldest, r)) {
            return;
        }
        self.cwnd = (self.cwnd / 2).max(cfg.initial_window());
        self.recovery = Some(self.next_seq);
        tracing::debug!(seq, cwnd = self.cwnd, "loss: window reduced");
    }

    /// Processes `bNRcv` and the SACK mask (MC-DPL8R 3.1.5.2.2-3). Frames the mask reports
    /// received are never retried; a frame still missing while one sent after it was received
    /// is lost: a reliable one is resent at once, an unreliable one goes into the send mask
    /// (decision in docs/decisions.md: this generalises the spec's 10 ms retry of the first
    /// frame of the window).
    pub(crate) fn on_ack(&mut self, now: Instant, cfg: &Config, n_rcv: u8, sack: u64) -> Acked {
        let mut result = Acked::default();
        let Some(oldest) = self.inflight.front().map(|f| f.seq) else { return result };
        // A bNRcv outside [oldest in flight, Next Send] is stale or forged: ignored.
        let count = usize::from(distance(oldest, n_rcv));
        if count > self.inflight.len() {
            return result;
        }
        let mut sample = None;
        let mut grow = 0u8;
        for mut frame in self.inflight.drain(..count) {
            if frame.state == FrameState::Sent {
                record_first(&mut self.first_frames, now, &frame);
            }
            self.completions.extend(frame.done.drain(..).map(|(id, _)| (id, SendOutcome::Acknowledged)));
            if frame.control.contains(DframeControl::END_STREAM) {
                result.end_stream = true;
            }
            match frame.state {
                FrameState::Sent if frame.retries == 0 => {
                    sample = Some(now.saturating_duration_since(frame.sent_at));
                }
                FrameState::Sacked => self.sacked = self.sacked.saturating_sub(1),
                _ => {}
            }
            if frame.state != FrameState::Masked {
                grow = grow.saturating_add(1);
            }
        }
        if self.recovery.is_some_and(|r| self.inflight.front().is_none_or(|f| distance(r, f.seq) <= WINDOW)) {
            self.recovery = None;
        }
        // The window grows by one per frame acknowledged (MC-DPL8R 3.1.4.4), during a loss
        // event too: the event already took its one reduction.
        let cwnd = self.cwnd.saturating_add(grow).min(cfg.max_window());
        if cwnd != self.cwnd {
            tracing::trace!(cwnd, "window grew");
        }
        self.cwnd = cwnd;
        if sack != 0 {
            self.apply_sack(now, sack, &mut sample);
        }
        if let Some(sample) = sample {
            self.sample_rtt(sample);
        }
        if sack != 0 {
            self.detect_losses(now, cfg, &mut result);
        }
        result
    }

    /// Marks the frames the SACK mask reports received: bit i is `bNRcv + 1 + i`, which after
    /// `bNRcv` was applied is in-flight index i + 1 (MC-DPL8R 3.1.5.2.3).
    fn apply_sack(&mut self, now: Instant, sack: u64, sample: &mut Option<Duration>) {
        for (i, frame) in self.inflight.iter_mut().enumerate().skip(1).take(64) {
            if sack >> (i - 1) & 1 == 1 && frame.state == FrameState::Sent {
                record_first(&mut self.first_frames, now, frame);
                frame.state = FrameState::Sacked;
                frame.deadline = None;
                self.sacked = self.sacked.saturating_add(1);
                if frame.retries == 0 {
                    *sample = Some(now.saturating_duration_since(frame.sent_at));
                }
            }
        }
    }

    /// Frames sent before the latest transmission the peer reported received, and still
    /// missing, are lost.
    fn detect_losses(&mut self, now: Instant, cfg: &Config, result: &mut Acked) {
        let Some(evidence) =
            self.inflight.iter().filter(|f| f.state == FrameState::Sacked).map(|f| f.sent_order).max()
        else {
            return;
        };
        let mut lost = None;
        for i in 0..self.inflight.len() {
            let next = self.inflight.get(i).map_or(1, |f| f.retries + 2);
            let interval = self.retry_interval(cfg, next);
            let order = self.sent_count + 1;
            let Some(frame) = self.inflight.get_mut(i) else { break };
            if frame.state != FrameState::Sent || frame.sent_order >= evidence {
                continue;
            }
            if frame.reliable() {
                // At the retry limit the timer decides, and ends the connection.
                if frame.retries >= cfg.max_retries {
                    continue;
                }
                frame.retries += 1;
                frame.sent_at = now;
                frame.sent_order = order;
                self.sent_count = order;
                result.resend.push(frame.seq);
                lost = Some(frame.seq);
            } else {
                frame.state = FrameState::Masked;
                result.newly_masked += 1;
                result.masked_bytes += frame.payload.len() as u64;
            }
            frame.deadline = Some(now + interval);
        }
        if let Some(seq) = lost {
            self.on_loss(cfg, seq);
        }
    }

    /// The send mask relative to `base` (a frame's `bSeq`, or `bNSeq` in a SACK): bit i stands
    /// for `base - 1 - i` (MC-DPL8R 3.1.5.2.4; decision F-10).
    pub(crate) fn send_mask(&self, base: u8) -> u64 {
        let mut mask = 0u64;
        for frame in self.inflight.iter().filter(|f| f.state == FrameState::Masked) {
            let back = distance(frame.seq, base);
            if (1..=64).contains(&back) {
                mask |= 1 << (back - 1);
            }
        }
        mask
    }

    /// The earliest retry deadline.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.inflight.iter().filter_map(|f| f.deadline).min()
    }

    /// Handles the frames whose retry deadline passed (MC-DPL8R 3.1.6.5).
    pub(crate) fn on_retry_timer(&mut self, now: Instant, cfg: &Config) -> Retried {
        let mut out = Retried::default();
        let mut lost = None;
        for i in 0..self.inflight.len() {
            let Some(frame) = self.inflight.get(i) else { break };
            if frame.deadline.is_none_or(|d| d > now) {
                continue;
            }
            let next = self.retry_interval(cfg, frame.retries + 2);
            let order = self.sent_count + 1;
            let Some(frame) = self.inflight.get_mut(i) else { break };
            if frame.retries >= cfg.max_retries {
                tracing::debug!(
                    seq = frame.seq,
                    retries = frame.retries,
                    "retry limit reached: connection lost"
                );
                out.lost = true;
                return out;
            }
            match (frame.state, frame.reliable()) {
                (FrameState::Sent, true) => {
                    frame.retries += 1;
                    tracing::trace!(seq = frame.seq, retry = frame.retries, "frame retried");
                    frame.sent_at = now;
                    frame.sent_order = order;
                    self.sent_count = order;
                    out.resend.push(frame.seq);
                    lost = Some(frame.seq);
                }
                (FrameState::Sent, false) => {
                    frame.state = FrameState::Masked;
                    out.newly_masked += 1;
                    out.masked_bytes += frame.payload.len() as u64;
                }
                (FrameState::Masked, _) => {
                    frame.retries += 1;
                    out.announce_mask = true;
                }
                (FrameState::Sacked, _) => {}
            }
            frame.deadline = Some(now + next);
        }
        if let Some(seq) = lost {
            self.on_loss(cfg, seq);
        }
        out
    }
}
