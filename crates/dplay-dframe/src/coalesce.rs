//! Coalescing small messages into one DFRAME and splitting them apart on receipt, with the
//! codec of dplay-wire (MC-DPL8R 2.2.3, 3.1.4.4, 3.1.5.2.5, 3.1.6.5).

use std::time::Instant;

use dplay_wire::dp8::coalesce::{
    COALESCE_MAX_PAYLOADS, COALESCE_MAX_SIZE, SubPayloadRef, coalesced_len, emit_coalesced, parse_coalesced,
};
use dplay_wire::dp8::dframe::{DframeCommand, DframeControl};

use crate::config::Config;
use crate::connection::Connection;
use crate::receive::Delivery;
use crate::send_queue::{Body, NewFrame, OutMessage};

/// The sub-payloads of a coalesced frame, in order (MC-DPL8R 3.1.5.2.5). `None` when the
/// payload does not parse or the outer `bCommand` lacks NEW_MSG|END_MSG (MC-DPL8R 2.2.3).
/// Empty sub-payloads carry no message and are skipped.
pub(crate) fn split(command: DframeCommand, payload: &[u8]) -> Option<Vec<Delivery>> {
    if !command.contains(DframeCommand::NEW_MSG | DframeCommand::END_MSG) {
        return None;
    }
    let parts = parse_coalesced(payload).ok()?;
    Some(
        parts
            .into_iter()
            .filter(|p| !p.data.is_empty())
            .map(|p| Delivery {
                data: p.data.to_vec(),
                kind: crate::event::MessageKind {
                    reliable: p.reliable,
                    sequential: p.sequential,
                    user_1: p.user_1,
                    user_2: p.user_2,
                },
            })
            .collect(),
    )
}

/// A retried coalesced frame keeps only its reliable sub-payloads (MC-DPL8R 3.1.6.5).
pub(crate) fn strip_unreliable(payload: &[u8]) -> Option<Vec<u8>> {
    let parts: Vec<SubPayloadRef<'_>> =
        parse_coalesced(payload).ok()?.into_iter().filter(|p| p.reliable).collect();
    let mut buf = vec![0; coalesced_len(parts.iter().map(|p| p.data.len()))];
    emit_coalesced(&parts, &mut buf).ok()?;
    Some(buf)
}

fn coalescible(msg: &OutMessage, max: usize) -> bool {
    msg.body == Body::Data && msg.data.len() <= COALESCE_MAX_SIZE && msg.data.len() <= max
}

impl Connection {
    /// Builds the next new frame and returns its `bSeq`: several small queued messages in one
    /// coalesced frame when the peer is at 0x00010005 or later (MC-DPL8R 1.7, 3.1.4.4), else the
    /// next frame of the head message. KeepAlive and END_STREAM are never coalesced (F-4).
    pub(crate) fn next_new_frame(&mut self, now: Instant, cfg: &Config) -> Option<u8> {
        let max = cfg.max_frame_payload();
        if cfg.coalesce && self.modern(cfg) {
            let (queue, queued_bytes) = self.sender.queue_mut();
            let mut sizes = Vec::new();
            for msg in queue.iter().take(COALESCE_MAX_PAYLOADS) {
                if !coalescible(msg, max)
                    || coalesced_len(sizes.iter().copied().chain([msg.data.len()])) > max
                {
                    break;
                }
                sizes.push(msg.data.len());
            }
            if sizes.len() >= 2 {
                let taken: Vec<OutMessage> = queue.drain(..sizes.len()).collect();
                *queued_bytes -= sizes.iter().sum::<usize>();
                let parts: Vec<SubPayloadRef<'_>> = taken
                    .iter()
                    .map(|m| SubPayloadRef {
                        reliable: m.kind.reliable,
                        sequential: m.kind.sequential,
                        user_1: m.kind.user_1,
                        user_2: m.kind.user_2,
                        data: &m.data,
                    })
                    .collect();
                let mut payload = vec![0; coalesced_len(sizes.iter().copied())];
                emit_coalesced(&parts, &mut payload).ok()?;
                // The outer frame takes the strictest category of its parts (INDEX D.2).
                let mut command = DframeCommand::DATA | DframeCommand::NEW_MSG | DframeCommand::END_MSG;
                command.set(DframeCommand::RELIABLE, taken.iter().any(|m| m.kind.reliable));
                command.set(DframeCommand::SEQUENTIAL, taken.iter().any(|m| m.kind.sequential));
                let mut done = Vec::new();
                for m in &taken {
                    self.sender.last_frame_of(m, &mut done);
                }
                let first_of = done.iter().map(|(id, _)| *id).collect();
                let control = DframeControl::COALESCE;
                let frame = NewFrame { command, control, keepalive: false, payload, done, first_of };
                return self.sender.put_in_flight(now, cfg, frame).map(|f| f.seq);
            }
        }
        self.sender.next_frame(now, cfg).map(|f| f.seq)
    }
}
