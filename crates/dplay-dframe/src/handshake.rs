//! The connection handshake: CONNECT and CONNECTED with the `bMsgID`/`bRspId` echo, the
//! `dwSessID` checks, the POLL rules and the connect retry timer (MC-DPL8R 2.2.1.1-2,
//! 3.1.5.1.1-2, 3.1.6.1; MS-DPDX 3.1.5.1; INDEX E.1).

use std::time::{Duration, Instant};

use dplay_wire::dp8::cframe::{Cframe, ConnectFields};

use crate::config::{Config, MIN_PROTOCOL_VERSION};
use crate::connection::{Connection, Out, Phase};
use crate::event::{DisconnectReason, Event};
use crate::send_queue::{Body, OutMessage};
use crate::stats::DropReason;
use crate::timer::Timer;

/// How many of our handshake frames' send times are remembered for RTT by `bRspId`.
const SENT_MEMORY: usize = 16;

/// Handshake bookkeeping of one connection.
#[derive(Debug)]
pub(crate) struct Handshake {
    /// Retries sent so far (MC-DPL8R 3.1.2.1).
    retries: u32,
    /// The current connect retry interval: doubles up to the cap.
    interval: Duration,
    /// `bMsgID` and send time of our recent CONNECT/CONNECTED frames: the answer's `bRspId`
    /// names the one it answers, which gives an RTT sample even after retries.
    sent: Vec<(u8, Instant)>,
    /// `bMsgID` of the peer's latest CONNECT or CONNECTED, echoed as our `bRspId`.
    pub(crate) peer_msg_id: u8,
}

impl Handshake {
    pub(crate) fn new(cfg: &Config) -> Self {
        Self { retries: 0, interval: cfg.connect_retry_initial, sent: Vec::new(), peer_msg_id: 0 }
    }

    fn record(&mut self, msg_id: u8, now: Instant) {
        if self.sent.len() == SENT_MEMORY {
            self.sent.remove(0);
        }
        self.sent.push((msg_id, now));
    }

    fn sent_at(&self, msg_id: u8) -> Option<Instant> {
        self.sent.iter().rev().find(|(id, _)| *id == msg_id).map(|(_, at)| *at)
    }
}

/// True for a version we talk to: major 1 (else MUST ignore, MC-DPL8R 2.2.1.1), any minor
/// from the base level up (MC-DPL8R 1.7; decision F-2).
pub(crate) fn version_ok(version: u32) -> bool {
    version >> 16 == 1 && version >= MIN_PROTOCOL_VERSION
}

impl Connection {
    fn connect_fields(&mut self, cfg: &Config, now: Instant, poll: bool, rsp_id: u8) -> ConnectFields {
        let msg_id = self.msg_id;
        self.msg_id = msg_id.wrapping_add(1);
        self.handshake.record(msg_id, now);
        ConnectFields {
            poll,
            msg_id,
            rsp_id,
            protocol_version: cfg.protocol_version,
            sess_id: self.sess_id,
            timestamp: self.timestamp(now),
        }
    }

    /// Sends CONNECT (POLL set, `bRspId` 0) (MC-DPL8R 2.2.1.1, 3.1.4.2).
    pub(crate) fn send_connect(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        let fields = self.connect_fields(cfg, now, true, 0);
        self.emit_cframe(&Cframe::Connect(fields), out);
    }

    /// Sends CONNECTED answering the peer's latest `bMsgID`. The listener's reply sets POLL,
    /// the connector's confirmation does not (MC-DPL8R 2.2.1.2; INDEX B.2).
    pub(crate) fn send_connected(&mut self, now: Instant, cfg: &Config, poll: bool, out: &mut Out<'_>) {
        let fields = self.connect_fields(cfg, now, poll, self.handshake.peer_msg_id);
        self.emit_cframe(&Cframe::Connected(fields), out);
    }

    /// Starts the connect retry timer (MC-DPL8R 3.1.2.1).
    pub(crate) fn arm_connect_retry(&mut self, now: Instant) {
        self.timers.set(Timer::ConnectRetry, now + self.handshake.interval);
    }

