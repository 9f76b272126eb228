//! A DirectPlay 4 relay fed arbitrary connections, datagrams and joins, members behind one
//! NAT among them (docs/relay.md, "DirectPlay 4"): never a panic, and every datagram it
//! forwards goes to an address a member's own datagrams came from.
#![no_main]

use std::net::SocketAddr;
use std::time::Instant;

use dplay_relay::dp4::{Dp4Endpoint, Dp4Forward, Dp4Relay, Dp4RelayConfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let now = Instant::now();
    let endpoint = |i: u16| Dp4Endpoint {
        stream: SocketAddr::from(([198, 51, 100, 1], 2401 + i)),
        datagram: SocketAddr::from(([198, 51, 100, 1], 2451 + i)),
    };
    let mut relay = Dp4Relay::new(Dp4RelayConfig::new((0..3).map(endpoint).collect()));
    for k in 0..2u8 {
        let at = |port| SocketAddr::from(([203, 0, 113, k + 1], port));
        relay.admit(u32::from(k) + 1, at(2300), at(2350));
    }
    let mut sources = Vec::new();
    let mut out = Vec::new();
    // Each chunk: a selector byte, a length byte, then that many bytes.
    let mut rest = data;
    while let [sel, len, tail @ ..] = rest {
        let n = usize::from(*len).min(tail.len());
        let (bytes, next) = tail.split_at(n);
        rest = next;
        let from = SocketAddr::from(([203, 0, 113, sel % 3 + 1], 40000 + u16::from(sel >> 4)));
        let conn = u64::from(sel >> 5);
        match sel % 4 {
            0 => relay.accepted(conn, (sel & 8 != 0).then_some(usize::from(sel >> 6))),
            1 => {
                let _ = relay.handle_stream(now, conn, from, bytes, &mut out);
            }
            2 => {
                sources.push(from);
                relay.handle_datagram(now, usize::from(sel >> 6), from, bytes);
            }
            // A join: the session admits an instance at the address the input names (one the
            // relay gave a joiner behind one NAT with others, or any).
            _ if sel & 0x40 != 0 => {
                let port = match bytes {
                    [a, b, ..] => u16::from_be_bytes([*a, *b]),
                    _ => 2300,
                };
                let at = SocketAddr::new(from.ip(), port);
                relay.admit(u32::from(sel >> 4 & 3) + 1, at, at);
            }
            _ => {
                relay.stream_closed(conn);
            }
        }
    }
    let mut buf = Vec::new();
    while let Some(f) = relay.poll_forward(&mut buf) {
        if let Dp4Forward::Datagram { to, .. } = f {
            assert!(sources.contains(&to), "forwarded to {to}, which sent nothing");
        }
        buf.clear();
    }
});
