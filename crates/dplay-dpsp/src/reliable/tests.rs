//! State-machine tests: exchanges of typed frames between two endpoints, each naming its
//! MC-DPL4R section.
#![allow(clippy::cast_possible_truncation, reason = "test data patterns wrap on purpose")]

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_wire::Blob;
use dplay_wire::dp4::reliable::{AckFrame, DataFrame, FrameBody, NackFrame, ReliableFlags, ReliableFrame};

use super::*;

mod exchange;
mod hostile;
mod spec_examples;
mod stale;
mod windows;

/// The one clock reading of a test; every other instant is this plus a duration.
#[allow(clippy::disallowed_methods)] // tests need one real Instant to offset from
fn base() -> Instant {
    Instant::now()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn addr(n: u8) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, n), 2350))
}

const A: u8 = 1;
const B: u8 = 2;
/// Player indexes: A's system player is index 1, B's is index 2.
const A_INDEX: u16 = 1;
const B_INDEX: u16 = 2;

/// Data bytes per frame in the small-MTU configuration.
const DATA: usize = 10;

fn small() -> Config {
    Config { mtu: FRAME_OVERHEAD + DATA, ..Config::default() }
}

/// Two endpoints with their links open to each other.
#[track_caller]
fn pair(config: Config) -> (Reliable, Reliable) {
    let mut a = Reliable::new(config.clone()).expect("valid config");
    let mut b = Reliable::new(config).expect("valid config");
    a.open_link(addr(B), A_INDEX, B_INDEX).unwrap();
    b.open_link(addr(A), B_INDEX, A_INDEX).unwrap();
    (a, b)
}

fn out(e: &mut Reliable) -> Vec<ReliableFrame> {
    std::iter::from_fn(|| e.poll_transmit()).map(|t| t.frame).collect()
}

fn events(e: &mut Reliable) -> Vec<Event> {
    std::iter::from_fn(|| e.poll_event()).collect()
}

/// Hands `frames` to `to` as coming from `from`.
fn feed(to: &mut Reliable, now: Instant, from: u8, frames: &[ReliableFrame]) {
    for f in frames {
        to.handle_frame(now, addr(from), f);
    }
}

/// Carries frames both ways, running timers, until both sides are idle; returns when.
fn run(a: &mut Reliable, b: &mut Reliable, start: Instant) -> Instant {
    let mut now = start;
    for _ in 0..10_000 {
        settle(a, b, now);
        let Some(next) = [a.poll_timeout(), b.poll_timeout()].into_iter().flatten().min() else {
            return now;
        };
        now = now.max(next);
        a.handle_timeout(now);
        b.handle_timeout(now);
    }
    panic!("never idle");
}

/// Carries frames both ways at `now` until neither side has anything to send.
fn settle(a: &mut Reliable, b: &mut Reliable, now: Instant) {
    for _ in 0..1000 {
        let (fa, fb) = (out(a), out(b));
        if fa.is_empty() && fb.is_empty() {
            return;
        }
        feed(b, now, A, &fa);
        feed(a, now, B, &fb);
    }
    panic!("no quiescence");
}

#[track_caller]
fn data(f: &ReliableFrame) -> &DataFrame {
    match &f.body {
        FrameBody::Data(d) => d,
        other => panic!("expected a data frame, got {other:?}"),
    }
}

#[track_caller]
fn ack(f: &ReliableFrame) -> &AckFrame {
    match &f.body {
        FrameBody::Ack(a) => a,
        other => panic!("expected an ACK, got {other:?}"),
    }
}

/// (messageid, reliable, data) of every delivery.
fn delivered(e: &mut Reliable) -> Vec<(u8, bool, Vec<u8>)> {
    events(e)
        .into_iter()
        .filter_map(|ev| match ev {
            Event::Delivered { message_id, reliable, data, .. } => Some((message_id, reliable, data)),
            Event::LinkFailed { .. } => None,
        })
        .collect()
}

fn bytes_of(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed)).collect()
}

#[track_caller]
fn assert_dropped(e: &Reliable, reason: DropReason, n: u64) {
    assert_eq!(e.stats().dropped(reason), n, "drops for {reason:?}: {:?}", e.stats());
}

/// A hand-made data frame from A to B.
fn frame(flags: ReliableFlags, message_id: u8, sequence: u8, data: &[u8]) -> ReliableFrame {
    ReliableFrame {
        id_from: A_INDEX,
        id_to: B_INDEX,
        body: FrameBody::Data(DataFrame {
            flags: flags | ReliableFlags::CMD,
            message_id,
            sequence,
            serial: 0,
            nack: None,
            data: Blob::new(data),
        }),
    }
}

#[test]
fn config_validation() {
    assert_eq!(Config::default().validate(), Ok(()));
    let tiny = Config { mtu: FRAME_OVERHEAD, ..Config::default() };
    assert!(matches!(Reliable::new(tiny), Err(ConfigError::MtuTooSmall { .. })));
    let wide = Config { window: 128, ..Config::default() };
    assert_eq!(wide.validate(), Err(ConfigError::BadWindow(128)));
    let mut c = Config::default();
    c.limits.max_queued_bytes = 10;
    assert_eq!(c.validate(), Err(ConfigError::BudgetTooSmall));
    let c = Config { min_rto: ms(6000), ..Config::default() };
    assert_eq!(c.validate(), Err(ConfigError::BadRto));
    let c = Config { min_rto: ms(0), ack_delay: ms(0), ..Config::default() };
    assert_eq!(c.validate(), Err(ConfigError::ZeroTimer));
}

/// MC-DPL4R 2.2.1, F-30: a player index is the low 16 bits of the ID before the XOR.
#[test]
fn player_index_is_the_unmasked_low_word() {
    assert_eq!(player_index(0x1E52_A0A3, 0x1E52_A0A1), 2);
    assert_eq!(player_index(0xFFFF_0005, 0), 5);
}
