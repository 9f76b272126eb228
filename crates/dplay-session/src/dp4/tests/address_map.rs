//! The host's address map (docs/relay.md, "DirectPlay 4"): the other instances learn a joiner
//! at the addresses the map gives it, in ADDFORWARD and SUPERENUMPLAYERSREPLY (MC-DPL4CS 2.2.8,
//! 2.2.53); the host keeps the joiner's own; the map hears when the instance leaves.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use super::net::{Net, config, session, stream};
use crate::dp4::{Dp4AddressMap, Dp4AddressMapHandle, Dp4Session};

/// Gives system player `id` the listener 192.0.2.1:(2400 + n) and game socket
/// 192.0.2.1:(2450 + n), the n-th admitted; records who left.
#[derive(Debug, Default)]
struct Relay {
    admitted: Vec<(u32, SocketAddr)>,
    removed: Vec<u32>,
}

fn relayed(n: usize) -> (SocketAddr, SocketAddr) {
    let port = u16::try_from(n).unwrap();
    (SocketAddr::from(([192, 0, 2, 1], 2400 + port)), SocketAddr::from(([192, 0, 2, 1], 2450 + port)))
}

impl Dp4AddressMap for Relay {
    fn admitted(
        &mut self,
        player: u32,
        stream: SocketAddr,
        _: SocketAddr,
    ) -> Option<(SocketAddr, SocketAddr)> {
        self.admitted.push((player, stream));
        Some(relayed(self.admitted.len()))
    }

    fn removed(&mut self, player: u32) {
        self.removed.push(player);
    }
}

#[test]
fn joiners_learn_each_other_at_the_mapped_addresses() {
    let relay = Arc::new(Mutex::new(Relay::default()));
    let mut net = Net::new(3);
    let mut host = config(0);
    let map: Arc<Mutex<dyn Dp4AddressMap>> = relay.clone();
    host.address_map = Some(Dp4AddressMapHandle::new(map));
    net.nodes[0] = Dp4Session::new(host).unwrap();
    net.host(session("S"));
    net.join(1, None);
    net.join(2, None);
    let (one, two) = (net.nodes[1].system_player().unwrap(), net.nodes[2].system_player().unwrap());
    assert_eq!(relay.lock().unwrap().admitted, [(one, stream(1)), (two, stream(2))]);
    // SUPERENUMPLAYERSREPLY to the second joiner, ADDFORWARD to the first.
    assert_eq!(net.nodes[2].players()[&one].addrs, Some(relayed(1)));
    assert_eq!(net.nodes[1].players()[&two].addrs, Some(relayed(2)));
    // The host answers them at their own addresses.
    assert_eq!(net.nodes[0].players()[&one].addrs.unwrap().0, stream(1));
    net.nodes[1].leave().unwrap();
    net.run();
    assert_eq!(relay.lock().unwrap().removed, [one]);
}
