//! Reassembly under loss, duplication and reordering over many seeds: two endpoints on a
//! simulated link, the datagrams carried as bytes (MC-DPL4CS 3.1.4.18, 3.1.5.27-3.1.5.29,
//! 3.1.6.1, 2.2.41). `DPSP_SEEDS=n` runs n seeds (default 400); a failure names its seed.

mod common;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use common::{base, delivered, events, peer, transmits};
use dplay_dpsp::{
    AbandonReason, Config, Datagram, Dpsp, DropReason, Event, FRAGMENT_OVERHEAD, Reliability, Stats,
};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

/// A datagram on the wire: when it lands, tie-break, where, from where, what.
type InFlight = (Instant, u64, SocketAddr, SocketAddr, Vec<u8>);

struct Link {
    rng: ChaCha8Rng,
    loss: f64,
    duplication: f64,
    max_delay_ms: u64,
    in_flight: Vec<InFlight>,
    next_id: u64,
}

impl Link {
    /// Carries every datagram `from` queued: maybe lost, maybe twice, each with its own delay,
    /// so they overtake each other.
    fn carry(&mut self, now: Instant, from: SocketAddr, d: &mut Dpsp) {
        for t in transmits(d) {
            let bytes = t.to_vec().expect("encodable");
            let copies = if self.rng.gen_bool(self.duplication) { 2 } else { 1 };
            for _ in 0..copies {
                if self.rng.gen_bool(self.loss) {
                    continue;
                }
                let at = now + Duration::from_millis(self.rng.gen_range(1..=self.max_delay_ms));
                self.next_id += 1;
                self.in_flight.push((at, self.next_id, t.to, from, bytes.clone()));
            }
        }
    }

    fn next_arrival(&self) -> Option<Instant> {
        self.in_flight.iter().map(|f| f.0).min()
    }

    /// Removes the earliest datagram due by `now`.
    fn pop_due(&mut self, now: Instant) -> Option<InFlight> {
        let (i, _) =
            self.in_flight.iter().enumerate().filter(|(_, f)| f.0 <= now).min_by_key(|(_, f)| (f.0, f.1))?;
        Some(self.in_flight.swap_remove(i))
    }
}

struct Outcome {
    sent: Vec<(Uuid, Vec<u8>)>,
    reliability: Reliability,
    lossy: bool,
    a_events: Vec<Event>,
    b_events: Vec<Event>,
    a_stats: Stats,
    b_stats: Stats,
}

fn run(seed: u64) -> Outcome {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let t0 = base();
    let reliability = if rng.gen_bool(0.5) { Reliability::Reliable } else { Reliability::Unreliable };
    let loss = *[0.0, 0.05, 0.3].choose(&mut rng).unwrap();
    let mut link = Link {
        rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
        loss,
        duplication: *[0.0, 0.2].choose(&mut rng).unwrap(),
        max_delay_ms: rng.gen_range(1..=80),
        in_flight: Vec::new(),
        next_id: 0,
    };
    let data_len = rng.gen_range(100..=1400);
    let mut config = Config::default().with_seed(seed);
    config.mtu = FRAGMENT_OVERHEAD + data_len;
    let mut a = Dpsp::new(config).unwrap();
    let mut b = Dpsp::new(Config::default().with_seed(seed ^ 1)).unwrap();
    let (pa, pb) = (peer(1), peer(2));
    let sent: Vec<(Uuid, Vec<u8>)> = (0..rng.gen_range(1..=3))
        .map(|_| {
            let mut m = vec![0; rng.gen_range(1..=30_000)];
            rng.fill(m.as_mut_slice());
            (a.send(t0, pb, &m, reliability).unwrap(), m)
        })
        .collect();
    let mut now = t0;
    let (mut a_events, mut b_events) = (Vec::new(), Vec::new());
    loop {
        link.carry(now, pa, &mut a);
        link.carry(now, pb, &mut b);
        a_events.extend(events(&mut a));
        b_events.extend(events(&mut b));
        let Some(next) =
            [link.next_arrival(), a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min()
        else {
            break;
        };
        assert!(next - t0 < Duration::from_secs(300), "seed {seed}: still busy after 300 s");
        now = next;
        while let Some((_, _, to, from, bytes)) = link.pop_due(now) {
            let d = if to == pb { &mut b } else { &mut a };
            assert_eq!(d.handle_datagram(now, from, &bytes), Datagram::Consumed, "seed {seed}");
        }
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    assert_eq!(
        (a.sends_in_flight(), b.partial_messages(), b.bytes_held()),
        (0, 0, 0),
        "seed {seed}: state left"
    );
    let (a_stats, b_stats) = (a.stats().clone(), b.stats().clone());
    Outcome { sent, reliability, lossy: loss > 0.0, a_events, b_events, a_stats, b_stats }
}

/// Checks one seed's run and returns its counters.
fn check(seed: u64) -> (Stats, Stats) {
    let o = run(seed);
    for (guid, message) in &o.sent {
        let got: Vec<&Event> = o
            .b_events
            .iter()
            .filter(|e| matches!(e, Event::Delivered { guid: g, .. } | Event::ReassemblyAbandoned { guid: g, .. } if g == guid))
            .collect();
        assert!(got.len() <= 1, "seed {seed}: {guid} finished twice: {got:?}");
        let was_delivered = delivered(&o.b_events).contains(&message.as_slice());
        match (o.reliability, o.lossy) {
            (Reliability::Reliable, _) => {
                assert!(was_delivered, "seed {seed}: reliable message {guid} not delivered");
                assert!(
                    o.a_events.contains(&Event::SendComplete { to: peer(2), guid: *guid }),
                    "seed {seed}"
                );
            }
            (Reliability::Unreliable, false) => assert!(was_delivered, "seed {seed}: {guid} not delivered"),
            (Reliability::Unreliable, true) => assert!(
                was_delivered
                    || matches!(
                        got.first(),
                        Some(Event::ReassemblyAbandoned { reason: AbandonReason::Idle, .. })
                    )
                    || got.is_empty(),
                "seed {seed}: {got:?}"
            ),
        }
    }
    assert_eq!(
        delivered(&o.b_events).len(),
        o.b_events.iter().filter(|e| matches!(e, Event::Delivered { .. })).count()
    );
    let limits = o.b_events.iter().filter(|e| matches!(e, Event::LimitExceeded { .. })).count();
    assert_eq!(limits, 0, "seed {seed}: within default limits");
    (o.a_stats, o.b_stats)
}

#[test]
fn reassembly_survives_loss_duplication_and_reordering() {
    let seeds: u64 = std::env::var("DPSP_SEEDS").ok().and_then(|s| s.parse().ok()).unwrap_or(400);
    let (mut resent, mut duplicates, mut repeated_acks, mut idle, mut delivered) = (0, 0, 0, 0, 0);
    for seed in 0..seeds {
        let (a, b) = check(seed);
        resent += a.fragments_resent;
        repeated_acks += a.dropped(DropReason::RepeatedAck);
        duplicates += b.dropped(DropReason::Duplicate);
        idle += b.reassemblies_abandoned;
        delivered += b.messages_delivered;
    }
    // The sweep reached every path it is meant to prove.
    if seeds >= 100 {
        assert!(resent > 0 && duplicates > 0 && repeated_acks > 0 && idle > 0 && delivered > seeds);
    }
}

/// The same seed replays the same run.
#[test]
fn runs_replay() {
    let (x, y) = (run(42), run(42));
    assert_eq!(x.a_events, y.a_events);
    assert_eq!(x.b_events, y.b_events);
}
