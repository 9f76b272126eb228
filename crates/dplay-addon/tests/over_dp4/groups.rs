//! FS98's two groups over DirectPlay 4: the host makes FS61_REQUEST_PARAMS and
//! FS61_REFUSE_PARAMS, every add-on client puts its player in FS61_REFUSE_PARAMS, and PARAMS
//! sent to FS61_REQUEST_PARAMS never reach it (FS-MULTIPLAYER.md 1.5 step 4; MC-DPL4CS
//! 3.1.4.12, 3.1.4.16, 3.1.5.7, 3.1.5.11, 3.1.5.20).

use std::time::Duration;

use dplay_addon::{FS61_REFUSE_PARAMS, FS61_REQUEST_PARAMS, HostPolicy, PacketId, Role};
use dplay_session::dp4::DropReason;
use dplay_sim::run_seeds;

use crate::net::{DGRAM_PORT, Links, ip};
use crate::support::{Kind, Net};

const HOST: usize = 0;
const CLIENTS: [usize; 2] = [1, 2];

fn joined(seed: u64) -> Net {
    let kinds = [
        Kind::Host(Role::Observer, HostPolicy::default()),
        Kind::Client(Role::Player),
        Kind::Client(Role::Observer),
    ];
    let mut net = Net::new(seed, Links::lossy(0.05), &kinds);
    net.start();
    assert!(net.run_until_addon_joined(&CLIENTS, Duration::from_secs(30)), "seed {seed}");
    net.run_for(Duration::from_secs(1));
    net
}

/// The group named `name` at node `at`, and its members.
#[track_caller]
fn group(net: &Net, at: usize, name: &str) -> (u32, Vec<u32>) {
    let session = net.node(at).bridge.session();
    let id = session.group_named(name).unwrap_or_else(|| panic!("node {at} has no {name}"));
    (id, session.group_members(id).expect("known").collect())
}

/// FS-MULTIPLAYER.md 1.5 step 4: the session has both groups everywhere (CREATEGROUP to the
/// instances there, SUPERENUMPLAYERSREPLY to later joiners), and each client's player is in
/// FS61_REFUSE_PARAMS at every node (ADDPLAYERTOGROUP), none in FS61_REQUEST_PARAMS.
#[test]
fn clients_join_fs61_refuse_params() {
    run_seeds(5, |seed| {
        let net = joined(seed);
        let mut clients: Vec<u32> = CLIENTS.iter().map(|&i| net.node(i).id().0).collect();
        clients.sort_unstable();
        let (request, _) = group(&net, HOST, FS61_REQUEST_PARAMS);
        let (refuse, _) = group(&net, HOST, FS61_REFUSE_PARAMS);
        for at in [HOST, 1, 2] {
            assert_eq!(group(&net, at, FS61_REQUEST_PARAMS), (request, vec![]), "seed {seed}: node {at}");
            assert_eq!(
                group(&net, at, FS61_REFUSE_PARAMS),
                (refuse, clients.clone()),
                "seed {seed}: node {at}"
            );
            assert_eq!(net.node(at).bridge.session().stats().dropped_total(), 0, "seed {seed}: node {at}");
        }
    });
}

/// FS-MULTIPLAYER.md 1.5 step 4 and docs/decisions.md "DirectPlay 4 groups": PARAMS (0x1000)
/// that FS98 sends to FS61_REQUEST_PARAMS is not for an add-on in FS61_REFUSE_PARAMS: its
/// session drops it and the add-on never sees it; the same bytes to FS61_REFUSE_PARAMS are
/// delivered (and the add-on ignores PARAMS, seed 004).
#[test]
fn params_to_request_params_do_not_reach_the_addon() {
    let mut net = joined(11);
    let from = net.node(HOST).id().0;
    let (request, _) = group(&net, HOST, FS61_REQUEST_PARAMS);
    let (refuse, _) = group(&net, HOST, FS61_REFUSE_PARAMS);
    let datagram = |to: u32| {
        let mut b = [from.to_le_bytes(), to.to_le_bytes(), PacketId::PARAMS.0.to_le_bytes()].concat();
        b.extend_from_slice(&[0; 16]);
        b
    };
    let src = std::net::SocketAddr::new(ip(HOST).into(), DGRAM_PORT);
    let counts = |n: &Net| {
        let node = n.node(1);
        (node.bridge.session().stats().dropped(DropReason::UnknownPlayer), node.bridge.addon_stats().received)
    };
    let (drops, received) = counts(&net);
    net.with(1, |node, now| node.bridge.handle_udp(now, src, &datagram(request)));
    assert_eq!(counts(&net), (drops + 1, received), "dropped by the session");
    net.with(1, |node, now| node.bridge.handle_udp(now, src, &datagram(refuse)));
    assert_eq!(counts(&net), (drops + 1, received + 1), "delivered to the add-on");
}
