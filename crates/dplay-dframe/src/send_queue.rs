//! The sending half of a connection: the message queue, the frames in flight with their retry
//! deadlines, acknowledgement by `bNRcv` and SACK masks, the send mask of unreliable frames that
//! will never be resent, RTT and the congestion window (MC-DPL8R 3.1.4.4, 3.1.5.2.2-3,
//! 3.1.6.5).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use crate::config::Config;
use crate::event::MessageKind;
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
}

impl OutMessage {
    pub(crate) fn new(data: Vec<u8>, kind: MessageKind, body: Body) -> Self {
        Self { data, kind, body, offset: 0 }
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
    pub(crate) state: FrameState,
    sent_at: Instant,
    /// Retries sent (or send-mask announcements, once masked).
    retries: u32,
    deadline: Option<Instant>,
    gap_shortened: bool,
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
}

/// What the retry timer did (MC-DPL8R 3.1.6.5).
#[derive(Debug, Default)]
pub(crate) struct Retried {
    /// Sequence numbers to resend now.
    pub(crate) resend: Vec<u8>,
    /// An unreliable frame timed out: arm the delayed send mask timer.
    pub(crate) newly_masked: u64,
    /// A send mask needs announcing again: send a SACK now.
    pub(crate) announce_mask: bool,
    /// A frame reached the retry limit: the connection is lost.
    pub(crate) lost: bool,
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
    srtt: Option<Duration>,
}

impl Sender {
    pub(crate) fn new(cfg: &Config) -> Self {
        Self {
            queue: VecDeque::new(),
            queued_bytes: 0,
            inflight: VecDeque::new(),
            next_seq: 0,
            cwnd: cfg.initial_window.clamp(1, cfg.max_window.clamp(1, WINDOW)),
            srtt: None,
        }
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

    /// Records an RTT sample: a running average weighting the new sample 1/8 (MC-DPL8R 3.1.1).
    pub(crate) fn sample_rtt(&mut self, sample: Duration) {
        self.srtt = Some(match self.srtt {
            None => sample,
            Some(old) => (old * 7 + sample) / 8,
        });
    }

    pub(crate) fn push(&mut self, msg: OutMessage) {
        self.queued_bytes += msg.data.len();
        self.queue.push_back(msg);
    }

    /// True when nothing is queued or in flight.
    pub(crate) fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.inflight.is_empty()
    }

    /// Drops everything queued and in flight (hard disconnect, MC-DPL8R 3.1.4.5).
    pub(crate) fn clear(&mut self) {
        self.queue.clear();
        self.inflight.clear();
        self.queued_bytes = 0;
    }

    /// The wait before retry `n` (1-based): 2.5 RTT plus the delayed-ACK time, linear backoff
    /// for retries 2-3, exponential for 4-8, capped (MC-DPL8R 3.1.2.5).
    pub(crate) fn retry_interval(&self, cfg: &Config, n: u32) -> Duration {
        let rtt = self.srtt.unwrap_or(cfg.initial_rtt);
        let base = rtt * 5 / 2 + cfg.delayed_ack;
        let factor = match n {
            0..=3 => n.max(1),
            4..=8 => 3 << (n - 3),
            _ => 3 << 5,
        };
        (base * factor).min(cfg.retry_max_interval)
    }

    /// True when a new frame may go out: something is queued and the window has room
    /// (never more than 64 in flight, MC-DPL8R 3.1.4.4).
    pub(crate) fn can_send(&self, cfg: &Config) -> bool {
        let limit = usize::from(self.cwnd.min(cfg.max_window).min(WINDOW));
        !self.queue.is_empty() && self.inflight.len() < limit
    }

    /// True when, after the frame just built, the sender must wait: nothing queued or the
    /// window full. Such a frame carries POLL so the peer acknowledges at once.
    pub(crate) fn wants_poll(&self, cfg: &Config) -> bool {
        !self.can_send(cfg)
    }

