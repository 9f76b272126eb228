use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

use dplay_sim::{LinkConfig, Node, Sim, Transmit};
use dplay_wire::dp8::path_test::{NatResolverQuery, NatResolverResponse, PathTest};
use dplay_wire::{Blob, Wire};
use proptest::prelude::*;

use super::*;

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace().map(|b| u8::from_str_radix(b, 16).unwrap()).collect()
}

fn now() -> Instant {
    Sim::new(0).now()
}

fn addr(text: &str) -> SocketAddr {
    text.parse().unwrap()
}

/// Everything `server` has to send.
fn sent(server: &mut ResolverServer) -> Vec<(SocketAddr, Vec<u8>)> {
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(to) = server.poll_transmit(&mut buf) {
        out.push((to, buf.clone()));
    }
    out
}

fn query(message_id: u16, source_id: u32, user_data: &[u8]) -> Vec<u8> {
    NatResolverQuery { message_id, source_id, user_data: Blob::new(user_data) }.to_vec().unwrap()
}

/// MC-DPLNAT 4.1's UDP payloads: the query from the client, the response the server sends.
const QUERY_4_1: &str = "00 06 F1 D5 3C 16 51 BA";
const RESPONSE_4_1: &str = "00 07 F1 D5 3C 16 51 BA 7D 22 AD 87 F9 2B";

/// MC-DPLNAT 4.1: the query arrives from the NAT's public side, 65.52.252.61:2302; the server
/// answers there with exactly the example's bytes (MC-DPLNAT 3.2.5).
#[test]
fn mc_dpl_nat_4_1_server_answers_the_example_byte_for_byte() {
    let mut server = ResolverServer::new(None, ResolverLimits::default(), now());
    server.handle_datagram(now(), addr("65.52.252.61:2302"), &hex(QUERY_4_1));
    assert_eq!(sent(&mut server), vec![(addr("65.52.252.61:2302"), hex(RESPONSE_4_1))]);
    assert_eq!(server.stats().answered, 1);
}

/// MC-DPLNAT 4.1 from the client's side: it sent wMessageID 0xD5F1 and dwSourceID 0xBA51163C
/// and learns 65.52.252.61:2302 from the example's response (MC-DPLNAT 3.3.5).
#[test]
fn mc_dpl_nat_4_1_client_sends_the_example_and_reads_the_answer() {
    let resolver = addr("65.52.10.10:2506");
    let mut client = ResolverClient::new(resolver, Vec::new(), 0xD5F1, 0xBA51_163C, now());
    client.handle_timeout(now());
    let mut buf = Vec::new();
    assert_eq!(client.poll_transmit(&mut buf), Some(resolver));
    assert_eq!(buf, hex(QUERY_4_1));
    assert!(client.handle_datagram(resolver, &hex(RESPONSE_4_1)));
    let public = SocketAddrV4::new(Ipv4Addr::new(65, 52, 252, 61), 2302);
    assert_eq!(client.poll_outcome(), Some(ResolverOutcome::Resolved(public)));
    assert_eq!(client.poll_outcome(), None, "reported once");
    assert_eq!(client.poll_timeout(), None, "the Retry Timer is canceled");
}

/// The optional check of MC-DPLNAT 3.2.5: with a user string set, the 4.1 query (no UserData)
/// and a wrong string are ignored; the string as UTF-8 or UTF-16LE, with or without a NUL, is
/// answered.
#[test]
fn user_string_check() {
    let mut server = ResolverServer::new(Some(UserString::new("FS2004")), ResolverLimits::default(), now());
    let wide: Vec<u8> = "FS2004".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let mut wide_nul = wide.clone();
    wide_nul.extend([0, 0]);
    let from = |n: u8| SocketAddr::from((Ipv4Addr::new(198, 51, 100, n), 2302));
    server.handle_datagram(now(), from(1), &hex(QUERY_4_1));
    server.handle_datagram(now(), from(2), &query(1, 2, b"FS2002"));
    server.handle_datagram(now(), from(3), &query(1, 2, b"FS2004x"));
    assert!(sent(&mut server).is_empty());
    assert_eq!(server.stats().refused_user_data, 3);
    for (n, data) in [(4, b"FS2004".to_vec()), (5, b"FS2004\0".to_vec()), (6, wide), (7, wide_nul)] {
        server.handle_datagram(now(), from(n), &query(7, 9, &data));
    }
    let to: Vec<SocketAddr> = sent(&mut server).into_iter().map(|(to, _)| to).collect();
    assert_eq!(to, vec![from(4), from(5), from(6), from(7)]);
}

