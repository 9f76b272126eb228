//! The sending half of a link: framing messages, the sequence and messageid windows, serials,
//! SAK, and resends on NACK and on the retry timer (MC-DPL4R 2.2.2, 3.1.2, 3.1.3, 3.1.5.3,
//! 6 <8>).

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use dplay_wire::Blob;
use dplay_wire::dp4::reliable::{DataFrame, FrameBody, ReliableFlags};

use super::Config;
use super::config::MAX_OUTSTANDING_MESSAGES;
use super::rtt::{PeerRate, Rtt};

/// A data frame sent and not yet acknowledged.
#[derive(Debug, Clone)]
pub(crate) struct SentFrame {
    pub(crate) seq: u8,
    pub(crate) msg_id: u8,
    flags: ReliableFlags,
    /// The `serial` it was last sent with.
    pub(crate) serial: u8,
    data: Vec<u8>,
    pub(crate) first_sent: Instant,
    last_sent: Instant,
    pub(crate) sends: u32,
    /// A NACK said the peer holds it (MC-DPL4R 3.1.5.3: a 0 bit in the mask).
    sacked: bool,
}

impl SentFrame {
    fn body(&self) -> FrameBody {
        FrameBody::Data(DataFrame {
            flags: self.flags,
            message_id: self.msg_id,
            sequence: self.seq,
            serial: self.serial,
            nack: None,
            data: Blob::new(&self.data),
        })
    }
}

/// A message waiting for the windows.
#[derive(Debug)]
struct Queued {
    data: Vec<u8>,
    reliable: bool,
}

/// The message being cut into frames.
#[derive(Debug)]
struct Framing {
    msg_id: u8,
    data: Vec<u8>,
    reliable: bool,
    offset: usize,
}

/// What an ACK or NACK did to the send side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AckOutcome {
    /// Applied (possibly acknowledging nothing new).
    Applied,
    /// Older than what was already acknowledged.
    Stale,
    /// For a sequence never sent.
    Bad,
}

/// One link's sender.
#[derive(Debug)]
pub(crate) struct Sender {
    next_seq: u8,
    next_msg: u8,
    queue: VecDeque<Queued>,
    pub(crate) queued_bytes: usize,
    framing: Option<Framing>,
    pub(crate) in_flight: VecDeque<SentFrame>,
    /// `serial` counters of multi-frame messages in flight (MC-DPL4R 2.2.2).
    serials: BTreeMap<u8, u8>,
    last_sak: Option<Instant>,
    since_sak: u32,
    pub(crate) rtt: Rtt,
    pub(crate) peer: PeerRate,
}

impl Sender {
    /// Sequence and messageid both start at 1 (MC-DPL4R 3.1.3, 2.2.2; decision F-30).
    pub(crate) fn new() -> Self {
        Self {
            next_seq: 1,
            next_msg: 1,
            queue: VecDeque::new(),
            queued_bytes: 0,
            framing: None,
            in_flight: VecDeque::new(),
            serials: BTreeMap::new(),
            last_sak: None,
            since_sak: 0,
            rtt: Rtt::new(),
            peer: PeerRate::default(),
        }
    }

    /// Payload bytes we hold for the peer: messages queued, the rest of the one being framed,
    /// and frames not yet acknowledged. A peer that acknowledges slowly makes us keep them
    /// (docs/limits.md). O(window).
    pub(crate) fn held_bytes(&self) -> usize {
        let framing = self.framing.as_ref().map_or(0, |f| f.data.len().saturating_sub(f.offset));
        let in_flight: usize = self.in_flight.iter().map(|f| f.data.len()).sum();
        self.queued_bytes.saturating_add(framing).saturating_add(in_flight)
    }

    pub(crate) fn enqueue(&mut self, data: Vec<u8>, reliable: bool) {
        self.queued_bytes += data.len();
        self.queue.push_back(Queued { data, reliable });
    }

