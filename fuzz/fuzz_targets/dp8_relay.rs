//! A DirectPlay 8 relay fed arbitrary datagrams, joins and leaves (docs/relay.md): never a
//! panic, and every datagram it forwards goes to an address a member's own datagrams came from
//! (an endpoint never sends first, and only to members).
#![no_main]

use std::net::SocketAddr;
use std::time::Instant;

use dplay_relay::{Relay, RelayConfig};
use dplay_wire::dp8::dpnid::Dpnid;
use libfuzzer_sys::fuzz_target;
use uuid::Uuid;

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let endpoints = (0..4).map(|i| SocketAddr::from(([198, 51, 100, 1], 6074 + i))).collect();
    let mut relay = Relay::new(RelayConfig::new(endpoints));
    let (app, instance) = (Uuid::from_u128(1), Uuid::from_u128(2));
    // Members 1 to 3: two behind one NAT (203.0.113.1), one behind another.
    let member_at = |k: u8| SocketAddr::from(([203, 0, 113, 1 + k / 2], 2302 + u16::from(k)));
    for k in 1..=3u8 {
        relay.admit(Dpnid(u32::from(k)), member_at(k), app, instance);
    }
    let mut sources = Vec::new();
    // Each chunk: a selector byte, a length byte, then that many bytes.
    let mut rest = data;
    while let [sel, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (bytes, next) = tail.split_at(n);
        rest = next;
        let from = SocketAddr::from(([203, 0, 113, sel % 3 + 1], 40000 + u16::from(sel >> 5)));
        match sel & 0x18 {
            0x18 if sel & 0x04 != 0 => relay.remove(Dpnid(u32::from(sel % 4))),
            0x18 => {
                let k = sel % 4;
                relay.admit(Dpnid(u32::from(k)), member_at(k), app, instance);
            }
            _ => {
                sources.push(from);
                relay.handle_datagram(now, usize::from(sel >> 6), from, bytes);
            }
        }
    }
    let mut buf = Vec::new();
    while let Some(f) = relay.poll_forward(&mut buf) {
        assert!(sources.contains(&f.to), "forwarded to {}, which sent nothing", f.to);
        buf.clear();
    }
});
