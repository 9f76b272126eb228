//! Two dplay-dframe endpoints wired back to back in memory, on a virtual clock: the transport's
//! CPU cost with no sockets and no waiting.

use std::net::SocketAddr;
use std::time::Instant;

use dplay_dframe::{Config, Endpoint, Event, MessageKind};

/// The address of side A.
pub const A: SocketAddr = addr(1, 2300);
/// The address of side B.
pub const B: SocketAddr = addr(2, 2300);

const fn addr(host: u8, port: u16) -> SocketAddr {
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, host)), port)
}

/// Rounds of delivery and timers after which an exchange that has not ended is given up.
const MAX_ROUNDS: usize = 10_000_000;

/// Two connected endpoints, A (which connected) and B.
pub struct Pair {
    /// Side A, at [`A`].
    pub a: Endpoint,
    /// Side B, at [`B`].
    pub b: Endpoint,
    /// The virtual clock.
    pub now: Instant,
    /// The datagram being delivered (reused: no allocation per datagram).
    buf: Vec<u8>,
}

impl Pair {
    /// A connects to B and the handshake completes.
    pub fn connected(config: &Config, now: Instant) -> Self {
        let mut pair = Self {
            a: Endpoint::new(config.clone(), now),
            b: Endpoint::new(config.clone(), now),
            now,
            buf: Vec::with_capacity(2048),
        };
        let _ = pair.a.connect(now, B);
        let (mut a_up, mut b_up) = (false, false);
        for _ in 0..MAX_ROUNDS {
            if a_up && b_up {
                break;
            }
            if !pair.pump() {
                pair.advance();
            }
            a_up |= std::iter::from_fn(|| pair.a.poll_event()).any(|e| matches!(e, Event::Connected { .. }));
            b_up |= std::iter::from_fn(|| pair.b.poll_event()).any(|e| matches!(e, Event::Connected { .. }));
        }
        pair
    }

    /// Delivers every queued datagram both ways; false when there was none.
    pub fn pump(&mut self) -> bool {
        let mut moved = false;
        while self.a.poll_transmit_into(&mut self.buf).is_some() {
            self.b.handle_datagram(self.now, A, &self.buf);
            self.buf.clear();
            moved = true;
        }
        while self.b.poll_transmit_into(&mut self.buf).is_some() {
            self.a.handle_datagram(self.now, B, &self.buf);
            self.buf.clear();
            moved = true;
        }
        moved
    }

    /// Moves the clock to the earliest deadline and runs the timers that are due.
    pub fn advance(&mut self) {
        let next = [self.a.poll_timeout(), self.b.poll_timeout()].into_iter().flatten().min();
        if let Some(at) = next {
            self.now = self.now.max(at);
        }
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
    }

    /// Sends `data` from A to B as one reliable sequential message and runs the exchange until
    /// B delivers it; returns the delivered length.
    pub fn transfer(&mut self, data: &[u8]) -> usize {
        if self.a.send(self.now, B, data, MessageKind::RELIABLE_SEQUENTIAL).is_err() {
            return 0;
        }
        for _ in 0..MAX_ROUNDS {
            if !self.pump() {
                self.advance();
            }
            while let Some(event) = self.b.poll_event() {
                if let Event::Message { data, .. } = event {
                    return data.len();
                }
            }
            while self.a.poll_event().is_some() {}
        }
        0
    }
}

/// An endpoint holding `n` idle accepted connections, each made by a client endpoint that is
/// dropped once connected (so only the server's state remains).
pub fn server_with_connections(config: &Config, n: usize, now: Instant) -> Endpoint {
    let mut server = Endpoint::new(config.clone(), now);
    for i in 0..n {
        let [_, _, hi, lo] = u32::try_from(i).unwrap_or(u32::MAX).to_be_bytes();
        let port = 1024 + u16::from(hi) * 256 + u16::from(lo);
        let client_addr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 1, hi, lo)), port);
        let mut client = Endpoint::new(config.clone(), now);
        let _ = client.connect(now, A);
        for _ in 0..8 {
            while let Some(t) = client.poll_transmit() {
                server.handle_datagram(now, client_addr, &t.contents);
            }
            while let Some(t) = server.poll_transmit() {
                client.handle_datagram(now, A, &t.contents);
            }
        }
        while server.poll_event().is_some() {}
    }
    server
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_message_crosses_the_pair() {
        let mut pair = Pair::connected(&Config::default(), Instant::now());
        assert_eq!(pair.transfer(&vec![7u8; 100_000]), 100_000);
        assert_eq!(pair.transfer(b"small"), 5);
    }

    #[test]
    fn the_server_keeps_every_connection() {
        let server = server_with_connections(&Config::default(), 300, Instant::now());
        assert_eq!(server.connection_count(), 300);
    }
}