    /// The oldest messageid not yet acknowledged (MC-DPL4R 3.1.1 "First Message").
    fn first_message(&self) -> u8 {
        self.in_flight
            .front()
            .map(|f| f.msg_id)
            .or(self.framing.as_ref().map(|f| f.msg_id))
            .unwrap_or(self.next_msg)
    }

    /// Frames what the windows allow: at most `window` frames and 24 messageids outstanding
    /// (MC-DPL4R 2.2.2).
    pub(crate) fn pump(&mut self, config: &Config, now: Instant, out: &mut Vec<FrameBody>) {
        while self.in_flight.len() < usize::from(config.window) {
            if self.framing.is_none() {
                if self.next_msg.wrapping_sub(self.first_message()) >= MAX_OUTSTANDING_MESSAGES {
                    break;
                }
                let Some(q) = self.queue.pop_front() else { break };
                self.queued_bytes = self.queued_bytes.saturating_sub(q.data.len());
                self.framing =
                    Some(Framing { msg_id: self.next_msg, data: q.data, reliable: q.reliable, offset: 0 });
                self.next_msg = self.next_msg.wrapping_add(1);
            }
            let Some(f) = self.framing.as_mut() else { break };
            let end = f.offset.saturating_add(config.frame_data_len()).min(f.data.len());
            let data = f.data.get(f.offset..end).unwrap_or_default().to_vec();
            let (sta, eom) = (f.offset == 0, end >= f.data.len());
            let (msg_id, reliable) = (f.msg_id, f.reliable);
            f.offset = end;
            if eom {
                self.framing = None;
            }
            let serial = if sta && eom {
                0
            } else {
                // 0 on the first frame, then +1 per frame and per retry (2.2.2 `serial`).
                let s = self.serials.entry(msg_id).or_insert(0);
                if !sta {
                    *s = s.wrapping_add(1);
                }
                *s
            };
            let mut flags = ReliableFlags::CMD;
            flags.set(ReliableFlags::STA, sta);
            flags.set(ReliableFlags::EOM, eom);
            flags.set(ReliableFlags::RLY, reliable);
            let fills_window = self.in_flight.len() + 1 >= usize::from(config.window);
            if self.sak_due(config, now, eom, reliable) || fills_window {
                flags |= ReliableFlags::SAK;
            }
            let frame = SentFrame {
                seq: self.next_seq,
                msg_id,
                flags,
                serial,
                data,
                first_sent: now,
                last_sent: now,
                sends: 1,
                sacked: false,
            };
            self.next_seq = self.next_seq.wrapping_add(1);
            out.push(frame.body());
            self.in_flight.push_back(frame);
        }
    }

    /// Whether a new frame asks for an immediate ACK (MC-DPL4R 6 <8>): every 24th frame, or
    /// when it is not the end of an unreliable message and 50 ms and a quarter round trip
    /// have passed since the last SAK. The caller also asks when the frame fills the window,
    /// which would otherwise wait for the peer's delayed ACK (docs/decisions.md).
    fn sak_due(&mut self, config: &Config, now: Instant, eom: bool, reliable: bool) -> bool {
        self.since_sak += 1;
        let quiet = self.last_sak.is_none_or(|t| {
            let since = now.saturating_duration_since(t);
            since > config.sak_interval && since > self.rtt.estimate(config) / 4
        });
        let due = self.since_sak >= u32::from(MAX_OUTSTANDING_MESSAGES) || ((!eom || reliable) && quiet);
        if due {
            self.last_sak = Some(now);
            self.since_sak = 0;
        }
        due
    }

