//! The relay's rules, one datagram at a time (docs/relay.md).

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_wire::Wire;
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::path_test::{PathTest, path_test_key};
use proptest::prelude::*;
use uuid::Uuid;

use super::*;

const APP: Uuid = Uuid::from_u128(0xa);
const INSTANCE: Uuid = Uuid::from_u128(0x1);

#[allow(clippy::disallowed_methods)] // tests need one real starting instant; time then advances by hand
pub(crate) fn t0() -> Instant {
    Instant::now()
}

fn addr(ip: [u8; 4], port: u16) -> SocketAddr {
    SocketAddr::from((Ipv4Addr::from(ip), port))
}

fn endpoint(i: u16) -> SocketAddr {
    addr([203, 0, 113, 1], 6100 + i)
}

fn relay(endpoints: u16) -> Relay {
    Relay::new(RelayConfig::new((0..endpoints).map(endpoint).collect()))
}

/// A CONNECT CFRAME's first bytes (MC-DPL8R 2.2.1.1: bCommand 0x88, bExtOpCode 0x01).
fn connect() -> Vec<u8> {
    vec![0x88, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
}

fn path_test(from: Dpnid, to: Dpnid) -> Vec<u8> {
    PathTest { msg_id: 1, key: path_test_key(from.0, to.0, &APP, &INSTANCE) }.to_vec().unwrap()
}

fn drain(r: &mut Relay) -> Vec<(Forward, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(f) = r.poll_forward(&mut buf) {
        out.push((f, std::mem::take(&mut buf)));
    }
    out
}

const A: Dpnid = Dpnid(0x11);
const B: Dpnid = Dpnid(0x22);

/// A (older) and B (the joiner) behind two NATs, B's symmetric: B's PATH_TEST latches it at
/// A's endpoint, A's CONNECT latches A at B's; then frames flow both ways, unchanged, each
/// from the sender's endpoint to the latched address.
#[test]
fn a_joiner_and_an_older_member_latch_and_talk() {
    let mut r = relay(4);
    let a_pub = addr([198, 51, 100, 1], 40000);
    let b_pub = addr([198, 51, 100, 2], 50000);
    assert_eq!(r.admit(A, a_pub, APP, INSTANCE), Some(endpoint(0)));
    assert_eq!(r.admit(B, b_pub, APP, INSTANCE), Some(endpoint(1)));
    let now = t0();
    // B's symmetric NAT gives each endpoint its own port.
    let b_at_ra = addr([198, 51, 100, 2], 50111);
    r.handle_datagram(now, 0, b_at_ra, &path_test(B, A));
    assert!(drain(&mut r).is_empty(), "A has not sent to R(B): nothing is sent first");
    assert_eq!(r.stats().unlatched, 1);
    // A's cone NAT keeps its port.
    r.handle_datagram(now, 1, a_pub, &connect());
    assert_eq!(drain(&mut r), vec![(Forward { endpoint: 0, to: b_at_ra }, connect())]);
    let reply = vec![0x88, 0x02, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9];
    r.handle_datagram(now, 0, b_at_ra, &reply);
    assert_eq!(drain(&mut r), vec![(Forward { endpoint: 1, to: a_pub }, reply.clone())]);
    let s = r.stats();
    assert_eq!((s.datagrams, s.strangers, s.latched), (2, 0, 2));
    let a = s.members.iter().find(|m| m.dpnid == A).unwrap();
    assert_eq!((a.datagrams_from, a.bytes_from, a.datagrams_to, a.bytes_to), (1, 16, 1, 12));
}

/// Anything from a non-member, or to an endpoint no member holds, or not a first datagram a
/// member sends (a PATH_TEST with another key, data before a CONNECT), is dropped.
#[test]
fn strangers_get_nothing() {
    let mut r = relay(3);
    let a_pub = addr([198, 51, 100, 1], 40000);
    r.admit(A, a_pub, APP, INSTANCE);
    r.admit(B, addr([198, 51, 100, 2], 50000), APP, INSTANCE);
    let now = t0();
    let stranger = addr([192, 0, 2, 7], 1234);
    r.handle_datagram(now, 0, stranger, &connect());
    r.handle_datagram(now, 2, a_pub, &connect());
    r.handle_datagram(now, 1, a_pub, &[0x7f, 0, 1, 2]);
    r.handle_datagram(now, 0, addr([198, 51, 100, 2], 50000), &path_test(Dpnid(0x99), A));
    // A member sending to its own endpoint is no one the endpoint forwards for.
    r.handle_datagram(now, 0, a_pub, &connect());
    assert!(drain(&mut r).is_empty());
    assert_eq!(r.stats().strangers, 5);
}

/// Two older members behind one cone NAT (one public IP, the private subnets alike): each
/// CONNECT is told apart by its port.
#[test]
fn members_behind_one_nat() {
    let mut r = relay(3);
    let (a_pub, c_pub) = (addr([198, 51, 100, 1], 40000), addr([198, 51, 100, 1], 40001));
    let c = Dpnid(0x33);
    r.admit(A, a_pub, APP, INSTANCE);
    r.admit(c, c_pub, APP, INSTANCE);
    r.admit(B, addr([198, 51, 100, 2], 50000), APP, INSTANCE);
    let now = t0();
    r.handle_datagram(now, 2, c_pub, &connect());
    r.handle_datagram(now, 2, a_pub, &connect());
    let at = |r: &Relay, d: Dpnid| r.endpoints[2].by_member.get(&d).copied();
    assert_eq!((at(&r, A), at(&r, c)), (Some(a_pub), Some(c_pub)));
}

/// Two older members behind one symmetric NAT: a CONNECT from neither one's known port is
/// ambiguous and dropped; once one latched (here by its own port), the other is the only
/// candidate left.
#[test]
fn ambiguous_connects_wait_for_the_field_to_narrow() {
    let mut r = relay(3);
    let (a_pub, c_pub) = (addr([198, 51, 100, 1], 40000), addr([198, 51, 100, 1], 40001));
    let c = Dpnid(0x33);
    r.admit(A, a_pub, APP, INSTANCE);
    r.admit(c, c_pub, APP, INSTANCE);
    r.admit(B, addr([198, 51, 100, 2], 50000), APP, INSTANCE);
    let now = t0();
    let random = addr([198, 51, 100, 1], 61000);
    r.handle_datagram(now, 2, random, &connect());
    assert_eq!(r.stats().strangers, 1);
    r.handle_datagram(now, 2, a_pub, &connect());
    r.handle_datagram(now, 2, random, &connect());
    assert_eq!(r.endpoints[2].by_member.get(&c), Some(&random));
}

/// A member's leave frees its endpoint and forgets its latches: what it sends afterwards is a
/// stranger's, and the endpoint goes to the next joiner.
#[test]
fn a_leave_frees_the_endpoint() {
    let mut r = relay(2);
    let a_pub = addr([198, 51, 100, 1], 40000);
    let b_pub = addr([198, 51, 100, 2], 50000);
    r.admit(A, a_pub, APP, INSTANCE);
    r.admit(B, b_pub, APP, INSTANCE);
    assert_eq!(r.admit(Dpnid(0x44), b_pub, APP, INSTANCE), None, "every endpoint is taken");
    let now = t0();
    r.handle_datagram(now, 0, b_pub, &path_test(B, A));
    r.handle_datagram(now, 1, a_pub, &connect());
    assert_eq!(drain(&mut r).len(), 1);
    r.remove(A);
    r.handle_datagram(now, 1, a_pub, &connect());
    r.handle_datagram(now, 0, b_pub, &[0x88, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert!(drain(&mut r).is_empty());
    assert_eq!(r.stats().strangers, 2);
    assert_eq!(r.admit(Dpnid(0x44), a_pub, APP, INSTANCE), Some(endpoint(0)));
    assert!(r.endpoints[0].by_member.is_empty());
}

/// A freed endpoint is taken again last: members may still hold a connection to its address.
#[test]
fn the_endpoint_freed_longest_ago_first() {
    let mut r = relay(4);
    for (port, d) in (40000..).zip([A, B, Dpnid(0x33)]) {
        r.admit(d, addr([198, 51, 100, 1], port), APP, INSTANCE);
    }
    r.remove(B);
    r.remove(A);
    let next = |r: &mut Relay, d| r.admit(Dpnid(d), addr([198, 51, 100, 9], 1), APP, INSTANCE);
    assert_eq!(next(&mut r, 0x44), Some(endpoint(3)), "never held");
    assert_eq!(next(&mut r, 0x55), Some(endpoint(1)), "freed before endpoint 0");
    assert_eq!(next(&mut r, 0x66), Some(endpoint(0)));
}

/// A member over its rate cap is dropped and counted; the queue is charged to the budget.
#[test]
fn rate_and_memory_caps() {
    let mut cfg = RelayConfig::new((0..2).map(endpoint).collect());
    cfg.rate = RateLimit { datagrams: 40, bytes: 1 << 20 };
    cfg.budget = MemoryBudget::new(1 << 20);
    let budget = cfg.budget.clone();
    let mut r = Relay::new(cfg);
    let a_pub = addr([198, 51, 100, 1], 40000);
    let b_pub = addr([198, 51, 100, 2], 50000);
    r.admit(A, a_pub, APP, INSTANCE);
    r.admit(B, b_pub, APP, INSTANCE);
    let now = t0();
    r.handle_datagram(now, 0, b_pub, &path_test(B, A));
    for _ in 0..20 {
        r.handle_datagram(now, 1, a_pub, &connect());
    }
    assert_eq!(budget.held(), 10 * 16, "a quarter second's worth, queued");
    assert_eq!(drain(&mut r).len(), 10);
    assert_eq!(budget.held(), 0);
    let s = r.stats();
    assert_eq!((s.rate_limited, s.members.iter().find(|m| m.dpnid == A).unwrap().rate_limited), (10, 10));
    r.handle_datagram(now + Duration::from_secs(1), 1, a_pub, &connect());
    assert_eq!(drain(&mut r).len(), 1);
}

proptest! {
    /// Whatever arrives, from anyone: nothing goes to an address that is not a member's
    /// latched one, and no panic.
    #[test]
    fn only_members_receive(datagrams in prop::collection::vec(
        (0usize..4, 0u8..4, 0u16..3, prop::collection::vec(any::<u8>(), 0..40)), 0..60)
    ) {
        let mut r = relay(3);
        r.admit(A, addr([198, 51, 100, 1], 40000), APP, INSTANCE);
        r.admit(B, addr([198, 51, 100, 2], 50000), APP, INSTANCE);
        let now = t0();
        for (ep, host, port, mut data) in datagrams {
            if data.first() == Some(&1) {
                data = path_test(B, A);
            }
            let from = addr([198, 51, 100, host], 40000 + port);
            r.handle_datagram(now, ep, from, &data);
            for (f, _) in drain(&mut r) {
                let latched = r.endpoints[f.endpoint].by_member.values().any(|a| *a == f.to);
                prop_assert!(latched);
                let member_ip = [addr([198, 51, 100, 1], 0).ip(), addr([198, 51, 100, 2], 0).ip()];
                prop_assert!(member_ip.contains(&f.to.ip()));
            }
        }
    }
}

/// An endpoint advertised at a new public address (`--upnp` mapped it) is given from then on;
/// a member admitted before keeps the address it was given.
#[test]
fn an_advertised_endpoint_is_given_to_members_admitted_after() {
    let mut r = relay(2);
    let public = addr([198, 51, 100, 7], 41000);
    assert_eq!(r.admit(A, addr([192, 0, 2, 1], 1), APP, INSTANCE), Some(endpoint(0)));
    r.advertise(0, addr([198, 51, 100, 7], 40000));
    r.advertise(1, public);
    r.advertise(2, public); // no such endpoint: nothing
    assert_eq!(r.admit(B, addr([192, 0, 2, 2], 2), APP, INSTANCE), Some(public));
    assert_eq!(r.endpoints(), &[addr([198, 51, 100, 7], 40000), public][..]);
    let given: Vec<SocketAddr> = r.stats().members.iter().map(|m| m.endpoint).collect();
    assert_eq!(given, vec![endpoint(0), public]);
}
