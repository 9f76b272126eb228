use std::time::Duration;

use proptest::prelude::*;

use super::*;

/// Whatever the order of arrivals, answers, deadlines and departures, no sender has more
/// than the cap waiting, the two indexes agree, and a token answers at most once.
#[test]
fn held_answers_stay_capped_and_consistent() {
    let op = (0u8..4, 0u16..3, any::<u32>());
    #[allow(clippy::disallowed_methods)] // a test's time origin
    let start = Instant::now();
    proptest!(|(ops in proptest::collection::vec(op, 0..200), cap in 0usize..4)| {
        let mut u = Unprocessed::default();
        let mut given = Vec::new();
        let mut answered = std::collections::BTreeSet::new();
        for (i, (kind, who, context)) in ops.into_iter().enumerate() {
            let now = start + Duration::from_millis(i as u64 * 10);
            let peer = SocketAddr::from(([127, 0, 0, 1], 2302 + who));
            match kind {
                0 | 1 => {
                    if let Some((token, _)) = u.hold(peer, context, now + Duration::from_millis(500), cap) {
                        given.push(token);
                    }
                }
                2 => {
                    if let Some(&token) = given.get(context as usize % given.len().max(1))
                        && u.take(token).is_some()
                    {
                        prop_assert!(answered.insert(token), "a token answered twice");
                    }
                }
                _ => u.forget_peer(peer),
            }
            while let Some(w) = u.expired(now) {
                prop_assert!(w.deadline <= now);
            }
            let queued: usize = u.by_peer.values().map(VecDeque::len).sum();
            prop_assert_eq!(queued, u.waiting.len());
            prop_assert!(u.by_peer.values().all(|q| !q.is_empty() && q.len() <= cap));
            for (peer, q) in &u.by_peer {
                prop_assert!(q.iter().all(|t| u.waiting.get(t).is_some_and(|w| w.peer == *peer)));
            }
        }
    });
}