/// MC-DPLNAT 3.2.5: responses, PATH_TESTs, short queries and other bytes are ignored and
/// counted; so are queries no answer can go to.
#[test]
fn ignores_what_is_not_an_answerable_query() {
    let mut server = ResolverServer::new(None, ResolverLimits::default(), now());
    let from = addr("198.51.100.1:2302");
    server.handle_datagram(now(), from, &hex(RESPONSE_4_1));
    server.handle_datagram(now(), from, &PathTest { msg_id: 1, key: 2 }.to_vec().unwrap());
    server.handle_datagram(now(), from, &hex("00 06 F1 D5 3C 16 51"));
    server.handle_datagram(now(), from, &hex("88 01 00 00"));
    server.handle_datagram(now(), from, &[]);
    assert_eq!(server.stats().malformed, 5);
    server.handle_datagram(now(), SocketAddr::from((Ipv6Addr::LOCALHOST, 2302)), &hex(QUERY_4_1));
    server.handle_datagram(now(), addr("198.51.100.1:0"), &hex(QUERY_4_1));
    server.handle_datagram(now(), addr("255.255.255.255:2302"), &hex(QUERY_4_1));
    server.handle_datagram(now(), addr("224.0.0.1:2302"), &hex(QUERY_4_1));
    assert_eq!(server.stats().unanswerable, 4);
    assert!(sent(&mut server).is_empty());
}

/// A flood with one (possibly forged) source gets [`ResolverLimits::per_source_per_second`]
/// answers a second; a flood over many sources gets `total_per_second` and counts at most
/// `max_sources` of them.
#[test]
fn hostile_floods_are_capped() {
    let limits =
        ResolverLimits { per_source_per_second: 4, total_per_second: 10, max_sources: 6, max_queued: 256 };
    let mut server = ResolverServer::new(None, limits, now());
    let victim = addr("198.51.100.9:2302");
    for _ in 0..1000 {
        server.handle_datagram(now(), victim, &hex(QUERY_4_1));
    }
    assert_eq!(sent(&mut server).len(), 4);
    assert_eq!(server.stats().rate_limited, 996);
    let later = now() + Duration::from_secs(1);
    for n in 0..=255u8 {
        server.handle_datagram(
            later,
            SocketAddr::from((Ipv4Addr::new(203, 0, 113, n), 2302)),
            &hex(QUERY_4_1),
        );
    }
    let answered = sent(&mut server);
    assert_eq!(answered.len(), 6, "only max_sources sources are counted in one second");
    let even_later = later + Duration::from_secs(1);
    for n in 0..=255u8 {
        for _ in 0..3 {
            server.handle_datagram(
                even_later,
                SocketAddr::from((Ipv4Addr::new(203, 0, 113, n), 2302)),
                &hex(QUERY_4_1),
            );
        }
    }
    assert_eq!(sent(&mut server).len(), 10, "total_per_second");
}

/// The responses wait in a bounded queue: past `max_queued` unsent, queries are dropped.
#[test]
fn the_send_queue_is_bounded() {
    let limits = ResolverLimits { max_queued: 3, ..ResolverLimits::default() };
    let mut server = ResolverServer::new(None, limits, now());
    for n in 0..10u8 {
        server.handle_datagram(
            now(),
            SocketAddr::from((Ipv4Addr::new(203, 0, 113, n), 2302)),
            &hex(QUERY_4_1),
        );
    }
    assert_eq!(sent(&mut server).len(), 3);
}

/// MC-DPLNAT 3.3.2, 3.3.6: four queries one second apart, each with a new wMessageID, then
/// the client gives up.
#[test]
fn client_retries_four_times_then_gives_up() {
    let resolver = addr("198.51.100.1:6073");
    let start = now();
    let mut client = ResolverClient::new(resolver, b"hi".to_vec(), 0xFFFF, 7, start);
    let mut ids = Vec::new();
    let mut t = start;
    while let Some(at) = client.poll_timeout() {
        assert!(at >= t);
        t = at;
        client.handle_timeout(t);
        let mut buf = Vec::new();
        if client.poll_transmit(&mut buf).is_some() {
            let q = NatResolverQuery::parse(&buf).unwrap();
            assert_eq!((q.source_id, q.user_data.as_ref()), (7, b"hi".as_slice()));
            ids.push((t - start, q.message_id));
        }
    }
    let secs = |s| Duration::from_secs(s);
    assert_eq!(ids, vec![(secs(0), 0xFFFF), (secs(1), 0), (secs(2), 1), (secs(3), 2)]);
    assert_eq!(t - start, RETRY_INTERVAL * MAX_TRIES);
    assert_eq!(client.poll_outcome(), Some(ResolverOutcome::GaveUp));
}

