//! A loopback proxy thread that loses and delays datagrams, placed between a client and a
//! server so that every library crosses the same impaired link.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::LOOPBACK;

const FRONT: Token = Token(0);
const BACK: Token = Token(1);

/// What the link does to each datagram, in each direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Impairment {
    /// Probability that a datagram is lost.
    pub loss: f64,
    /// Delay added to every datagram (half the round trip).
    pub one_way_delay: Duration,
    /// Seed of the loss draws, so every library meets the same pattern of chance.
    pub seed: u64,
}

impl Impairment {
    /// 5% loss each way and a 20 ms round trip.
    pub const LOSSY: Self = Self { loss: 0.05, one_way_delay: Duration::from_millis(10), seed: 1 };
}

/// A running proxy: clients send to [`Proxy::addr`], it forwards to the server and back.
pub struct Proxy {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<io::Result<()>>>,
}

impl Proxy {
    /// Starts a proxy in front of `server`.
    pub fn spawn(server: SocketAddr, impairment: Impairment) -> io::Result<Self> {
        let front = UdpSocket::bind(LOOPBACK)?;
        let back = UdpSocket::bind(LOOPBACK)?;
        let addr = front.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let mut link = Link {
            front,
            back,
            server,
            client: None,
            impairment,
            rng: ChaCha8Rng::seed_from_u64(impairment.seed),
            queue: VecDeque::new(),
            stop: Arc::clone(&stop),
        };
        let thread = std::thread::Builder::new().name("bench-proxy".into()).spawn(move || link.run())?;
        Ok(Self { addr, stop, thread: Some(thread) })
    }

    /// Where clients send.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Which way a queued datagram goes.
#[derive(Clone, Copy)]
enum Way {
    ToServer,
    ToClient,
}

struct Link {
    front: UdpSocket,
    back: UdpSocket,
    server: SocketAddr,
    client: Option<SocketAddr>,
    impairment: Impairment,
    rng: ChaCha8Rng,
    /// Datagrams in flight, in release order (the delay is constant, so arrival order).
    queue: VecDeque<(Instant, Way, Vec<u8>)>,
    stop: Arc<AtomicBool>,
}

impl Link {
    fn run(&mut self) -> io::Result<()> {
        let mut poll = Poll::new()?;
        poll.registry().register(&mut self.front, FRONT, Interest::READABLE)?;
        poll.registry().register(&mut self.back, BACK, Interest::READABLE)?;
        let mut events = Events::with_capacity(16);
        let mut buf = vec![0u8; 65_536];
        while !self.stop.load(Ordering::Acquire) {
            // Wake at least every 50 ms to notice `stop`.
            let next = self.queue.front().map(|(at, _, _)| at.saturating_duration_since(Instant::now()));
            let timeout = next.unwrap_or(Duration::from_millis(50)).min(Duration::from_millis(50));
            poll.poll(&mut events, Some(timeout))?;
            self.read(Way::ToServer, &mut buf)?;
            self.read(Way::ToClient, &mut buf)?;
            self.release()?;
        }
        Ok(())
    }

    fn read(&mut self, way: Way, buf: &mut [u8]) -> io::Result<()> {
        loop {
            let socket = match way {
                Way::ToServer => &self.front,
                Way::ToClient => &self.back,
            };
            match socket.recv_from(buf) {
                Ok((len, from)) => {
                    if let Way::ToServer = way {
                        self.client = Some(from);
                    }
                    if self.rng.gen_bool(self.impairment.loss) {
                        continue;
                    }
                    let data = buf.get(..len).unwrap_or_default().to_vec();
                    self.queue.push_back((Instant::now() + self.impairment.one_way_delay, way, data));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                // Port unreachable from an earlier send and the like: the datagram is lost.
                Err(_) => {}
            }
        }
    }

    fn release(&mut self) -> io::Result<()> {
        let now = Instant::now();
        while let Some((at, way, data)) = self.queue.front() {
            if *at > now {
                break;
            }
            let sent = match way {
                Way::ToServer => self.back.send_to(data, self.server),
                Way::ToClient => match self.client {
                    Some(client) => self.front.send_to(data, client),
                    None => Ok(0),
                },
            };
            match sent {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                // A datagram the kernel refuses is lost, as on a real link.
                _ => {
                    self.queue.pop_front();
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_proxy_forwards_both_ways_with_its_delay() {
        let server = std::net::UdpSocket::bind(LOOPBACK).unwrap();
        let clean = Impairment { loss: 0.0, one_way_delay: Duration::from_millis(5), seed: 0 };
        let proxy = Proxy::spawn(server.local_addr().unwrap(), clean).unwrap();
        let client = std::net::UdpSocket::bind(LOOPBACK).unwrap();
        let t0 = Instant::now();
        client.send_to(b"ping", proxy.addr()).unwrap();
        let mut buf = [0u8; 16];
        let (n, from) = server.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"ping");
        server.send_to(b"pong", from).unwrap();
        let (n, _) = client.recv_from(&mut buf).unwrap();
        assert_eq!(&buf[..n], b"pong");
        assert!(t0.elapsed() >= Duration::from_millis(10));
    }
}
