//! A DirectPlay 4 host's TCP input on arbitrary bytes (issue 14): chunks on a few connections
//! from a few addresses, each split at arbitrary points, with time passing. Nothing panics,
//! what a connection of no known instance holds stays under `max_unjoined_message` while no
//! instance has joined, and every TCP message goes to an address input came from
//! (MC-DPL4CS 2.1, 2.2.6).
#![no_main]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_session::dp4::{Dp4Config, Dp4Session, HostConfig, Via};
use libfuzzer_sys::fuzz_target;

const UNJOINED: usize = 512;

fuzz_target!(|data: &[u8]| {
    let mut config = Dp4Config::default();
    config.limits.max_unjoined_message = UNJOINED;
    let Ok(mut host) = Dp4Session::new(config) else { return };
    #[allow(clippy::disallowed_methods)] // one base instant; time then advances by the input
    let start = Instant::now();
    if host.host(start, HostConfig::new("fuzz", uuid::Uuid::nil())).is_err() {
        return;
    }
    let mut rejected = [false; 4];
    let mut now = start;
    let mut rest = data;
    while let Some((&op, tail)) = rest.split_first() {
        let len = usize::from(op >> 2).min(tail.len());
        let (chunk, tail) = tail.split_at(len);
        rest = tail;
        let conn = usize::from(op & 3);
        let from = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2 + (op & 1))), 40_000);
        now += Duration::from_millis(u64::from(op));
        // The runtime closes a rejected connection: nothing more arrives on it.
        let Some(closed) = rejected.get_mut(conn).filter(|r| !**r) else { continue };
        if chunk.is_empty() {
            // Its peer closed it (a killed process, issue 27 item 10): its instance, if any, is
            // PINGed; the next chunk on this number is a new connection.
            host.handle_tcp_lost(now, conn as u64, None);
        } else {
            match host.handle_tcp(now, conn as u64, from, chunk) {
                Ok(status) => {
                    let joined = host.players().len() > 1;
                    assert!(status.known || joined || status.buffered < UNJOINED, "{status:?}");
                }
                Err(_) => {
                    *closed = true;
                    host.handle_tcp_closed(conn as u64);
                }
            }
        }
        host.handle_timeout(now);
        while let Some(t) = host.poll_transmit() {
            if t.via == Via::Tcp {
                assert!(matches!(t.to.ip(), IpAddr::V4(ip) if ip.octets()[..3] == [10, 0, 0]), "to {}", t.to);
            }
        }
        while host.poll_event().is_some() {}
    }
});
