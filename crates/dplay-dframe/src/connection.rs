//! One connection's state machine: the phase, the two window halves, the timer table and the
//! counters, with the DFRAME and SACK receive paths (MC-DPL8R 3.1.5.2) and frame emission.
//! The handshake, keepalive and disconnect rules live in their own modules as further
//! `impl Connection` blocks.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_wire::Wire;
use dplay_wire::dp8::cframe::{Cframe, Masks, Sack};
use dplay_wire::dp8::dframe::{DframeCommand, DframeContext, DframeControl, DframeHeader};

use crate::config::{COALESCE_VERSION, Config};
use crate::endpoint::Transmit;
use crate::event::{DisconnectReason, Event, SendOutcome};
use crate::handshake::Handshake;
use crate::receive::{Accept, Frame, Receiver};
use crate::send_queue::Sender;
use crate::seq::distance;
use crate::signing::FastSigning;
use crate::stats::{DropReason, Stats};
use crate::timer::{Timer, TimerTable};

/// Where a connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// CONNECT or CONNECTED sent, waiting for the other side (MC-DPL8R 3.1 figure 1).
    Handshake,
    /// Both sides have exchanged CONNECTED.
    Established,
    /// Closed gracefully; still acknowledging the peer's retries until the linger timer.
    Lingering,
    /// Sending the remaining HARD_DISCONNECT frames (MC-DPL8R 3.1.4.5).
    Aborting {
        /// HARD_DISCONNECT frames sent so far.
        sent: u32,
    },
    /// Gone: the endpoint removes it.
    Finished,
}

/// Where the connection's output goes.
pub(crate) struct Out<'a> {
    pub(crate) transmits: &'a mut VecDeque<Transmit>,
    pub(crate) events: &'a mut VecDeque<Event>,
    /// Empty datagram buffers to reuse.
    pub(crate) spare: &'a mut Vec<Vec<u8>>,
}

impl Out<'_> {
    /// An empty buffer for a datagram: a reused one when there is one.
    fn buffer(&mut self) -> Vec<u8> {
        self.spare.pop().unwrap_or_default()
    }
}

/// One DirectPlay 8 connection.
#[derive(Debug)]
pub(crate) struct Connection {
    pub(crate) peer: SocketAddr,
    pub(crate) epoch: Instant,
    pub(crate) outbound: bool,
    /// `dwSessID` of the CONNECT that opened it (MC-DPL8R 3.1.1).
    pub(crate) sess_id: u32,
    /// The peer's `dwCurrentProtocolVersion`.
    pub(crate) peer_version: u32,
    pub(crate) phase: Phase,
    /// `bMsgID` of our next non-SACK CFRAME.
    pub(crate) msg_id: u8,
    pub(crate) handshake: Handshake,
    pub(crate) sender: Sender,
    pub(crate) receiver: Receiver,
    pub(crate) timers: TimerTable,
    pub(crate) stats: Stats,
    pub(crate) last_rx: Instant,
    /// Send a SACK at the next flush unless a DFRAME carries the acknowledgement.
    pub(crate) ack_now: bool,
    /// `bRetry` of our next SACK: the last DFRAME received was a retry.
    pub(crate) last_rx_retry: bool,
    /// A graceful close is under way; `Some(true)` when we started it.
    pub(crate) closing: Option<bool>,
    pub(crate) end_acked: bool,
    pub(crate) peer_end: bool,
    /// The peer's END_STREAM just arrived: SACKs are owed even if a DFRAME carries the ACK.
    pub(crate) end_sacks_owed: bool,
    /// The deadline the endpoint's timer heap holds for this connection.
    pub(crate) scheduled: Option<Instant>,
    /// The secrets of a fast-signed connection; a connector holds them from its CONNECT on
    /// (MC-DPL8R 3.1.4.4).
    pub(crate) signing: Option<FastSigning>,
}

impl Connection {
    pub(crate) fn new(
        cfg: &Config,
        peer: SocketAddr,
        now: Instant,
        epoch: Instant,
        outbound: bool,
        sess_id: u32,
        budget: &dplay_wire::budget::MemoryBudget,
    ) -> Self {
        Self {
            peer,
            epoch,
            outbound,
            sess_id,
            peer_version: cfg.protocol_version,
            phase: Phase::Handshake,
            msg_id: 0,
            handshake: Handshake::new(cfg, now),
            sender: Sender::new(cfg, budget.account()),
            receiver: Receiver::new(cfg.max_message_size, budget.account()),
            timers: TimerTable::default(),
            stats: Stats::default(),
            last_rx: now,
            ack_now: false,
            last_rx_retry: false,
            closing: None,
            end_acked: false,
            peer_end: false,
            end_sacks_owed: false,
            scheduled: None,
            signing: None,
        }
    }

