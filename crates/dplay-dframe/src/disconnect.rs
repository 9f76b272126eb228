//! Ending a connection: the graceful END_STREAM exchange (MC-DPL8R 3.1.4.3; MS-DPDX
//! 3.1.5.3) and HARD_DISCONNECT (MC-DPL8R 2.2.1.4, 3.1.4.5, 3.1.5.1.4, 3.1.6.4).

use std::time::Instant;

use dplay_wire::dp8::cframe::{Cframe, ConnectFields, HardDisconnect};

use crate::config::Config;
use crate::connection::{Connection, Out, Phase};
use crate::event::{DisconnectReason, MessageKind};
use crate::send_queue::{Body, OutMessage};
use crate::stats::DropReason;
use crate::timer::Timer;

impl Connection {
    /// Starts a graceful close: END_STREAM goes out after everything already queued, and
    /// nothing new is accepted (MC-DPL8R 3.1.4.3).
    pub(crate) fn close(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        match self.phase {
            Phase::Handshake => self.finish(DisconnectReason::Closed, out),
            Phase::Established if self.closing.is_none() => {
                self.closing = Some(true);
                self.sender.push(OutMessage::new(
                    Vec::new(),
                    MessageKind::RELIABLE_SEQUENTIAL,
                    Body::EndStream,
                ));
                self.flush(now, cfg, out);
            }
            _ => {}
        }
    }

    /// The peer's END_STREAM was reached in order: acknowledge it at once, and answer with our
    /// own END_STREAM after what is queued (MC-DPL8R 3.1.4.3).
    pub(crate) fn on_peer_end_stream(&mut self, _out: &mut Out<'_>) {
        self.peer_end = true;
        self.end_sacks_owed = true;
        if self.closing.is_none() && self.phase == Phase::Established {
            self.closing = Some(false);
            self.sender.push(OutMessage::new(Vec::new(), MessageKind::RELIABLE_SEQUENTIAL, Body::EndStream));
        }
    }

    /// A graceful close is complete when our END_STREAM is acknowledged and the peer's has been
    /// received and acknowledged (MC-DPL8R 3.1.4.3). The connection then lingers, answering
    /// the peer's retries, so a lost final SACK does not leave the peer retrying into silence.
    pub(crate) fn check_closed(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        if self.phase != Phase::Established
            || !(self.end_acked && self.peer_end)
            || self.ack_now
            || self.end_sacks_owed
        {
            return;
        }
        let reason = if self.closing == Some(true) {
            DisconnectReason::Closed
        } else {
            DisconnectReason::ClosedByPeer
        };
        self.report(reason, out);
        self.sender.clear();
        self.phase = Phase::Lingering;
        self.timers.stop_all();
        self.timers.set(Timer::Linger, now + cfg.linger);
    }

    fn hard_disconnect_frame(&mut self, cfg: &Config, now: Instant) -> Cframe {
        let msg_id = self.msg_id;
        self.msg_id = msg_id.wrapping_add(1);
        Cframe::HardDisconnect(HardDisconnect {
            fields: ConnectFields {
                poll: false,
                msg_id,
                rsp_id: 0,
                protocol_version: cfg.protocol_version,
                sess_id: self.sess_id,
                timestamp: self.timestamp(now),
            },
            signature: self.signature(),
        })
    }

    fn hard_disconnect_interval(&self, cfg: &Config) -> std::time::Duration {
        let half_rtt = self.sender.rtt().unwrap_or(cfg.initial_rtt) / 2;
        half_rtt.clamp(cfg.hard_disconnect_min, cfg.hard_disconnect_max.max(cfg.hard_disconnect_min))
    }

    /// Hard disconnect: drop everything queued and in flight, send HARD_DISCONNECT now and the
    /// rest spaced by the hard disconnect timer (MC-DPL8R 3.1.4.5, 3.1.2.4). Reported at once.
    pub(crate) fn abort(&mut self, now: Instant, cfg: &Config, reason: DisconnectReason, out: &mut Out<'_>) {
        self.sender.clear();
        match self.phase {
            Phase::Established => {
                self.report(reason, out);
                self.timers.stop_all();
                let frame = self.hard_disconnect_frame(cfg, now);
                self.emit_cframe(&frame, out);
                self.phase = Phase::Aborting { sent: 1 };
                if cfg.hard_disconnect_count > 1 {
                    self.timers.set(Timer::HardDisconnect, now + self.hard_disconnect_interval(cfg));
                } else {
                    self.phase = Phase::Finished;
                }
            }
            Phase::Handshake => self.finish(reason, out),
            Phase::Lingering => {
                self.phase = Phase::Finished;
                self.timers.stop_all();
            }
            Phase::Aborting { .. } | Phase::Finished => {}
        }
    }

    /// The hard disconnect timer fired: send the next HARD_DISCONNECT, or finish after the last
    /// (MC-DPL8R 3.1.6.4).
    pub(crate) fn on_hard_disconnect_timer(&mut self, now: Instant, cfg: &Config, out: &mut Out<'_>) {
        let Phase::Aborting { sent } = self.phase else { return };
        if sent >= cfg.hard_disconnect_count {
            self.phase = Phase::Finished;
            return;
        }
        let frame = self.hard_disconnect_frame(cfg, now);
        self.emit_cframe(&frame, out);
        self.phase = Phase::Aborting { sent: sent + 1 };
        self.timers.set(Timer::HardDisconnect, now + self.hard_disconnect_interval(cfg));
    }

    /// A HARD_DISCONNECT from the peer (MC-DPL8R 3.1.5.1.4): ignored unless established and
    /// carrying our `dwSessID`. If we started the hard disconnect it is the peer's answer;
    /// otherwise we abort and answer with our HARD_DISCONNECT frames at once.
    pub(crate) fn handle_hard_disconnect(
        &mut self,
        now: Instant,
        cfg: &Config,
        f: &HardDisconnect,
        out: &mut Out<'_>,
    ) {
        if f.fields.sess_id != self.sess_id {
            self.stats.drops.add(DropReason::BadSessionId);
            return;
        }
        // MC-DPL8R 3.1.5.1.4: on a signed connection the signature MUST be valid.
        if !self.signature_ok(f.signature) {
            return;
        }
        match self.phase {
            Phase::Aborting { .. } => {
                self.phase = Phase::Finished;
                self.timers.stop_all();
            }
            Phase::Established => {
                self.stats.received(16);
                self.sender.clear();
                self.report(DisconnectReason::AbortedByPeer, out);
                for _ in 0..cfg.hard_disconnect_count {
                    let frame = self.hard_disconnect_frame(cfg, now);
                    self.emit_cframe(&frame, out);
                }
                self.phase = Phase::Finished;
                self.timers.stop_all();
            }
            _ => self.stats.drops.add(DropReason::HandshakeRule),
        }
    }
}
