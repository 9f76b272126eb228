//! Random sequences of joins, player creations, messages and departures: every instance ends
//! with the host's Player List (MC-DPL4CS 3.1.1, 3.2.5.5, 3.1.5.12, 3.1.5.14).

use proptest::prelude::*;

use super::net::{Net, session};
use crate::dp4::{Dp4Event, Role};

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
        (1usize..4).prop_map(Op::Leave),
    ]
}

fn joined(net: &Net, i: usize) -> bool {
    matches!(net.nodes[i].role(), Role::Member | Role::Host)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn name_tables_agree(ops in proptest::collection::vec(op(), 1..24)) {
        let mut net = Net::new(4);
        net.host(session("S"));
        for op in ops {
            let now = net.now;
            match op {
                Op::Join(i) if !joined(&net, i) => net.join(i, None),
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
        let host: Vec<u32> = net.nodes[0].players().keys().copied().collect();
        for i in 1..4 {
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
