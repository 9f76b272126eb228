//! Random sequences of joins, player creations, messages and departures: every instance ends
//! with the host's Player List, across host migration when MH is set (MC-DPL4CS 3.1.1,
//! 3.2.5.5, 3.1.5.12, 3.1.5.14, 3.1.7.1).

use proptest::prelude::*;

use dplay_wire::dp4::session::SessionFlags;

use super::net::{Net, session};
use crate::dp4::{Dp4Event, HostConfig, Role};

#[derive(Debug, Clone)]
enum Op {
    Join(usize),
    Create(usize),
    Send(usize, bool),
    Leave(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (1usize..4).prop_map(Op::Join),
        (0usize..4).prop_map(Op::Create),
        (0usize..4, any::<bool>()).prop_map(|(i, g)| Op::Send(i, g)),
        (0usize..4).prop_map(Op::Leave),
    ]
}

fn hosts(net: &Net) -> Vec<usize> {
    (0..4).filter(|&i| net.nodes[i].role() == Role::Host).collect()
}

fn joined(net: &Net, i: usize) -> bool {
    matches!(net.nodes[i].role(), Role::Member | Role::Host)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn name_tables_agree(ops in proptest::collection::vec(op(), 1..24), migrate in any::<bool>()) {
        let mut net = Net::new(4);
        let flags = if migrate { SessionFlags::MIGRATE_HOST } else { SessionFlags::empty() };
        net.host(HostConfig { flags, ..session("S") });
        for op in ops {
            let now = net.now;
            match op {
                Op::Join(i) if !joined(&net, i) && hosts(&net).len() == 1 => {
                    let host = hosts(&net)[0];
                    net.nodes[i].join(now, super::net::stream(host), None).unwrap();
                    net.run();
                }
                Op::Create(i) if joined(&net, i) => {
                    let _ = net.nodes[i].create_player(now, "p");
                    net.run();
                }
                Op::Send(i, guaranteed) if joined(&net, i) => {
                    let ours = net.nodes[i].players().values().find(|p| p.local && !p.is_system()).map(|p| p.id);
                    let theirs = net.nodes[i].players().values().find(|p| !p.local && !p.is_system()).map(|p| p.id);
                    if let (Some(from), Some(to)) = (ours, theirs) {
                        net.nodes[i].send(now, from, to, b"data", guaranteed).unwrap();
                        net.run();
                    }
                }
                Op::Leave(i) if joined(&net, i) => {
                    net.nodes[i].leave().unwrap();
                    net.run();
                }
                _ => {}
            }
        }
        let hosts = hosts(&net);
        prop_assert!(hosts.len() <= 1, "hosts {:?}", hosts);
        let Some(&h) = hosts.first() else { return Ok(()) };
        let host: Vec<u32> = net.nodes[h].players().keys().copied().collect();
        for i in 0..4 {
            if joined(&net, i) {
                let mine: Vec<u32> = net.nodes[i].players().keys().copied().collect();
                prop_assert_eq!(&mine, &host, "node {}", i);
            }
        }
        for i in 0..4 {
            for e in net.take(i) {
                prop_assert!(!matches!(e, Dp4Event::JoinFailed(_) | Dp4Event::PlayerCreateFailed(_)), "{:?}", e);
            }
            prop_assert_eq!(net.nodes[i].stats().dropped_total(), 0);
        }
    }
}
