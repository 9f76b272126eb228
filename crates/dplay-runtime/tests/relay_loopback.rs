//! `dplay host --relay` over real loopback sockets (issue 23; docs/relay.md): a relaying host
//! and three members; each member learns the others at the host's relay endpoints, every
//! member's message reaches every other member through them, and a leave frees its endpoint.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_runtime::{
    Dp8Command, Dp8Event, Dp8Protocol, Relayed, Runtime, RuntimeConfig, SharedRelay, relay_sockets,
};
use dplay_session::{Event, SendFlags, SessionConfig};
use dplay_testkit::wait::wait_for;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x5e1a_5e1a_0000_4000_8000_0000_0000_0023);
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

fn config(local: SocketAddr, name: &str, seed: u64) -> SessionConfig {
    let mut c = SessionConfig::new(APP, local, name);
    c.session_name = "relay".into();
    c.rng_seed = seed;
    c.migrate_host = false;
    c
}

fn member(name: &str, seed: u64) -> Runtime<Dp8Protocol> {
    Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        Dp8Protocol::new(config(local, name, seed), Instant::now())
    })
    .unwrap()
}

#[test]
fn members_reach_each_other_through_the_relay() {
    let mut relay = None;
    let host = Runtime::try_spawn_with(RuntimeConfig::with_sockets(relay_sockets(LOOPBACK, 4)), |bound| {
        let shared = SharedRelay::new(bound, LOOPBACK.ip(), |_| {});
        let mut c = config(bound[0], "host", 1);
        c.address_map = Some(shared.address_map());
        let p = Dp8Protocol::new(c, Instant::now());
        shared.charge_to(p.session().memory_budget());
        relay = Some(shared.clone());
        Ok(Relayed::new(p, Some(shared)))
    })
    .unwrap();
    let relay = relay.unwrap();
    let endpoints: BTreeSet<u16> = host.local_addrs()[1..].iter().map(SocketAddr::port).collect();
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));

    let names = ["alpha", "bravo", "charlie"];
    let members: Vec<_> = names.iter().zip(2..).map(|(n, seed)| member(n, seed)).collect();
    for m in &members {
        m.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
        wait_for(m.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    }
    let held = relay.stats();
    assert_eq!(held.endpoints_held, 3);
    assert!(held.members.iter().all(|m| endpoints.contains(&m.endpoint.port())));

    for (m, name) in members.iter().zip(names) {
        m.command(Dp8Command::SendAll {
            data: name.as_bytes().to_vec(),
            flags: SendFlags::RELIABLE_SEQUENTIAL,
        })
        .unwrap();
    }
    for (m, name) in members.iter().zip(names) {
        let others: BTreeSet<String> =
            names.iter().filter(|n| **n != name).map(|n| (*n).to_owned()).collect();
        let mut got = BTreeSet::new();
        while !got.is_superset(&others) {
            let data = wait_for(m.events(), |e| match e {
                Dp8Event::Session(Event::Message { data, .. }) => {
                    Some(String::from_utf8_lossy(data).into_owned())
                }
                _ => None,
            });
            got.insert(data);
        }
    }
    let s = relay.stats();
    assert!(s.members.iter().all(|m| m.datagrams_from > 0 && m.datagrams_to > 0), "{s:?}");
    assert_eq!(s.strangers, 0);

    members[0].command(Dp8Command::Leave).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::PlayerRemoved { .. })).then_some(()));
    assert_eq!(relay.stats().endpoints_held, 2);
    host.shutdown().unwrap();
}
