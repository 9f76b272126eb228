//! Finding DirectPlay messages in hex input and in captures, and parsing each one.
//!
//! A capture is read twice: [`Flows::learn`] first finds which flows carry DirectPlay 8 or
//! DirectPlay 4, then every UDP datagram of those flows and every message of a DirectPlay 4
//! TCP stream ([`Streams`]) is parsed, in frame order. A message that spans several frames is
//! also shown whole after its last frame ([`Reassembly`]). Application payloads are also read
//! as Flight Simulator add-on packets ([`addon_view::find`]).

use std::collections::HashSet;
use std::net::SocketAddr;

use dplay_addon::Dialect;
use dplay_wire::{Family, WireError};

use crate::addon_view::{self, AddonPacket};
use crate::capture::Frame;
use crate::flows::Flows;
use crate::message::{Carrier, Message, dp4_stream_message_size};
use crate::net::{self, Segment, Transport};
use crate::reassembly::{self, Reassembly, Whole};
use crate::stream::{Cut, Streams};

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
    pub(crate) result: Result<Message, WireError>,
    /// The add-on packets in its application payload.
    pub(crate) addon: Vec<AddonPacket>,
    /// Bytes given after a DirectPlay 4 stream message, beyond what its `dwSize` covers
    /// (hex input only; in a capture they start the next message).
    pub(crate) trailing: Vec<u8>,
    /// For a message put back together from several frames ([`crate::reassembly`]): the
    /// capture frames that carried it, in the message's order; empty otherwise.
    pub(crate) reassembled: Vec<u64>,
}

impl Record {
    fn new(
        origin: Option<Origin>,
        bytes: Vec<u8>,
        result: Result<Message, WireError>,
        dialect: Dialect,
    ) -> Self {
        let addon = match &result {
            Ok(m) => m
                .app_payloads()
                .into_iter()
                .filter_map(|p| addon_view::find(p, dialect))
                .chain(m.player_data().and_then(|d| addon_view::find_player_info(d, dialect)))
                .collect(),
            Err(_) => Vec::new(),
        };
        Self { origin, bytes, result, addon, trailing: Vec::new(), reassembled: Vec::new() }
    }

    /// A message put back together, seen complete at `origin` (its last frame).
    fn reassembled(origin: Option<Origin>, whole: Whole, ids: bool, dialect: Dialect) -> Self {
        let result = reassembly::parse(&whole, ids);
        Self { reassembled: whole.frames, ..Self::new(origin, whole.bytes, result, dialect) }
    }
}

/// What a capture held besides DirectPlay, and where reading fell short.
#[derive(Debug, Default)]
pub(crate) struct Stats {
    pub(crate) frames: u64,
    pub(crate) skipped: u64,
    /// TCP segments of a DirectPlay 4 stream that followed bytes the capture missed.
    pub(crate) gaps: u64,
    /// Bytes of DirectPlay 4 stream messages the capture ended in the middle of.
    pub(crate) unfinished: usize,
    /// Pieces of multi-frame messages not put back together.
    pub(crate) reassembly: reassembly::Dropped,
    /// DirectPlay 8 flows whose DFRAMEs were read as unsigned with nothing in the capture to
    /// say whether they are signed ([`Flows::signing_unknown`]).
    pub(crate) signing_unknown: usize,
}

/// How to look for DirectPlay in a capture.
#[derive(Debug, Default, Clone)]
pub(crate) struct Options {
    /// Lead bytes alone make DirectPlay 8 on every UDP port, not only its defaults.
    pub(crate) any_port: bool,
    /// Only frames from or to these ports (all when empty).
    pub(crate) ports: Vec<u16>,
    /// The add-on dialect, instead of the one the capture suggests.
    pub(crate) dialect: Option<Dialect>,
}

