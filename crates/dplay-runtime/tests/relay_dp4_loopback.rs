//! `dplay host --dp4 --relay` over real loopback sockets (issue 23; docs/relay.md, "DirectPlay
//! 4"): a relaying DirectPlay 4 host and three members; each member learns the others at the
//! host's relay endpoints, every member's guaranteed message reaches every other member through
//! them (back on the connections the members opened), and a leave frees its endpoint.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use dplay_runtime::{Dp4Binding, Dp4Command, Dp4Event, Dp4Protocol, Relayed, Runtime, SharedDp4Relay};
use dplay_session::dp4::{DPID_ALLPLAYERS, Dp4Config, Dp4Event as SessionEvent, HostConfig};
use dplay_testkit::wait::wait_for;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x5e1a_5e1a_0000_4000_8000_0000_0000_0004);

fn member() -> Runtime<Dp4Protocol> {
    Dp4Protocol::spawn(&Dp4Binding::client(Ipv4Addr::LOCALHOST), Dp4Config::default(), None).unwrap()
}

#[test]
fn dp4_members_reach_each_other_through_the_relay() {
    let mut binding = Dp4Binding::host(Ipv4Addr::LOCALHOST);
    binding.enum_port = Some(0);
    binding.relay_endpoints = 4;
    let public = |_| IpAddr::V4(Ipv4Addr::LOCALHOST);
    let (host, relay): (Runtime<Relayed<Dp4Protocol, SharedDp4Relay>>, _) =
        Dp4Protocol::spawn_relayed(&binding, Dp4Config::default(), None, public, |p| p).unwrap();
    let relay = relay.unwrap();
    let listener = host.socket_addr(Dp4Binding::LISTENER).unwrap();
    host.command(Dp4Command::Host(HostConfig::new("relay", APP))).unwrap();

    let names = ["alpha", "bravo", "charlie"];
    let members: Vec<_> = names.iter().map(|_| member()).collect();
    for (m, name) in members.iter().zip(names) {
        m.command(Dp4Command::Join { host: listener, password: None }).unwrap();
        wait_for(m.events(), |e| matches!(e, Dp4Event::Session(SessionEvent::Joined { .. })).then_some(()));
        m.command(Dp4Command::CreatePlayer(name.into())).unwrap();
        wait_for(m.events(), |e| {
            matches!(e, Dp4Event::Session(SessionEvent::PlayerCreated { .. })).then_some(())
        });
    }
    let endpoints: BTreeSet<u16> = relay.lock().endpoints().iter().map(|e| e.stream.port()).collect();
    let held = relay.lock().stats();
    assert_eq!(held.endpoints_held, 3);
    assert!(held.members.iter().all(|m| endpoints.contains(&m.endpoint.port())));

    for (m, name) in members.iter().zip(names) {
        let send = Dp4Command::Send {
            from: None,
            to: DPID_ALLPLAYERS,
            data: name.as_bytes().to_vec(),
            guaranteed: true,
        };
        m.command(send).unwrap();
    }
    for (m, name) in members.iter().zip(names) {
        let others: BTreeSet<String> =
            names.iter().filter(|n| **n != name).map(|n| (*n).to_owned()).collect();
        let mut got = BTreeSet::new();
        while !got.is_superset(&others) {
            let data = wait_for(m.events(), |e| match e {
                Dp4Event::Session(SessionEvent::Message { data, .. }) => {
                    Some(String::from_utf8_lossy(data).into_owned())
                }
                _ => None,
            });
            got.insert(data);
        }
    }
    let s = relay.lock().stats();
    assert!(s.members.iter().all(|m| m.datagrams_from > 0 && m.datagrams_to > 0), "{s:?}");
    assert_eq!(s.strangers, 0);

    members[0].command(Dp4Command::Leave).unwrap();
    wait_for(host.events(), |e| {
        matches!(e, Dp4Event::Session(SessionEvent::PlayerLeft { .. })).then_some(())
    });
    let mut held = relay.lock().stats().endpoints_held;
    for _ in 0..50 {
        if held == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        held = relay.lock().stats().endpoints_held;
    }
    assert_eq!(held, 2);
    host.shutdown().unwrap();
}