    /// Takes the next frame's worth from the queue, assigns it Next Send and puts it in flight.
    /// Large messages are split; no other message's frames are interleaved (MC-DPL8R 3.1.4.4).
    pub(crate) fn next_frame(&mut self, now: Instant, cfg: &Config) -> Option<&InFlight> {
        let max = cfg.max_frame_payload();
        let msg = self.queue.front_mut()?;
        let first = msg.offset == 0;
        let (payload, last) = match msg.body {
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
        if last && let Some(done) = self.queue.pop_front() {
            self.queued_bytes -= done.data.len();
        }
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        let deadline = Some(now + self.retry_interval(cfg, 1));
        self.inflight.push_back(InFlight {
            seq,
            command,
            control,
            keepalive,
            payload,
            state: FrameState::Sent,
            sent_at: now,
            retries: 0,
            deadline,
            gap_shortened: false,
        });
        self.inflight.back()
    }

    /// Puts an already-built frame in flight (a coalesced frame built by the caller).
    pub(crate) fn push_built(
        &mut self,
        now: Instant,
        cfg: &Config,
        command: DframeCommand,
        control: DframeControl,
        payload: Vec<u8>,
    ) -> Option<&InFlight> {
        let seq = self.next_seq;
        self.next_seq = seq.wrapping_add(1);
        let deadline = Some(now + self.retry_interval(cfg, 1));
        self.inflight.push_back(InFlight {
            seq,
            command,
            control,
            keepalive: false,
            payload,
            state: FrameState::Sent,
            sent_at: now,
            retries: 0,
            deadline,
            gap_shortened: false,
        });
        self.inflight.back()
    }

    /// The queue, for the coalescer to look at and take whole small messages from.
    pub(crate) fn queue_mut(&mut self) -> (&mut VecDeque<OutMessage>, &mut usize) {
        (&mut self.queue, &mut self.queued_bytes)
    }

    pub(crate) fn frame(&self, seq: u8) -> Option<&InFlight> {
        let oldest = self.inflight.front()?.seq;
        self.inflight.get(usize::from(distance(oldest, seq)))
    }

    /// Processes `bNRcv` and the SACK mask (MC-DPL8R 3.1.5.2.2-3).
    pub(crate) fn on_ack(&mut self, now: Instant, cfg: &Config, n_rcv: u8, sack: u64) -> Acked {
        let mut result = Acked::default();
        let Some(oldest) = self.inflight.front().map(|f| f.seq) else { return result };
        // A bNRcv outside [oldest in flight, Next Send] is stale or forged: ignored.
        let count = usize::from(distance(oldest, n_rcv));
        if count > self.inflight.len() {
            return result;
        }
        let mut sample = None;
        for frame in self.inflight.drain(..count) {
            if frame.control.contains(DframeControl::END_STREAM) {
                result.end_stream = true;
            }
            if frame.state == FrameState::Sent && frame.retries == 0 {
                sample = Some(now.saturating_duration_since(frame.sent_at));
            }
            if frame.reliable() && frame.state != FrameState::Masked {
                self.cwnd = self.cwnd.saturating_add(1).min(cfg.max_window.min(WINDOW));
            }
        }
        if let Some(sample) = sample {
            self.sample_rtt(sample);
        }
        if sack != 0 {
            for (i, frame) in self.inflight.iter_mut().enumerate().skip(1).take(64) {
                if sack >> (i - 1) & 1 == 1 && frame.state == FrameState::Sent {
                    frame.state = FrameState::Sacked;
                    frame.deadline = None;
                }
            }
            // The first frame of the window is missing at the peer: retry it soon, once.
            if let Some(first) = self.inflight.front_mut()
                && first.state == FrameState::Sent
                && first.reliable()
                && !first.gap_shortened
            {
                first.gap_shortened = true;
                let soon = now + cfg.sack_gap_retry;
                first.deadline = Some(first.deadline.map_or(soon, |d| d.min(soon)));
            }
        }
        result
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
        let mut intervals = Vec::new();
        for (i, frame) in self.inflight.iter().enumerate() {
            if frame.deadline.is_some_and(|d| d <= now) {
                intervals.push((i, self.retry_interval(cfg, frame.retries + 2)));
            }
        }
        let mut lossy = false;
        for (i, next) in intervals {
            let Some(frame) = self.inflight.get_mut(i) else { continue };
            if frame.retries >= cfg.max_retries {
                out.lost = true;
                return out;
            }
            match (frame.state, frame.reliable()) {
                (FrameState::Sent, true) => {
                    frame.retries += 1;
                    out.resend.push(frame.seq);
                    lossy = true;
                }
                (FrameState::Sent, false) => {
                    frame.state = FrameState::Masked;
                    out.newly_masked += 1;
                }
                (FrameState::Masked, _) => {
                    frame.retries += 1;
                    out.announce_mask = true;
                }
                (FrameState::Sacked, _) => {}
            }
            frame.deadline = Some(now + next);
        }
        if lossy {
            self.cwnd = (self.cwnd / 2).max(cfg.initial_window.max(1));
        }
        out
    }
}