    /// Sends frame `i` again, with SAK as every retransmission has (6 <8>) and its serial
    /// advanced (2.2.2).
    fn resend(&mut self, i: usize, now: Instant, out: &mut Vec<FrameBody>) {
        let Some(f) = self.in_flight.get_mut(i) else { return };
        f.sends = f.sends.saturating_add(1);
        f.serial = if f.flags.contains(ReliableFlags::STA | ReliableFlags::EOM) {
            u8::try_from(f.sends - 1).unwrap_or(u8::MAX)
        } else {
            let s = self.serials.entry(f.msg_id).or_insert(0);
            *s = s.wrapping_add(1);
            *s
        };
        f.flags |= ReliableFlags::SAK;
        f.last_sent = now;
        out.push(f.body());
        self.last_sak = Some(now);
        self.since_sak = 0;
    }

    /// Acknowledges every frame up to `seq`, as a NACK does for the frames before its own
    /// (MC-DPL4R 3.1.5.3); returns the last frame acknowledged, if any.
    fn ack_through(&mut self, seq: u8) -> Result<Option<SentFrame>, AckOutcome> {
        let Some(front) = self.in_flight.front() else {
            return if seq == self.next_seq.wrapping_sub(1) { Ok(None) } else { Err(self.classify(seq)) };
        };
        let ahead = seq.wrapping_sub(front.seq);
        if ahead >= 128 {
            // At or before the last acknowledged frame.
            return if seq == front.seq.wrapping_sub(1) { Ok(None) } else { Err(AckOutcome::Stale) };
        }
        let n = usize::from(ahead) + 1;
        if n > self.in_flight.len() {
            return Err(AckOutcome::Bad);
        }
        let last = self.in_flight.drain(..n).next_back();
        let live: Vec<u8> = self.in_flight.iter().map(|f| f.msg_id).collect();
        let current = self.framing.as_ref().map(|f| f.msg_id);
        self.serials.retain(|id, _| live.contains(id) || Some(*id) == current);
        self.rtt.acked();
        Ok(last)
    }

    fn classify(&self, seq: u8) -> AckOutcome {
        if self.next_seq.wrapping_sub(1).wrapping_sub(seq) < 128 {
            AckOutcome::Stale
        } else {
            AckOutcome::Bad
        }
    }

    /// Frees the frames of message `msg_id` up to `seq`: an ACK acknowledges the message it
    /// names (3.1.5.3; the earlier ones "MAY" be discarded, which Windows does not, 6, and a
    /// receiver that passes a hole names messages beyond it); returns the frame at `seq`.
    fn ack_named(&mut self, msg_id: u8, seq: u8) -> Result<Option<SentFrame>, AckOutcome> {
        let Some(front) = self.in_flight.front() else {
            return if seq == self.next_seq.wrapping_sub(1) { Ok(None) } else { Err(self.classify(seq)) };
        };
        let front_seq = front.seq;
        if seq.wrapping_sub(front_seq) >= 128 {
            return if seq == front_seq.wrapping_sub(1) { Ok(None) } else { Err(AckOutcome::Stale) };
        }
        let Some(at) = self.in_flight.iter().position(|f| f.seq == seq) else {
            return Err(if seq.wrapping_sub(self.next_seq) < 128 {
                AckOutcome::Bad
            } else {
                AckOutcome::Stale
            });
        };
        let named = |f: &SentFrame| {
            f.msg_id == msg_id && f.seq.wrapping_sub(front_seq) <= seq.wrapping_sub(front_seq)
        };
        let last = self.in_flight.get(at).filter(|f| f.msg_id == msg_id).cloned();
        let before = self.in_flight.len();
        self.in_flight.retain(|f| !named(f));
        if self.in_flight.len() < before {
            let live: Vec<u8> = self.in_flight.iter().map(|f| f.msg_id).collect();
            let current = self.framing.as_ref().map(|f| f.msg_id);
            self.serials.retain(|id, _| live.contains(id) || Some(*id) == current);
            self.rtt.acked();
        }
        Ok(last)
    }

