//! Finding DirectPlay messages in hex input and in captures, and parsing each one.

use std::collections::HashMap;
use std::net::SocketAddr;

use dplay_wire::datagram::{Kind, classify};
use dplay_wire::dp4::header::{HEADER_LEN, MAX_MESSAGE_SIZE, Token};
use dplay_wire::{Datagram, WireError, parse_datagram};

use crate::capture::Frame;
use crate::net::{self, Transport};

/// Where a message was captured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Origin {
    pub(crate) frame: u64,
    /// Seconds since the first frame of the capture.
    pub(crate) time: f64,
    pub(crate) src: SocketAddr,
    pub(crate) dst: SocketAddr,
    pub(crate) transport: Transport,
}

/// One message found, parsed or not.
#[derive(Debug)]
pub(crate) struct Record {
    pub(crate) origin: Option<Origin>,
    pub(crate) bytes: Vec<u8>,
    pub(crate) result: Result<Datagram, WireError>,
}

/// What a capture held besides DirectPlay.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) frames: u64,
    pub(crate) skipped: u64,
}

/// Decodes one datagram given as bytes.
pub(crate) fn decode_bytes(bytes: Vec<u8>) -> Record {
    Record { origin: None, result: parse_datagram(&bytes), bytes }
}

/// DirectPlay 8's enumeration port and default game ports (MC-DPLHP 1.9; INDEX B.8).
fn dp8_port(port: u16) -> bool {
    port == 6073 || (2302..=2400).contains(&port)
}

/// Decodes every DirectPlay message in a capture, in frame order.
///
/// DirectPlay 4 is found on any port by its signature; DirectPlay 8, whose lead bytes are
/// common in other protocols, only on its ports unless `any_port` is set.
pub(crate) fn decode_frames(frames: &[Frame], any_port: bool) -> (Vec<Record>, Stats) {
    let mut records = Vec::new();
    let mut stats = Stats::default();
    let mut streams: HashMap<(SocketAddr, SocketAddr), Vec<u8>> = HashMap::new();
    let start = frames.first().map(|f| f.time).unwrap_or_default();
    for frame in frames {
        stats.frames += 1;
        let Some(seg) = net::segment(frame.link, &frame.data) else {
            stats.skipped += 1;
            continue;
        };
        let origin = Origin {
            frame: frame.number,
            time: frame.time.saturating_sub(start).as_secs_f64(),
            src: seg.src,
            dst: seg.dst,
            transport: seg.transport,
        };
        let found = match seg.transport {
            Transport::Udp => {
                let kind = classify(seg.payload);
                let wanted = match kind.family() {
                    Some(dplay_wire::Family::Dp4) => true,
                    Some(dplay_wire::Family::Dp8) => {
                        any_port || dp8_port(seg.src.port()) || dp8_port(seg.dst.port())
                    }
                    None => false,
                };
                if wanted {
                    records.push(Record {
                        origin: Some(origin),
                        bytes: seg.payload.to_vec(),
                        result: parse_datagram(seg.payload),
                    });
                }
                wanted
            }
            Transport::Tcp => {
                let buf = streams.entry((seg.src, seg.dst)).or_default();
                let before = records.len();
                dp4_stream(buf, seg.payload, origin, &mut records);
                records.len() > before || !buf.is_empty()
            }
        };
        if !found {
            stats.skipped += 1;
        }
    }
    (records, stats)
}

/// True when `msg` starts like a DirectPlay 4 message on a stream: `play` at offset 20, or a
/// known token (DPSP_MSG_PLAYERMESSAGE has no signature, decision F-23).
fn looks_like_dp4(msg: &[u8]) -> bool {
    classify(msg) == Kind::Dp4Message
        || msg.get(..4).and_then(|b| <[u8; 4]>::try_from(b).ok()).is_some_and(|b| {
            let token = Token(u16::try_from(u32::from_le_bytes(b) >> 20).unwrap_or(0));
            msg.len() >= HEADER_LEN && token.name().is_some()
        })
}

/// Appends a TCP segment to its stream and cuts out every complete DirectPlay 4 message
/// (MC-DPL4CS 2.1: messages follow each other, each sized by its header).
///
/// A stream is only followed from a segment that starts with a DP4 header; a message that
/// cannot be framed is reported and the stream dropped until the next such segment.
fn dp4_stream(buf: &mut Vec<u8>, payload: &[u8], origin: Origin, records: &mut Vec<Record>) {
    if buf.is_empty() && !looks_like_dp4(payload) {
        return;
    }
    buf.extend_from_slice(payload);
    while buf.len() >= HEADER_LEN {
        let size = buf
            .get(..4)
            .and_then(|b| <[u8; 4]>::try_from(b).ok())
            .map_or(0, |b| (u32::from_le_bytes(b) & 0xF_FFFF) as usize);
        if !looks_like_dp4(buf) || !(HEADER_LEN..=MAX_MESSAGE_SIZE).contains(&size) {
            let bytes = std::mem::take(buf);
            // Report the parser's own error when it has one: it says more than the framing.
            let result = parse_datagram(&bytes).and(Err(WireError::InvalidValue {
                field: "dwSize",
                offset: 0,
                value: size as u64,
                reason: "cannot frame the DirectPlay 4 stream",
            }));
            records.push(Record { origin: Some(origin), bytes, result });
            return;
        }
        if buf.len() < size {
            return;
        }
        let bytes: Vec<u8> = buf.drain(..size).collect();
        records.push(Record { origin: Some(origin), result: parse_datagram(&bytes), bytes });
    }
}
