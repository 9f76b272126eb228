//! Limits (issue item 3): the largest message, partial messages and bytes per sender, bytes
//! in total; the oldest partial message is evicted first and the sender is reported.

use super::*;

fn limited(f: impl FnOnce(&mut Limits)) -> Dpsp {
    let mut config = Config::default();
    f(&mut config.limits);
    endpoint(config)
}

/// Starts message `g` from `from` with its first 10-byte fragment of a 30-byte message.
fn start(d: &mut Dpsp, now: Instant, from: SocketAddr, g: Uuid) {
    d.handle_message(now, from, &packet(pieces(g, &message(30), 10)[0].clone()));
}

fn abandoned(from: SocketAddr, g: Uuid, limit: Limit) -> Event {
    Event::ReassemblyAbandoned { from, guid: g, reason: AbandonReason::Evicted(limit) }
}

#[test]
fn largest_message_is_configurable() {
    let mut d = limited(|l| l.max_message_size = 29);
    start(&mut d, base(), peer(1), guid(1));
    assert_dropped(&d, DropReason::TooLarge, 1);
    assert_eq!(events(&mut d), [Event::LimitExceeded { from: peer(1), limit: Limit::MessageSize }]);
    let mut d = limited(|l| l.max_message_size = 30);
    start(&mut d, base(), peer(1), guid(1));
    assert_eq!(d.partial_messages(), 1);
}

/// A sender at `max_partials_per_sender` that starts one more loses its oldest and is reported;
/// other senders keep theirs.
#[test]
fn partials_per_sender_evicts_the_oldest() {
    let t0 = base();
    let mut d = limited(|l| l.max_partials_per_sender = 2);
    start(&mut d, t0, peer(9), guid(9));
    start(&mut d, t0, peer(1), guid(3)); // oldest of peer 1, though not the smallest GUID
    start(&mut d, t0, peer(1), guid(1));
    assert!(events(&mut d).is_empty());
    start(&mut d, t0, peer(1), guid(2));
    assert_eq!(
        events(&mut d),
        [
            Event::LimitExceeded { from: peer(1), limit: Limit::PartialsPerSender },
            abandoned(peer(1), guid(3), Limit::PartialsPerSender),
        ]
    );
    assert_eq!(d.partial_messages(), 3);
    assert_eq!(d.stats().limits_exceeded, 1);
}

/// A sender past `max_bytes_per_sender` loses its oldest messages until the fragment fits.
#[test]
fn bytes_per_sender_evicts_the_oldest() {
    let t0 = base();
    let cost = 10 + PIECE_OVERHEAD;
    let mut d = limited(|l| {
        l.max_message_size = 30;
        l.max_bytes_per_sender = 2 * cost;
    });
    start(&mut d, t0, peer(1), guid(1));
    start(&mut d, t0, peer(2), guid(1));
    start(&mut d, t0, peer(1), guid(2));
    assert_eq!(d.bytes_held(), 3 * cost);
    start(&mut d, t0, peer(1), guid(3));
    assert_eq!(
        events(&mut d),
        [
            Event::LimitExceeded { from: peer(1), limit: Limit::BytesPerSender },
            abandoned(peer(1), guid(1), Limit::BytesPerSender),
        ]
    );
    assert_eq!(d.bytes_held(), 3 * cost);
}

/// Past `max_bytes_total` the oldest partial message of any sender goes first.
#[test]
fn bytes_total_evicts_the_globally_oldest() {
    let t0 = base();
    let cost = 10 + PIECE_OVERHEAD;
    let mut d = limited(|l| {
        l.max_message_size = 30;
        l.max_bytes_per_sender = 2 * cost;
        l.max_bytes_total = 2 * cost;
    });
    start(&mut d, t0, peer(2), guid(1));
    start(&mut d, t0, peer(1), guid(1));
    start(&mut d, t0, peer(3), guid(1));
    assert_eq!(events(&mut d), [abandoned(peer(2), guid(1), Limit::BytesTotal)]);
    assert_eq!(d.bytes_held(), 2 * cost);
}

/// docs/limits.md: partial messages are charged to the host's memory budget; past it the
/// globally oldest is abandoned, and what is freed is released.
#[test]
fn memory_budget_evicts_the_oldest_and_releases_what_is_freed() {
    let t0 = base();
    let cost = 10 + PIECE_OVERHEAD;
    let mut d = limited(|l| l.max_message_size = 30);
    let budget = dplay_wire::budget::MemoryBudget::new(2 * cost);
    d.set_memory_budget(&budget);
    start(&mut d, t0, peer(2), guid(1));
    start(&mut d, t0, peer(1), guid(1));
    assert_eq!(budget.held(), 2 * cost);
    start(&mut d, t0, peer(3), guid(1));
    assert_eq!(events(&mut d), [abandoned(peer(2), guid(1), Limit::MemoryBudget)]);
    assert_eq!(budget.held(), 2 * cost);
    d.forget_peer(t0, peer(1));
    d.forget_peer(t0, peer(3));
    assert_eq!(budget.held(), 0);
}

/// A message that cannot fit even alone (many small fragments, each charged its overhead) is
/// abandoned; its next fragments are refused.
#[test]
fn message_too_big_for_the_budget_is_abandoned() {
    let t0 = base();
    let mut d = limited(|l| {
        l.max_message_size = 300;
        l.max_bytes_per_sender = 300;
    });
    let frags = pieces(guid(1), &message(300), 10);
    for f in &frags[..5] {
        d.handle_message(t0, peer(1), &packet(f.clone()));
    }
    assert_dropped(&d, DropReason::OverLimit, 1);
    assert_eq!(
        events(&mut d),
        [
            Event::LimitExceeded { from: peer(1), limit: Limit::BytesPerSender },
            abandoned(peer(1), guid(1), Limit::BytesPerSender),
        ]
    );
    d.handle_message(t0, peer(1), &packet(frags[5].clone()));
    assert_dropped(&d, DropReason::Abandoned, 1);
    assert_eq!((d.partial_messages(), d.bytes_held()), (0, 0));
}

/// A reliable sender whose message was evicted is not acknowledged any more, so it gives up
/// and reports, instead of believing the message delivered.
#[test]
fn evicted_reliable_message_is_not_acknowledged() {
    let t0 = base();
    let mut d = limited(|l| l.max_partials_per_sender = 1);
    let first = pieces(guid(1), &message(30), 10);
    d.handle_message(t0, peer(1), &packet2(first[0].clone()));
    d.handle_message(t0, peer(1), &packet2(pieces(guid(2), &message(30), 10)[0].clone()));
    assert_eq!(transmits(&mut d).len(), 2);
    d.handle_message(t0, peer(1), &packet2(first[1].clone()));
    assert!(transmits(&mut d).is_empty());
    assert_dropped(&d, DropReason::Abandoned, 1);
}

/// Finished GUIDs are remembered for `finished_memory`, then forgotten.
#[test]
fn finished_messages_are_forgotten_after_a_while() {
    let t0 = base();
    let mut d = endpoint(Config::default());
    let frags = pieces(guid(1), &message(30), 10);
    for f in &frags {
        d.handle_message(t0, peer(1), &packet(f.clone()));
    }
    d.handle_message(t0 + Duration::from_secs(74), peer(1), &packet(frags[0].clone()));
    assert_dropped(&d, DropReason::Duplicate, 1);
    d.handle_message(t0 + Duration::from_secs(75), peer(1), &packet(frags[0].clone()));
    assert_eq!(d.partial_messages(), 1, "forgotten: the fragment starts a new message");
}
