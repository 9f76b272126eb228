//! A fast-signed DirectPlay 8 connection (dplay-dframe `Endpoint`, MC-DPL8R 3.1.4.4,
//! 3.1.5.1.3, 3.1.5.2.7) under arbitrary input: raw datagrams from the peer's address and from
//! a stranger, genuine frames of the peer with bytes changed, sends, losses and time passing.
//! Nothing panics; the listener sends only datagrams within its limit, to the peer or (a
//! stateless CONNECTED_SIGNED) to a stranger that wrote to it; and unless the input carries the
//! peer's secret, it delivers only what the peer sent, and the connection still carries a
//! message afterwards.
#![no_main]

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_dframe::{Config, Endpoint, Event, MessageKind, Signing};
use dplay_fuzz::Input;

const A: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1)), 2302);
const B: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2)), 2302);
const STRANGER: SocketAddr =
    SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 9)), 2302);

/// The connector `a`, the listener `b`, what is in flight, and what the checks need.
struct Pair {
    a: Endpoint,
    b: Endpoint,
    now: Instant,
    /// a -> b datagrams not delivered yet.
    to_b: Vec<Vec<u8>>,
    /// The last datagrams a sent, to mutate.
    seen: Vec<Vec<u8>>,
    /// What a sent b.
    sent: Vec<Vec<u8>>,
    delivered: Vec<Vec<u8>>,
    /// Datagrams from the stranger not answered yet.
    stranger_budget: usize,
}

impl Pair {
    /// Moves b's datagrams to a (checking them) and a's into `to_b`.
    fn pump(&mut self) {
        while let Some(t) = self.b.poll_transmit() {
            assert!(t.contents.len() <= self.b.config().max_datagram(), "a datagram over the limit");
            if t.destination == STRANGER && !self.b.is_connected(STRANGER) {
                // Only the stateless answer to a CONNECT, one per datagram it sent.
                assert_eq!(t.contents.get(..2).map(|h| h[1]), Some(0x03), "{:02x?}", t.contents);
                assert!(self.stranger_budget > 0, "more answers than datagrams");
                self.stranger_budget -= 1;
            } else if t.destination != STRANGER {
                assert_eq!(t.destination, A, "traffic aimed at a third party");
                self.a.handle_datagram(self.now, B, &t.contents);
            }
        }
        while let Some(t) = self.a.poll_transmit() {
            if self.seen.len() == 8 {
                self.seen.remove(0);
            }
            self.seen.push(t.contents.clone());
            self.to_b.push(t.contents);
        }
        while let Some(e) = self.b.poll_event() {
            if let Event::Message { data, .. } = e {
                self.delivered.push(data);
            }
        }
        while self.a.poll_event().is_some() {}
    }

    fn deliver(&mut self, keep: impl Fn(usize) -> bool) {
        for (i, d) in std::mem::take(&mut self.to_b).into_iter().enumerate() {
            if keep(i) {
                self.b.handle_datagram(self.now, A, &d);
            }
        }
        self.pump();
    }

    fn advance(&mut self, by: Duration) {
        self.now += by;
        self.a.handle_timeout(self.now);
        self.b.handle_timeout(self.now);
        self.pump();
    }
}

/// `a` and `b` fast-signed and connected; the 8 bytes `b` checks on every frame from `a`.
fn connected() -> (Pair, [u8; 8]) {
    #[allow(clippy::disallowed_methods)] // the origin of virtual time
    let now = Instant::now();
    let config = |seed| {
        let mut config = Config::default().with_seed(seed);
        config.signing = Signing::Fast;
        config.max_message_size = 4096;
        config
    };
    let mut p = Pair {
        a: Endpoint::new(config(1), now),
        b: Endpoint::new(config(2), now),
        now,
        to_b: Vec::new(),
        seen: Vec::new(),
        sent: Vec::new(),
        delivered: Vec::new(),
        stranger_budget: 0,
    };
    p.a.connect(now, B).expect("a fresh endpoint connects");
    p.pump();
    for _ in 0..20 {
        p.deliver(|_| true);
        p.advance(Duration::from_millis(10));
    }
    assert!(p.a.is_connected(B) && p.b.is_connected(A), "the signed handshake completes");
    // A signed DFRAME: 4 header bytes, then ullSignature (MC-DPL8R 2.2.2).
    let secret = p
        .seen
        .iter()
        .find(|d| d.first().is_some_and(|b| b & 1 == 1) && d.len() >= 12)
        .and_then(|d| d.get(4..12))
        .and_then(|s| s.try_into().ok())
        .expect("a signed DFRAME from a");
    (p, secret)
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (mut p, secret) = connected();
    let mut input = Input(data);
    let mut knows_secret = false;
    let mut tag = 0u32;
    while !input.0.is_empty() {
        match input.u8() % 7 {
            0 | 1 => {
                let from_peer = input.u8() & 1 == 0;
                let len = usize::from(input.u8() % 64);
                let bytes = input.bytes(len).to_vec();
                knows_secret |= bytes.windows(8).any(|w| w == secret);
                if from_peer {
                    p.b.handle_datagram(p.now, A, &bytes);
                } else {
                    p.stranger_budget += 1;
                    p.b.handle_datagram(p.now, STRANGER, &bytes);
                }
                p.pump();
            }
            2 => {
                // A genuine frame of the peer with one byte changed (the signature included).
                let pick = usize::from(input.u8());
                let Some(mut d) = p.seen.get(pick % p.seen.len().max(1)).cloned() else { continue };
                let at = usize::from(input.u8()) % d.len().max(1);
                if let Some(b) = d.get_mut(at) {
                    *b ^= input.u8() | 1;
                }
                // Unchanged signature bytes make it the peer's frame: its payload may differ.
                knows_secret |= d.windows(8).any(|w| w == secret);
                p.b.handle_datagram(p.now, A, &d);
                p.pump();
            }
            3 => {
                tag += 1;
                let len = usize::from(input.u8()) * 8 % 3000 + 4;
                let mut msg = vec![input.u8(); len];
                msg[..4].copy_from_slice(&tag.to_le_bytes());
                let kind = if input.u8() & 1 == 0 {
                    MessageKind::RELIABLE_SEQUENTIAL
                } else {
                    MessageKind::RELIABLE
                };
                if p.a.send(p.now, B, &msg, kind).is_ok() {
                    p.sent.push(msg);
                }
                p.pump();
            }
            4 => {
                let lost = input.u8();
                p.deliver(|i| lost >> (i % 8) & 1 == 0);
            }
            _ => p.advance(Duration::from_millis(u64::from(input.u8()) * 10)),
        }
        assert!(p.b.connection_count() <= 2, "state held for strangers");
    }
    if knows_secret {
        return;
    }
    for d in &p.delivered {
        assert!(p.sent.contains(d), "delivered a message the peer never sent: {d:02x?}");
    }
    if p.a.is_connected(B) && p.b.is_connected(A) {
        // Forged input never stalls the genuine connection: a last message gets through.
        let last = b"the last one".to_vec();
        if p.a.send(p.now, B, &last, MessageKind::RELIABLE).is_ok() {
            p.pump();
            for _ in 0..200 {
                p.deliver(|_| true);
                p.advance(Duration::from_millis(100));
                if p.delivered.contains(&last) {
                    return;
                }
            }
            panic!("the connection stopped carrying messages");
        }
    }
});