/// MC-DPLNAT 3.3.5: a response must echo a query sent and come from the resolver; the rest of
/// what arrives belongs to the session.
#[test]
fn client_takes_only_its_resolvers_valid_answer() {
    let resolver = addr("198.51.100.1:6073");
    let mut client = ResolverClient::new(resolver, Vec::new(), 10, 20, now());
    client.handle_timeout(now());
    assert!(client.poll_transmit(&mut Vec::new()).is_some());
    let answer = |message_id_echo, source_id_echo| {
        NatResolverResponse { message_id_echo, source_id_echo, address: Ipv4Addr::new(1, 2, 3, 4), port: 5 }
            .to_vec()
            .unwrap()
    };
    assert!(!client.handle_datagram(addr("198.51.100.2:6073"), &answer(10, 20)), "another address");
    assert!(!client.handle_datagram(resolver, &hex("88 01 00 00 06 00 01 00 E4 1C B0 50")), "a CONNECT");
    assert!(client.handle_datagram(resolver, &answer(11, 20)), "an ID never sent");
    assert!(client.handle_datagram(resolver, &answer(10, 21)));
    assert!(client.handle_datagram(resolver, &hex("00 07 01")), "malformed");
    assert_eq!(client.poll_outcome(), None);
    assert!(client.handle_datagram(resolver, &answer(10, 20)));
    let public = SocketAddrV4::new(Ipv4Addr::new(1, 2, 3, 4), 5);
    assert_eq!(client.poll_outcome(), Some(ResolverOutcome::Resolved(public)));
}

/// A node of the simulated network running a server or a client.
enum Resolver {
    Server(ResolverServer),
    Client(ResolverClient),
}

impl Node for Resolver {
    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        match self {
            Self::Server(s) => s.handle_datagram(now, from, data),
            Self::Client(c) => {
                c.handle_datagram(from, data);
            }
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        if let Self::Client(c) = self {
            c.handle_timeout(now);
        }
    }

    fn poll_transmit(&mut self, _now: Instant) -> Option<Transmit> {
        let mut contents = Vec::new();
        let destination = match self {
            Self::Server(s) => s.poll_transmit(&mut contents),
            Self::Client(c) => c.poll_transmit(&mut contents),
        }?;
        Some(Transmit { destination, contents })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        match self {
            Self::Server(_) => None,
            Self::Client(c) => c.poll_timeout(),
        }
    }
}

/// On the simulated network, over a link that loses half the datagrams each way (a round trip
/// succeeds one time in four, so four tries do about two times in three): over 64 seeds the
/// client learns exactly its own address or gives up after four seconds; never anything else.
#[test]
fn sim_lossy_link_resolves_or_gives_up() {
    let (mut resolved, mut gave_up) = (0, 0);
    for seed in 0..64 {
        let mut sim = Sim::new(seed);
        sim.set_default_link(LinkConfig::lossy(0.5).with_latency(Duration::from_millis(40)));
        let server_addr = addr("198.51.100.1:2506");
        let client_addr = addr("203.0.113.7:2302");
        let start = sim.now();
        sim.add_node(
            server_addr,
            Resolver::Server(ResolverServer::new(None, ResolverLimits::default(), start)),
        );
        let client = sim.add_node(
            client_addr,
            Resolver::Client(ResolverClient::new(server_addr, Vec::new(), 1, 2, start)),
        );
        sim.run_for(Duration::from_secs(6));
        let Resolver::Client(c) = sim.node_mut::<Resolver>(client) else { unreachable!() };
        match c.poll_outcome() {
            Some(ResolverOutcome::Resolved(public)) => {
                assert_eq!(SocketAddr::V4(public), client_addr, "seed {seed}");
                resolved += 1;
            }
            Some(ResolverOutcome::GaveUp) => gave_up += 1,
            None => panic!("seed {seed}: still waiting after 6 s"),
        }
    }
    assert!(resolved >= 30 && gave_up > 0, "resolved {resolved}, gave up {gave_up}");
}

proptest! {
    /// Whatever arrives, every response goes to the source of the query it answers, echoes its
    /// IDs and names that source; no source gets more than its cap in one window.
    #[test]
    fn answers_go_only_to_their_source(
        datagrams in proptest::collection::vec((0u8..4, any::<u16>(), proptest::collection::vec(any::<u8>(), 0..20)), 0..64)
    ) {
        let mut server = ResolverServer::new(None, ResolverLimits::default(), now());
        let mut per_source = std::collections::BTreeMap::new();
        for (host, port, data) in datagrams {
            let from = SocketAddr::from((Ipv4Addr::new(192, 0, 2, host + 1), port));
            let before = server.stats().answered;
            server.handle_datagram(now(), from, &data);
            for (to, bytes) in sent(&mut server) {
                prop_assert_eq!(to, from);
                let q = NatResolverQuery::parse(&data).unwrap();
                let r = NatResolverResponse::parse(&bytes).unwrap();
                prop_assert_eq!((r.message_id_echo, r.source_id_echo), (q.message_id, q.source_id));
                prop_assert_eq!(SocketAddr::from((r.address, r.port)), from);
                *per_source.entry(host).or_insert(0u32) += 1;
            }
            prop_assert!(server.stats().answered - before <= 1);
        }
        prop_assert!(per_source.values().all(|n| *n <= ResolverLimits::default().per_source_per_second));
    }
}
