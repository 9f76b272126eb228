//! State-machine tests: exchanges of typed messages, each naming its spec section.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_wire::Blob;
use dplay_wire::dp4::fragment::{Fragment, PACKET_DATA_OFFSET, PacketAck};

use super::*;

mod limits;
mod receive;
mod send;

/// The one clock reading of a test; every other instant is this plus a duration.
#[allow(clippy::disallowed_methods)] // tests need one real Instant to offset from
fn base() -> Instant {
    Instant::now()
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn peer(n: u8) -> SocketAddr {
    SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, n), 2300))
}

/// MTU giving `data` bytes of PacketData per fragment.
fn mtu_for(data: usize) -> usize {
    FRAGMENT_OVERHEAD + data
}

#[track_caller]
fn endpoint(config: Config) -> Dpsp {
    Dpsp::new(config).expect("valid config")
}

fn small_mtu(data: usize) -> Config {
    Config { mtu: mtu_for(data), ..Config::default() }
}

fn transmits(d: &mut Dpsp) -> Vec<Transmit> {
    std::iter::from_fn(|| d.poll_transmit()).collect()
}

fn events(d: &mut Dpsp) -> Vec<Event> {
    std::iter::from_fn(|| d.poll_event()).collect()
}

fn guid(n: u8) -> Uuid {
    Uuid::from_bytes([n; 16])
}

/// A fragment with every field given; `PacketOffset` is 48 as senders write it.
fn frag(guid: Uuid, index: u32, offset: u32, total: u32, size: u32, data: &[u8]) -> Fragment {
    Fragment {
        guid_message: guid,
        packet_index: index,
        offset,
        total_packets: total,
        message_size: size,
        packet_offset: PACKET_DATA_OFFSET,
        data: Blob::new(data),
    }
}

/// The fragments of `message` cut into `data`-byte pieces.
fn pieces(guid: Uuid, message: &[u8], data: usize) -> Vec<Fragment> {
    split_message(guid, message, data).expect("splittable").collect()
}

fn message(len: usize) -> Vec<u8> {
    (0..len).map(|i| u8::try_from((i * 7 + i / 251) % 256).unwrap()).collect()
}

#[track_caller]
fn single_delivery(d: &mut Dpsp) -> Vec<u8> {
    let delivered: Vec<Vec<u8>> = events(d)
        .into_iter()
        .filter_map(|e| match e {
            Event::Delivered { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(delivered.len(), 1, "exactly one delivery expected");
    delivered.into_iter().next().unwrap()
}

#[track_caller]
fn assert_dropped(d: &Dpsp, reason: DropReason, n: u64) {
    assert_eq!(d.stats().dropped(reason), n, "drops for {reason:?}: {:?}", d.stats());
}

fn packet(f: Fragment) -> DpspMessage {
    DpspMessage::Packet(f)
}

fn packet2(f: Fragment) -> DpspMessage {
    DpspMessage::Packet2Data(f)
}

fn ack_of(t: &Transmit) -> PacketAck {
    match &t.message {
        DpspMessage::Packet2Ack(a) => *a,
        other => panic!("expected PACKET2_ACK, got {other:?}"),
    }
}

fn fragment_of(t: &Transmit) -> &Fragment {
    match &t.message {
        DpspMessage::Packet(f) | DpspMessage::Packet2Data(f) => f,
        other => panic!("expected a fragment, got {other:?}"),
    }
}

#[test]
fn timer_table_pops_in_deadline_order() {
    let t0 = base();
    let mut table = timer::TimerTable::default();
    let a = timer::MessageKey { peer: peer(1), guid: guid(1) };
    let b = timer::MessageKey { peer: peer(2), guid: guid(2) };
    table.set(Timer::Packetize, a, t0 + ms(30));
    table.set(Timer::Discard, b, t0 + ms(10));
    table.set(Timer::Packetize, a, t0 + ms(20)); // re-armed: the old deadline is gone
    assert_eq!(table.len(), 2);
    assert_eq!(table.next(), Some(t0 + ms(10)));
    assert_eq!(table.pop_due(t0 + ms(5)), None);
    assert_eq!(table.pop_due(t0 + ms(25)), Some((Timer::Discard, b)));
    assert_eq!(table.pop_due(t0 + ms(25)), Some((Timer::Packetize, a)));
    assert_eq!(table.pop_due(t0 + ms(99)), None);
    table.set(Timer::Discard, b, t0);
    table.cancel(Timer::Discard, b);
    assert_eq!(table.next(), None);
}

#[test]
fn config_validation() {
    assert_eq!(Config::default().validate(), Ok(()));
    let tiny = Config { mtu: FRAGMENT_OVERHEAD, ..Config::default() };
    assert_eq!(Dpsp::new(tiny).unwrap_err(), ConfigError::MtuTooSmall { mtu: 68, min: 69 });
    let mut c = Config::default();
    c.limits.max_bytes_per_sender = 1000;
    assert_eq!(c.validate(), Err(ConfigError::BudgetTooSmall));
    let mut c = Config::default();
    c.limits.max_partials_per_sender = 0;
    assert_eq!(c.validate(), Err(ConfigError::ZeroLimit));
    let c = Config { packetize_rtt_floor: Duration::ZERO, ..Config::default() };
    assert_eq!(c.validate(), Err(ConfigError::ZeroTimer));
}
