//! The NAT resolver's server and client (MC-DPLNAT 3.2, 3.3) fed arbitrary datagrams (split at
//! 0xFF bytes): never a panic, every response goes to the source of the datagram it answers,
//! and the client learns nothing from bytes that do not echo its query.
#![no_main]

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

use dplay_session::nat_resolver::{ResolverClient, ResolverLimits, ResolverServer};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let resolver = SocketAddr::from((Ipv4Addr::new(198, 51, 100, 1), 2506));
    let mut server = ResolverServer::new(None, ResolverLimits::default(), now);
    let mut client = ResolverClient::new(resolver, Vec::new(), 1, 2, now);
    let mut buf = Vec::new();
    for (i, datagram) in data.split(|b| *b == 0xFF).enumerate() {
        let from = SocketAddr::from((Ipv4Addr::new(203, 0, 113, (i % 7) as u8), 2302));
        server.handle_datagram(now, from, datagram);
        while let Some(to) = server.poll_transmit(&mut buf) {
            assert_eq!(to, from);
        }
        client.handle_datagram(resolver, datagram);
    }
    // No query was sent (the timer never ran): no response can be valid.
    assert_eq!(client.poll_outcome(), None);
});