    /// The version both sides speak: the lower of the two (decision F-2).
    pub(crate) fn version(&self, cfg: &Config) -> u32 {
        self.peer_version.min(cfg.protocol_version)
    }

    /// KeepAlives carry `dwSessID` and coalescing is allowed (MC-DPL8R 1.7, 2.2.2; F-3).
    pub(crate) fn modern(&self, cfg: &Config) -> bool {
        self.version(cfg) >= COALESCE_VERSION
    }

    pub(crate) fn timestamp(&self, now: Instant) -> u32 {
        #[allow(clippy::cast_possible_truncation)] // tTimestamp is a wrapping millisecond tick
        let ms = now.saturating_duration_since(self.epoch).as_millis() as u32;
        ms
    }

    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.timers.next()
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.phase == Phase::Finished
    }

    pub(crate) fn emit_cframe(&mut self, frame: &Cframe, out: &mut Out<'_>) {
        let mut contents = out.buffer();
        contents.resize(frame.encoded_len(), 0);
        // Every value we build is encodable; a failure would be a bug, so nothing is sent.
        if frame.emit(&mut contents).is_err() {
            return;
        }
        self.stats.sent(contents.len());
        out.transmits.push_back(Transmit { destination: self.peer, contents });
    }

    /// Ends the connection for `reason` and tells the caller.
    pub(crate) fn finish(&mut self, reason: DisconnectReason, out: &mut Out<'_>) {
        self.report(reason, out);
        self.phase = Phase::Finished;
        self.timers.stop_all();
    }

    pub(crate) fn report(&mut self, reason: DisconnectReason, out: &mut Out<'_>) {
        self.report_sends(out);
        let peer = self.peer;
        for id in self.sender.abandon() {
            let outcome = SendOutcome::Failed(reason);
            out.events.push_back(Event::SendDone { peer, id, outcome, first_frame: None });
        }
        self.stats = self.stats_now();
        tracing::debug!(?reason, rtt = ?self.stats.rtt, drops = self.stats.drops.total(), "disconnected");
        out.events.push_back(Event::Disconnected { peer: self.peer, reason, stats: Box::new(self.stats) });
    }

    /// The counters, with those the sender keeps.
    pub(crate) fn stats_now(&self) -> Stats {
        let mut s = self.stats;
        s.rtt = self.sender.rtt();
        s.messages_transmitted = self.sender.transmitted;
        s.messages_timed_out = self.sender.timed_out;
        s
    }

    /// Reports the tracked messages done with.
    pub(crate) fn report_sends(&mut self, out: &mut Out<'_>) {
        let peer = self.peer;
        for (id, outcome) in self.sender.completions.drain(..) {
            let first_frame = self.sender.first_frames.remove(&id);
            out.events.push_back(Event::SendDone { peer, id, outcome, first_frame });
        }
    }

    /// A dedicated SACK with the current state (MC-DPL8R 2.2.1.5, 3.1.6.2-3).
    pub(crate) fn send_sack(&mut self, now: Instant, out: &mut Out<'_>) {
        let n_seq = self.sender.next_seq();
        let sack = Sack {
            poll: false,
            response: true,
            retry: u8::from(self.last_rx_retry),
            n_seq,
            n_rcv: self.receiver.next(),
            timestamp: self.timestamp(now),
            masks: Masks::new(self.receiver.sack_mask(), self.sender.send_mask(n_seq)),
            signature: self.signature(),
        };
        self.emit_cframe(&Cframe::Sack(sack), out);
        self.acknowledged();
    }

    /// Our latest acknowledgement state went out: the delayed ACK and send mask timers stop.
    fn acknowledged(&mut self) {
        self.ack_now = false;
        self.timers.stop(Timer::DelayedAck);
        self.timers.stop(Timer::DelayedSendMask);
    }

    /// Emits the frame `seq` from the send window with the latest header (MC-DPL8R 3.1.6.5).
    pub(crate) fn emit_dframe(&mut self, cfg: &Config, seq: u8, retry: bool, poll: bool, out: &mut Out<'_>) {
        let modern = self.modern(cfg);
        let sess_id = self.sess_id;
        let signature = self.signature();
        let Some(frame) = self.sender.frame(seq) else { return };
        let mut command = frame.command;
        command.set(DframeCommand::POLL, poll || retry);
        let mut control = frame.control;
        control.set(DframeControl::RETRY, retry);
        let keepalive = frame.keepalive && modern;
        control.set(DframeControl::KEEPALIVE_OR_CORRELATE, keepalive);
        let header = DframeHeader {
            command,
            control,
            seq,
            n_rcv: self.receiver.next(),
            masks: Masks::new(self.receiver.sack_mask(), self.sender.send_mask(seq)),
            signature,
            sess_id: keepalive.then_some(sess_id),
        };
        let mut contents = out.buffer();
        contents.resize(header.len(), 0);
        if header.emit(&mut contents).is_err() {
            return;
        }
        let stripped = (retry && control.contains(DframeControl::COALESCE))
            .then(|| crate::coalesce::strip_unreliable(&frame.payload))
            .flatten();
        contents.extend_from_slice(stripped.as_deref().unwrap_or(&frame.payload));
        self.stats.sent(contents.len());
        let bytes = contents.len() as u64;
        if retry {
            self.stats.retransmissions += 1;
            self.stats.retransmitted_bytes += bytes;
        } else if command.contains(DframeCommand::RELIABLE) {
            self.stats.reliable_frames_sent += 1;
            self.stats.reliable_bytes_sent += bytes;
        } else {
            self.stats.unreliable_frames_sent += 1;
            self.stats.unreliable_bytes_sent += bytes;
        }
        out.transmits.push_back(Transmit { destination: self.peer, contents });
        self.acknowledged();
    }

    /// Sends what may be sent now: new frames while the window allows, then a dedicated SACK if
    /// one is still owed; re-arms the retry timer; completes a graceful close.
    pub(crate) fn flush(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        self.sender.expire(now);
        if matches!(self.phase, Phase::Established) {
            while self.sender.can_send(cfg) {
                let Some(seq) = self.next_new_frame(now, cfg) else { break };
                let poll = self.sender.take_poll(cfg);
                self.emit_dframe(cfg, seq, false, poll, out);
            }
        }
        if (self.ack_now || self.end_sacks_owed)
            && matches!(self.phase, Phase::Established | Phase::Lingering)
        {
            self.end_sacks_owed = false;
            // Once the peer's END_STREAM is in, every SACK goes out several times, as MS-DPDX
            // 3.1.5.3 does: it is the last word and nothing retries it.
            let copies = if self.peer_end { cfg.end_stream_sacks.max(1) } else { 1 };
            for _ in 0..copies {
                self.send_sack(now, out);
            }
        }
        match self.sender.next_deadline() {
            Some(at) if self.phase == Phase::Established => self.timers.set(Timer::Retry, at),
            _ => self.timers.stop(Timer::Retry),
        }
        match self.sender.next_expiry() {
            Some(at) if self.is_open() => self.timers.set(Timer::SendDeadline, at),
            _ => self.timers.stop(Timer::SendDeadline),
        }
        self.report_sends(out);
        self.check_closed(now, cfg, out);
    }

    /// Handles a DFRAME from the peer (MC-DPL8R 3.1.5.2).
    pub(crate) fn handle_dframe(&mut self, now: Instant, cfg: &Config, bytes: &[u8], out: &mut Out<'_>) {
        if !matches!(self.phase, Phase::Established | Phase::Lingering | Phase::Handshake)
            || (self.phase == Phase::Handshake && self.outbound)
        {
            self.stats.drops.add(DropReason::UnknownAddress);
            return;
        }
        let ctx = DframeContext { signed: self.signing.is_some(), keepalive_sess_id: self.modern(cfg) };
        let Ok((header, payload)) = DframeHeader::parse(bytes, ctx) else {
            self.stats.drops.add(DropReason::Malformed);
            return;
        };
        // An unsigned frame parses with its first payload bytes as the signature: it fails here.
        if !self.signature_ok(header.signature) {
            return;
        }
        if header.sess_id.is_some_and(|id| id != self.sess_id) {
            self.stats.drops.add(DropReason::BadSessionId);
            return;
        }
        if self.phase == Phase::Handshake {
            // Our CONNECTED reached the connector but its confirmation was lost: its first
            // DFRAME (data queued during the handshake, or its opening KeepAlive with our
            // dwSessID, checked above) completes the handshake (decision in docs/decisions.md;
            // MC-DPL8R 3.1.5.1.3 uses the KeepAlive this way when signing).
            self.establish(now, cfg, out);
        }
        let coalesced = header.control.contains(DframeControl::COALESCE);
        let frame = if header.is_keepalive() {
            if coalesced {
                self.stats.drops.add(DropReason::Malformed);
                return;
            }
            // MS-DPDX 3.1.5.9: a KeepAlive's payload is ignored.
            Frame::new(header.command, header.control, Vec::new())
        } else if coalesced {
            match crate::coalesce::split(header.command, payload) {
                Some(subs) => Frame::coalesced(header.command, header.control, subs),
                None => {
                    self.stats.drops.add(DropReason::Malformed);
                    return;
                }
            }
        } else {
            Frame::new(header.command, header.control, payload.to_vec())
        };
        self.stats.received(bytes.len());
        if header.command.contains(DframeCommand::RELIABLE) {
            self.stats.reliable_frames_received += 1;
            self.stats.reliable_bytes_received += bytes.len() as u64;
        } else {
            self.stats.unreliable_frames_received += 1;
            self.stats.unreliable_bytes_received += bytes.len() as u64;
        }
        self.last_rx = now;
        self.process_ack(now, cfg, header.n_rcv, header.masks.sack(), out);
        self.last_rx_retry = header.control.contains(DframeControl::RETRY);
        // Below 0x00010005, bControl 0x02 asks for a dedicated acknowledgement (MC-DPL8R 2.2.2).
        let correlate = !self.modern(cfg) && header.control.contains(DframeControl::KEEPALIVE_OR_CORRELATE);
        let poll = header.command.contains(DframeCommand::POLL) || correlate;
        let mut early = Vec::new();
        let gap_before = self.receiver.has_gap();
        let accepted = self.receiver.accept(header.seq, frame, &mut early);
        let prompt = match accepted {
            Accept::Stored { in_order: true } => None,
            // The first frame past a new gap is acknowledged at once, so the sender learns of
            // the loss a round trip sooner; later ones after 20 ms (decision in
            // docs/decisions.md; MC-DPL8R 3.1.2.2).
            Accept::Stored { in_order: false } if !gap_before => Some(Duration::ZERO),
            Accept::Stored { in_order: false } => Some(cfg.delayed_ack_short),
            Accept::Duplicate => {
                self.stats.drops.add(DropReason::Duplicate);
                Some(cfg.delayed_ack_short)
            }
            Accept::OutOfWindow => {
                self.stats.drops.add(DropReason::OutOfWindow);
                Some(cfg.delayed_ack_short)
            }
            Accept::OverBudget => {
                self.stats.drops.add(DropReason::OverBudget);
                None
            }
        };
        if poll || prompt == Some(Duration::ZERO) {
            self.ack_now = true;
        } else {
            self.timers.set_earlier(Timer::DelayedAck, now + prompt.unwrap_or(cfg.delayed_ack));
        }
        // A frame ahead of the window cannot be from an honest sender: its send mask is not
        // trusted to skip frames.
        if !matches!(accepted, Accept::OutOfWindow | Accept::OverBudget) {
            self.receiver.apply_send_mask(header.seq, header.masks.send());
        }
        self.deliver(early, out);
        self.drain(now, cfg, out);
        self.flush(now, cfg, out);
    }

    /// Handles a SACK from the peer (MC-DPL8R 3.1.5.1.5).
    pub(crate) fn handle_sack(
        &mut self,
        now: Instant,
        cfg: &Config,
        sack: &Sack,
        len: usize,
        out: &mut Out<'_>,
    ) {
        if !matches!(self.phase, Phase::Established | Phase::Lingering) {
            self.stats.drops.add(DropReason::UnknownAddress);
            return;
        }
        if !self.signature_ok(sack.signature) {
            return;
        }
        self.stats.received(len);
        self.last_rx = now;
        self.process_ack(now, cfg, sack.n_rcv, sack.masks.sack(), out);
        // bNSeq bounds the send mask: the peer cannot have sent past our window.
        if distance(self.receiver.next(), sack.n_seq) <= crate::seq::WINDOW {
            self.receiver.apply_send_mask(sack.n_seq, sack.masks.send());
        }
        // A send mask means the peer waits for our bNRcv to pass those frames: answer it, or a
        // lost acknowledgement would leave it announcing the mask until it gives up.
        if sack.masks.send() != 0 {
            self.timers.set_earlier(Timer::DelayedAck, now + cfg.delayed_ack_short);
        }
        self.drain(now, cfg, out);
        self.flush(now, cfg, out);
    }

    fn process_ack(&mut self, now: Instant, cfg: &Config, n_rcv: u8, sack: u64, out: &mut Out<'_>) {
        let acked = self.sender.on_ack(now, cfg, n_rcv, sack);
        if acked.end_stream {
            self.end_acked = true;
        }
        self.stats.send_masked += acked.newly_masked;
        self.stats.send_masked_bytes += acked.masked_bytes;
        if acked.newly_masked > 0 {
            self.timers.set_earlier(Timer::DelayedSendMask, now + cfg.delayed_send_mask);
        }
        if self.phase == Phase::Established {
            for seq in acked.resend {
                self.emit_dframe(cfg, seq, true, true, out);
            }
        }
    }

    fn deliver(&mut self, deliveries: Vec<crate::receive::Delivery>, out: &mut Out<'_>) {
        if self.phase != Phase::Established {
            return;
        }
        for d in deliveries {
            self.stats.messages_received += 1;
            out.events.push_back(Event::Message {
                peer: self.peer,
                data: d.data,
                reliable: d.kind.reliable,
                sequential: d.kind.sequential,
                user_1: d.kind.user_1,
                user_2: d.kind.user_2,
            });
        }
    }

    fn drain(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        let drained = self.receiver.drain();
        for _ in 0..drained.orphaned {
            self.stats.drops.add(DropReason::Orphaned);
        }
        self.deliver(drained.deliveries, out);
        if drained.too_large {
            self.abort(now, cfg, DisconnectReason::ProtocolViolation, out);
            return;
        }
        if drained.end_stream {
            self.on_peer_end_stream(out);
        }
    }

    /// Handles the timers due at `now`.
    pub(crate) fn handle_timeout(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        // All due timers are taken first, as one event; no allocation.
        let due = Timer::ALL.map(|t| self.timers.take_if_due(t, now));
        for (timer, _) in Timer::ALL.into_iter().zip(due).filter(|(_, due)| *due) {
            if self.phase == Phase::Finished {
                return;
            }
            match timer {
                Timer::ConnectRetry => self.on_connect_retry(now, cfg, out),
                Timer::DelayedAck | Timer::DelayedSendMask => self.ack_now = true,
                Timer::Retry => self.on_retry(now, cfg, out),
                Timer::KeepAlive => self.on_keepalive_timer(now, cfg),
                Timer::HardDisconnect => self.on_hard_disconnect_timer(now, cfg, out),
                Timer::Linger => self.phase = Phase::Finished,
                // The flush below drops what expired.
                Timer::SendDeadline => {}
            }
        }
        if self.phase != Phase::Finished {
            self.flush(now, cfg, out);
        }
    }

    fn on_retry(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        if self.phase != Phase::Established {
            return;
        }
        // Whatever is retried or announced, a listener that lost our confirmation needs it
        // first (MC-DPL8R 3.1.5.1.3); unreliable frames alone would never prompt it.
        self.repeat_confirmation(out);
        let retried = self.sender.on_retry_timer(now, cfg);
        if retried.lost {
            self.sender.clear();
            self.finish(DisconnectReason::RetriesExhausted, out);
            return;
        }
        self.stats.send_masked += retried.newly_masked;
        self.stats.send_masked_bytes += retried.masked_bytes;
        if retried.newly_masked > 0 {
            self.timers.set_earlier(Timer::DelayedSendMask, now + cfg.delayed_send_mask);
        }
        if retried.announce_mask {
            self.ack_now = true;
        }
        for seq in retried.resend {
            self.emit_dframe(cfg, seq, true, true, out);
        }
    }
}

impl Connection {
    /// Not ended: in the handshake or established.
    pub(crate) fn is_open(&self) -> bool {
        matches!(self.phase, Phase::Handshake | Phase::Established)
    }

    pub(crate) fn is_lingering(&self) -> bool {
        self.phase == Phase::Lingering
    }
}