/// Decodes one message given as bytes, carried as `carrier` says. Bytes given after a
/// DirectPlay 4 stream message's `dwSize` (MC-DPL4CS 2.1: the next message of the stream) are
/// kept apart as `trailing`, not read as part of it.
pub(crate) fn decode_bytes(mut bytes: Vec<u8>, carrier: Carrier, dialect: Dialect, ids: bool) -> Record {
    let trailing = match dp4_stream_message_size(&bytes) {
        Some(size) if carrier != Carrier::Dp4Datagram && size < bytes.len() => bytes.split_off(size),
        _ => Vec::new(),
    };
    let result = Message::parse(&bytes, carrier, ids);
    Record { trailing, ..Record::new(None, bytes, result, dialect) }
}

/// Decodes every DirectPlay message in a capture, in frame order.
pub(crate) fn decode_frames(frames: &[Frame], options: &Options) -> (Vec<Record>, Stats) {
    let wanted = |seg: &Segment<'_>| {
        options.ports.is_empty()
            || options.ports.contains(&seg.src.port())
            || options.ports.contains(&seg.dst.port())
    };
    let segments = || {
        frames
            .iter()
            .map(|f| (f, net::segment(f.link, &f.data).filter(|s| wanted(s) && !s.payload.is_empty())))
    };
    let flows = Flows::learn(segments().filter_map(|(_, s)| s), options.any_port);
    let dialect = options.dialect.unwrap_or(flows.dialect);
    let mut records = Vec::new();
    let mut stats = Stats::default();
    let mut streams = Streams::default();
    let mut pieces = Reassembly::default();
    let mut signing_unknown = HashSet::new();
    let start = frames.first().map(|f| f.time).unwrap_or_default();
    for (frame, seg) in segments() {
        stats.frames += 1;
        let Some(seg) = seg else {
            stats.skipped += 1;
            continue;
        };
        let time = frame.time.saturating_sub(start).as_secs_f64();
        let origin =
            Some(Origin { frame: frame.number, time, src: seg.src, dst: seg.dst, transport: seg.transport });
        let found = match seg.transport {
            Transport::Udp => flows.udp_carrier(&seg).map(|carrier| {
                let result = Message::parse(seg.payload, carrier, flows.ids);
                let dframe = result
                    .as_ref()
                    .is_ok_and(|m| m.family() == Family::Dp8 && reassembly::frame(m).is_some());
                if dframe && carrier == Carrier::Datagram && flows.signing_unknown(&seg) {
                    signing_unknown.insert((seg.src.min(seg.dst), seg.src.max(seg.dst)));
                }
                let whole = match result.as_ref().ok() {
                    Some(m) => match reassembly::packet_fragment(m) {
                        Some(f) => pieces.offer_packet((seg.src, seg.dst), (frame.number, time), f),
                        None => reassembly::fragment(m)
                            .and_then(|f| pieces.offer(seg.src, seg.dst, frame.number, f)),
                    },
                    None => None,
                };
                records.push(Record::new(origin, seg.payload.to_vec(), result, dialect));
                if let Some(whole) = whole {
                    records.push(Record::reassembled(origin, whole, flows.ids, dialect));
                }
            }),
            Transport::Tcp => {
                let (cuts, following) = streams.feed(seg.src, seg.dst, seg.seq, seg.payload);
                for cut in cuts {
                    let (bytes, result) = match cut {
                        Cut::Message(bytes) => {
                            let result = Message::parse(&bytes, Carrier::Dp4Stream, flows.ids);
                            (bytes, result)
                        }
                        Cut::Unframed(bytes, e) => (bytes, Err(e)),
                    };
                    records.push(Record::new(origin, bytes, result, dialect));
                }
                following.then_some(())
            }
        };
        if found.is_none() {
            stats.skipped += 1;
        }
    }
    pieces.finish();
    stats.signing_unknown = signing_unknown.len();
    stats.reassembly = pieces.dropped;
    stats.gaps = streams.gaps;
    stats.unfinished = streams.unfinished();
    (records, stats)
}
