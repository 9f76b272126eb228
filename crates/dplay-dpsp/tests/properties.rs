//! proptest: any message, split with any MTU and delivered in any order with duplicates,
//! reassembles to itself (issue "Proof"; MC-DPL4CS 2.2.41 concatenation).

mod common;

use common::{base, delivered, events, peer, transmits};
use dplay_dpsp::{Config, Dpsp, DpspMessage, FRAGMENT_OVERHEAD, Reliability};
use proptest::prelude::*;
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

fn fragments(message: &[u8], data_len: usize) -> Vec<DpspMessage> {
    let mut a = Dpsp::new(Config { mtu: FRAGMENT_OVERHEAD + data_len, ..Config::default() }).unwrap();
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

    /// Any bytes given as a datagram: no panic, and anything not refused as malformed is
    /// either a message of this layer or handed back.
    #[test]
    fn any_datagram_is_handled(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
        let mut b = Dpsp::new(Config::default()).unwrap();
        b.handle_datagram(base(), peer(1), &bytes);
        prop_assert!(b.partial_messages() <= 1);
    }
}