    /// The connect retry timer fired: resend CONNECT (connector) or CONNECTED (listener), or
    /// give up after the last retry (MC-DPL8R 3.1.6.1).
    pub(crate) fn on_connect_retry(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        if self.phase != Phase::Handshake {
            return;
        }
        if self.handshake.retries >= cfg.connect_retries {
            tracing::debug!(retries = self.handshake.retries, outbound = self.outbound, "handshake gave up");
            if self.outbound {
                self.finish(DisconnectReason::ConnectTimeout, out);
            } else {
                // The caller never saw this inbound attempt: it just goes away.
                self.phase = Phase::Finished;
                self.timers.stop_all();
            }
            return;
        }
        self.handshake.retries += 1;
        tracing::debug!(retry = self.handshake.retries, outbound = self.outbound, "handshake retry");
        if self.outbound {
            self.send_connect(now, cfg, out);
        } else {
            self.send_connected(now, cfg, true, out);
        }
        self.handshake.interval = (self.handshake.interval * 2).min(cfg.connect_retry_max);
        self.arm_connect_retry(now);
    }

    /// A CONNECT from this connection's address (MC-DPL8R 3.1.5.1.1): a retry from a half-open
    /// inbound attempt with the same `dwSessID` gets another CONNECTED at once; anything else is
    /// ignored.
    pub(crate) fn handle_connect(
        &mut self,
        now: Instant,
        cfg: &Config,
        f: &ConnectFields,
        out: &mut Out<'_>,
    ) {
        if self.phase == Phase::Handshake && !self.outbound && f.sess_id == self.sess_id {
            self.stats.received(16);
            self.handshake.peer_msg_id = f.msg_id;
            self.send_connected(now, cfg, true, out);
        } else if f.sess_id != self.sess_id {
            self.stats.drops.add(DropReason::BadSessionId);
        } else {
            self.stats.drops.add(DropReason::HandshakeRule);
        }
    }

    /// A CONNECTED from this connection's address (MC-DPL8R 3.1.5.1.2).
    pub(crate) fn handle_connected(
        &mut self,
        now: Instant,
        cfg: &Config,
        f: &ConnectFields,
        out: &mut Out<'_>,
    ) {
        if f.sess_id != self.sess_id {
            self.stats.drops.add(DropReason::BadSessionId);
            return;
        }
        if !version_ok(f.protocol_version) {
            self.stats.drops.add(DropReason::BadVersion);
            return;
        }
        match self.phase {
            // A connector that signs ignores the unsigned reply (MC-DPL8R 3.1.5.1.2).
            Phase::Handshake if self.signing.is_some() => self.stats.drops.add(DropReason::SigningMismatch),
            // The connector needs POLL set; the listener needs it clear.
            Phase::Handshake if f.poll == self.outbound => {
                self.stats.received(16);
                self.handshake.peer_msg_id = f.msg_id;
                if self.outbound {
                    self.peer_version = f.protocol_version;
                    self.send_connected(now, cfg, false, out);
                }
                self.handshake_rtt(now, f.rsp_id);
                self.establish(now, cfg, out);
            }
            // Our confirmation was lost: the listener is still retrying (MC-DPL8R 3.1.5.1.2).
            Phase::Established | Phase::Lingering if f.poll => {
                self.stats.received(16);
                self.handshake.peer_msg_id = f.msg_id;
                self.send_connected(now, cfg, false, out);
            }
            _ => self.stats.drops.add(DropReason::HandshakeRule),
        }
    }

    /// An RTT sample from the answer to our handshake frame `rsp_id`.
    pub(crate) fn handshake_rtt(&mut self, now: Instant, rsp_id: u8) {
        if let Some(at) = self.handshake.sent_at(rsp_id) {
            self.sender.sample_rtt(now.saturating_duration_since(at));
        }
    }

    /// Both CONNECTEDs exchanged: report it, start the keepalive timer, and send a KeepAlive as
    /// the first reliable DFRAME to measure RTT (MC-DPL8R 4.1; INDEX E.1 step 7). On a signed
    /// connection that KeepAlive also prompts a listener that lost our confirmation
    /// (MC-DPL8R 3.1.5.1.3).
    pub(crate) fn establish(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        self.phase = Phase::Established;
        tracing::debug!(outbound = self.outbound, version = self.peer_version, "connected");
        self.timers.stop(Timer::ConnectRetry);
        self.last_rx = now;
        self.arm_keepalive(now, cfg);
        self.sender.push(OutMessage::new(
            Vec::new(),
            crate::event::MessageKind::RELIABLE_SEQUENTIAL,
            Body::KeepAlive,
        ));
        out.events.push_back(Event::Connected { peer: self.peer, outbound: self.outbound });
        self.flush(now, cfg, out);
    }
}
