//! A DirectPlay 8 host with `n` clients joined, in memory: no sockets, no clock but the
//! `now` it is given. What the dashboard's snapshot micro-benchmark (`benches/snapshot.rs`)
//! observes: the host's protocol, with a name table and a transport connection (round trip,
//! byte counts) per client, as the protocol thread holds them in `dashboard`'s 1,000-client
//! run.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Protocol};
use dplay_session::Session;

use crate::dashboard::config;

/// The host's address.
const HOST: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)), 2302);
/// Simulated rounds allowed for every client to join.
const ROUNDS: usize = 100_000;

/// Client `i`'s address: 10.1.x.y, one per client.
fn client_addr(i: usize) -> SocketAddr {
    let [_, _, x, y] = u32::try_from(i).unwrap_or(u32::MAX).wrapping_add(1).to_be_bytes();
    SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::new(10, 1, x, y)), 2302)
}

/// Hosts a session on `make(address)` and joins `n` client sessions to it, exchanging their
/// datagrams in memory with 1 ms of simulated time per round; returns the host and the
/// simulated time reached.
pub fn joined<P: Protocol<Command = Dp8Command>>(
    n: usize,
    epoch: Instant,
    make: impl FnOnce(SocketAddr, dplay_session::SessionConfig) -> P,
) -> io::Result<(P, Instant)> {
    let mut now = epoch;
    let mut host = make(HOST, config(HOST, "host", 1, n));
    host.handle_command(now, Dp8Command::Host);
    let mut clients: Vec<Session> = (0..n)
        .map(|i| Session::new(config(client_addr(i), &format!("client{i}"), 1000 + i as u64, n), now))
        .collect();
    let by_addr: HashMap<SocketAddr, usize> = (0..n).map(|i| (client_addr(i), i)).collect();
    for c in &mut clients {
        c.join(now, HOST, None).map_err(|e| io::Error::other(e.to_string()))?;
    }
    let mut buf = Vec::new();
    for _ in 0..ROUNDS {
        loop {
            let mut moved = false;
            for (i, c) in clients.iter_mut().enumerate() {
                while let Some(t) = c.poll_transmit() {
                    host.handle_datagram(now, client_addr(i), &t.contents);
                    moved = true;
                }
                while c.poll_event().is_some() {}
            }
            buf.clear();
            while let Some(to) = host.poll_transmit(now, &mut buf) {
                if let Some(c) = by_addr.get(&to).and_then(|&i| clients.get_mut(i)) {
                    c.handle_datagram(now, HOST, &buf);
                }
                buf.clear();
                moved = true;
            }
            while host.poll_event().is_some() {}
            if !moved {
                break;
            }
        }
        if clients.iter().all(Session::is_joined) {
            return Ok((host, now));
        }
        now += Duration::from_millis(1);
        if host.poll_timeout().is_some_and(|t| t <= now) {
            host.handle_timeout(now);
        }
        for c in &mut clients {
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }
    let up = clients.iter().filter(|c| c.is_joined()).count();
    Err(io::Error::other(format!("{up} of {n} clients joined")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use dplay_runtime::Dp8Protocol;

    #[test]
    fn fifty_clients_join_in_memory() {
        let epoch = Instant::now();
        let (host, _) = joined(50, epoch, |_, c| Dp8Protocol::new(c, epoch)).unwrap();
        assert_eq!(host.session().name_table().players().count(), 51);
        assert_eq!(client_addr(0), "10.1.0.1:2302".parse().unwrap());
        assert_eq!(client_addr(255), "10.1.1.0:2302".parse().unwrap());
    }

    /// The dashboard's cheap publish (numbers read again, players shared) lists what a whole
    /// new snapshot would, join times apart.
    #[test]
    fn a_refreshed_snapshot_lists_what_a_whole_one_would() {
        let epoch = Instant::now();
        let (loop_side, server_side) = dplay_web::link();
        let (mut host, now) =
            joined(20, epoch, |_, c| dplay_web::Observed::new(Dp8Protocol::new(c, epoch), loop_side, epoch))
                .unwrap();
        host.handle_timeout(now); // the whole snapshot after the joins
        server_side.admin(dplay_web::AdminCommand::MaxPlayers(0));
        host.handle_timeout(now); // a refreshed one
        let published = server_side.snapshot();
        let whole = dplay_web::dp8_snapshot(host.inner().session());
        assert_eq!(published.players.len(), 21);
        let rows = |players: &dplay_web::Players| {
            players
                .iter()
                .map(|mut p| {
                    p.joined_at_s = 0;
                    p
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(rows(&published.players), rows(&whole.players));
        let counted = published.players.iter().filter(|p| p.bytes_received.is_some_and(|b| b > 0));
        assert_eq!(counted.count(), 20, "every client's connection has its numbers");
    }
}
