//! proptest: any message, split with any MTU and delivered in any order with duplicates,
//! reassembles to itself (issue "Proof"; MC-DPL4CS 2.2.41 concatenation).

mod common;

use common::{base, delivered, events, peer, transmits};
use dplay_dpsp::{Config, Dpsp, DpspMessage, FRAGMENT_OVERHEAD, Reliability};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// The default configuration with these limits: message size, partials and bytes per sender,
/// bytes in all, finished GuidMessages remembered.
fn limited(message: u32, partials: usize, per_sender: usize, total: usize, finished: usize) -> Config {
    let mut config = Config::default();
    config.limits.max_message_size = message;
    config.limits.max_partials_per_sender = partials;
    config.limits.max_bytes_per_sender = per_sender;
    config.limits.max_bytes_total = total;
    config.limits.max_finished = finished;
    config
}

fn fragments(message: &[u8], data_len: usize) -> Vec<DpspMessage> {
    let mut config = Config::default();
    config.mtu = FRAGMENT_OVERHEAD + data_len;
    let mut a = Dpsp::new(config).unwrap();
    a.send(base(), peer(2), message, Reliability::Unreliable).unwrap();
    transmits(&mut a)
        .into_iter()
        .inspect(|t| assert!(t.encoded_len() <= FRAGMENT_OVERHEAD + data_len))
        .map(|t| t.message)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_split_any_order_reassembles(
        message in prop::collection::vec(any::<u8>(), 1..3000),
        data_len in 1usize..600,
        reliable in any::<bool>(),
        dups in prop::collection::vec(any::<prop::sample::Index>(), 0..20),
        order_seed in any::<u64>(),
    ) {
        let frags = fragments(&message, data_len);
        let mut deliveries: Vec<DpspMessage> = frags.clone();
        deliveries.extend(dups.iter().map(|i| i.get(&frags).clone()));
        deliveries.shuffle(&mut ChaCha8Rng::seed_from_u64(order_seed));
        let mut b = Dpsp::new(Config::default()).unwrap();
        let now = base();
        for m in &deliveries {
            let m = match (reliable, m) {
                (true, DpspMessage::Packet(f)) => DpspMessage::Packet2Data(f.clone()),
                _ => m.clone(),
            };
            b.handle_message(now, peer(1), &m);
        }
        let evs = events(&mut b);
        prop_assert_eq!(delivered(&evs), vec![message.as_slice()]);
        prop_assert_eq!(evs.len(), 1);
        prop_assert_eq!(b.stats().dropped_total(), dups.len() as u64);
        prop_assert_eq!(b.partial_messages(), 0);
        let acks = transmits(&mut b).len();
        prop_assert_eq!(acks, if reliable { deliveries.len() } else { 0 });
    }

    /// Any body under a valid header with one of this layer's Commands, or any bytes at all:
    /// no panic, and the limits hold (issue item 4).
    #[test]
    fn any_datagram_is_handled(
        datagrams in prop::collection::vec(
            (prop::sample::select(vec![0x15u16, 0x30, 0x31, 0x16]), prop::collection::vec(any::<u8>(), 0..120), any::<bool>()),
            1..40,
        ),
        steps in prop::collection::vec(0u64..20_000, 40),
    ) {
        let config = limited(600, 2, 1000, 1500, 8);
        let mut b = Dpsp::new(config).unwrap();
        let mut now = base();
        for ((command, body, raw), step) in datagrams.iter().zip(&steps) {
            let bytes = if *raw { body.clone() } else { with_header(*command, body) };
            now += std::time::Duration::from_millis(*step);
            b.handle_timeout(now);
            b.handle_datagram(now, peer(1 + u8::from(*raw)), &bytes);
            prop_assert!(b.bytes_held() <= 1500);
            prop_assert!(b.partial_messages() <= 4);
            for t in transmits(&mut b) {
                prop_assert!(t.to_vec().is_ok());
            }
        }
        let handled = b.stats().fragments_received + b.stats().acks_received + b.stats().dropped(dplay_dpsp::DropReason::Malformed);
        prop_assert!(handled <= datagrams.len() as u64);
    }
}

proptest! {
    /// Fragments with arbitrary fields in small ranges, so they collide, overlap and conflict,
    /// from three senders over time: no panic, the limits hold, and whatever is delivered has
    /// the MessageSize its fragments announced (issue items 2-4).
    #[test]
    fn arbitrary_fragments_keep_the_limits(
        frags in prop::collection::vec(
            (0u8..3, 0u8..3, any::<bool>(), 0u32..6, 0u32..64, 0u32..7, 1u32..70, 0usize..40, 0u64..5000),
            1..200,
        ),
    ) {
        let config = limited(64, 2, 400, 600, 4);
        let mut b = Dpsp::new(config).unwrap();
        let mut now = base();
        for &(from, g, reliable, index, offset, total, size, len, step) in &frags {
            let f = dplay_wire::dp4::fragment::Fragment {
                guid_message: uuid::Uuid::from_u128(g.into()),
                packet_index: index,
                offset,
                total_packets: total,
                message_size: size,
                packet_offset: 48,
                data: dplay_wire::Blob(vec![g; len]),
            };
            now += std::time::Duration::from_millis(step);
            b.handle_timeout(now);
            let m = if reliable { DpspMessage::Packet2Data(f) } else { DpspMessage::Packet(f) };
            b.handle_message(now, peer(from), &m);
            prop_assert!(b.bytes_held() <= 600);
            prop_assert!(b.partial_messages() <= 6);
            while let Some(e) = b.poll_event() {
                if let dplay_dpsp::Event::Delivered { message, .. } = e {
                    prop_assert!(!message.is_empty() && message.len() <= 64);
                }
            }
        }
    }
}

/// `body` behind a full DPSP_MSG_HEADER with `command`.
fn with_header(command: u16, body: &[u8]) -> Vec<u8> {
    let size = u32::try_from(28 + body.len()).unwrap();
    let mut out = (size | 0xFAB0_0000).to_le_bytes().to_vec();
    out.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    out.extend_from_slice(b"play");
    out.extend_from_slice(&command.to_le_bytes());
    out.extend_from_slice(&14u16.to_le_bytes());
    out.extend_from_slice(body);
    out
}