    /// An ACK frame (MC-DPL4R 2.2.4, 3.1.5.3). A round-trip sample is taken when its serial
    /// echoes the send it answers.
    pub(crate) fn on_ack(
        &mut self,
        now: Instant,
        msg_id: u8,
        seq: u8,
        serial: u8,
        bytes: u32,
        tick: u32,
    ) -> AckOutcome {
        match self.ack_named(msg_id, seq) {
            Err(outcome) => outcome,
            Ok(last) => {
                self.peer.update(bytes, tick);
                if let Some(f) = last.filter(|f| f.serial == serial) {
                    self.rtt.sample(now.saturating_duration_since(f.last_sent));
                }
                AckOutcome::Applied
            }
        }
    }

    /// A NACK frame (MC-DPL4R 2.2.3, 3.1.5.3): everything before `seq` arrived; `seq` and the
    /// frames whose mask bit is 1 did not and are resent (unless sent within half a round
    /// trip, which a repeated NACK cannot have seen); those whose bit is 0, below the last 1
    /// bit, arrived.
    pub(crate) fn on_nack(
        &mut self,
        now: Instant,
        seq: u8,
        mask: (u8, u32),
        bytes: u32,
        tick: u32,
        out: &mut Vec<FrameBody>,
    ) -> (AckOutcome, u64) {
        if let Err(outcome) = self.ack_through(seq.wrapping_sub(1)) {
            return (outcome, 0);
        }
        self.peer.update(bytes, tick);
        let (len, bits) = mask;
        // A 0 bit says "held" only up to the last 1 bit: past it the mask is padding, and the
        // receiver cannot know of frames beyond the last one it holds.
        let span = (u32::from(len) * 8).min(32 - bits.leading_zeros());
        let holdoff = self.rtt.srtt.map_or(Duration::ZERO, |rtt| rtt / 2);
        let mut resent = 0;
        for i in 0..self.in_flight.len() {
            let Some(f) = self.in_flight.get_mut(i) else { break };
            let d = u32::from(f.seq.wrapping_sub(seq));
            let missing = d == 0 || (d <= span && bits >> (d - 1) & 1 == 1);
            if d >= 1 && d <= span && !missing {
                f.sacked = true;
            }
            if missing && now.saturating_duration_since(f.last_sent) >= holdoff {
                self.resend(i, now, out);
                resent += 1;
            }
        }
        (AckOutcome::Applied, resent)
    }

    /// When the retry timer of this link expires: the earliest last send, among frames not
    /// reported held and the oldest frame, plus the retry time-out (MC-DPL4R 3.1.2).
    pub(crate) fn retry_deadline(&self, config: &Config) -> Option<Instant> {
        let rto = self.rtt.rto(config);
        self.in_flight
            .iter()
            .enumerate()
            .filter(|(i, f)| *i == 0 || !f.sacked)
            .map(|(_, f)| f.last_sent.checked_add(rto).unwrap_or(f.last_sent))
            .min()
    }

    /// The oldest frame's sends and age, if the link must give up on it.
    pub(crate) fn give_up(&self, config: &Config, now: Instant) -> Option<(u32, Duration)> {
        let f = self.in_flight.front()?;
        let elapsed = now.saturating_duration_since(f.first_sent);
        (f.sends >= config.give_up_sends && elapsed >= config.give_up_after).then_some((f.sends, elapsed))
    }

    /// The retry timer expired: resend every due frame, then back off (MC-DPL4R 3.1.2).
    pub(crate) fn on_retry(&mut self, config: &Config, now: Instant, out: &mut Vec<FrameBody>) -> u64 {
        let rto = self.rtt.rto(config);
        let due: Vec<usize> = self
            .in_flight
            .iter()
            .enumerate()
            .filter(|(i, f)| (*i == 0 || !f.sacked) && now.saturating_duration_since(f.last_sent) >= rto)
            .map(|(i, _)| i)
            .collect();
        for &i in &due {
            self.resend(i, now, out);
        }
        if !due.is_empty() {
            self.rtt.expired();
        }
        due.len() as u64
    }
}
