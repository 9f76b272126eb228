//! The stream cutter against arbitrary segmentations, retransmissions and bytes.

use dplay_wire::Blob;
use dplay_wire::dp4::player_message::{PlayerIds, PlayerMessage};
use proptest::prelude::*;

use super::*;

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([10, 0, 0, 1], port))
}

/// Stream-form player messages (MC-DPL4CS 2.2.45) with these payloads, back to back.
fn stream_of(payloads: &[Vec<u8>]) -> (Vec<Vec<u8>>, Vec<u8>) {
    let ids = Some(PlayerIds { id_from: 0x1234_5678, id_to: 0 });
    let msgs: Vec<Vec<u8>> =
        payloads.iter().map(|p| PlayerMessage::new(ids, Blob::new(p)).to_vec().expect("emit")).collect();
    let stream = msgs.concat();
    (msgs, stream)
}

fn messages(cuts: Vec<Cut>) -> Vec<Vec<u8>> {
    cuts.into_iter()
        .map(|c| match c {
            Cut::Message(m) => m,
            Cut::Unframed(b, e) => panic!("unframed {b:?}: {e}"),
        })
        .collect()
}

proptest! {
    /// However the stream is cut into segments, and whichever segments are sent twice, the
    /// same messages come out, once each.
    #[test]
    fn any_segmentation_yields_the_messages(
        payloads in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 1..6),
        cuts in proptest::collection::vec(1usize..40, 0..20),
        repeat in proptest::collection::vec(any::<bool>(), 20),
    ) {
        let (msgs, stream) = stream_of(&payloads);
        let mut streams = Streams::default();
        let mut out = Vec::new();
        let (mut at, mut i) = (0usize, 0usize);
        let seq0 = 0xFFFF_FF00_u32; // wraps inside the stream
        while at < stream.len() {
            let len = cuts.get(i).copied().unwrap_or(stream.len()).min(stream.len() - at);
            let seq = seq0.wrapping_add(u32::try_from(at).unwrap());
            let segment = &stream[at..at + len];
            out.extend(messages(streams.feed(addr(1), addr(2), seq, segment).0));
            if repeat.get(i).copied().unwrap_or(false) {
                out.extend(messages(streams.feed(addr(1), addr(2), seq, segment).0));
            }
            at += len;
            i += 1;
        }
        prop_assert_eq!(out, msgs);
        prop_assert_eq!(streams.unfinished(), 0);
        prop_assert_eq!(streams.gaps, 0);
    }

    /// Arbitrary segments never panic, and whatever comes out is bytes that were fed in.
    #[test]
    fn arbitrary_bytes_never_panic(
        segments in proptest::collection::vec((any::<u32>(), proptest::collection::vec(any::<u8>(), 0..80)), 0..12),
    ) {
        let mut streams = Streams::default();
        let fed: usize = segments.iter().map(|(_, s)| s.len()).sum();
        let mut out = 0;
        for (seq, segment) in &segments {
            for cut in streams.feed(addr(1), addr(2), *seq, segment).0 {
                out += match cut {
                    Cut::Message(m) | Cut::Unframed(m, _) => m.len(),
                };
            }
        }
        prop_assert!(out <= fed);
    }
}

/// A segment after missing bytes drops the partial message, counts a gap, and the stream is
/// followed again from the next message start.
#[test]
fn a_gap_drops_the_partial_message() {
    let (msgs, stream) = stream_of(&[vec![1; 10], vec![2; 10]]);
    let first = msgs[0].len();
    let mut streams = Streams::default();
    assert!(messages(streams.feed(addr(1), addr(2), 0, &stream[..5]).0).is_empty());
    // Bytes 5..first are missing; the next segment starts the second message.
    let next = u32::try_from(first).unwrap();
    let out = messages(streams.feed(addr(1), addr(2), next, &stream[first..]).0);
    assert_eq!(out, [msgs[1].clone()]);
    assert_eq!(streams.gaps, 1);
}
