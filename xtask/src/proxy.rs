//! A fault-injecting UDP proxy for the integration suite: one client on the front, one host on
//! the back, each datagram lost, duplicated or held back (so later ones overtake it) at random.

use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Percentages of datagrams lost, duplicated and held back.
#[derive(Clone, Copy)]
pub(crate) struct Faults {
    pub(crate) loss: u64,
    pub(crate) duplicate: u64,
    pub(crate) reorder: u64,
}

/// Counts of what the proxy did, for the report.
#[derive(Default)]
pub(crate) struct Counts {
    pub(crate) forwarded: AtomicU64,
    pub(crate) lost: AtomicU64,
    pub(crate) duplicated: AtomicU64,
    pub(crate) reordered: AtomicU64,
}

/// A running proxy; stopped and joined when dropped.
pub(crate) struct Proxy {
    front: SocketAddr,
    back: SocketAddr,
    stop: Arc<AtomicBool>,
    pub(crate) counts: Arc<Counts>,
    thread: Option<JoinHandle<()>>,
}

/// How long a held-back datagram waits.
const HOLD: Duration = Duration::from_millis(40);

impl Proxy {
    /// Listens on 127.0.0.1 (port 0) and forwards to `host`.
    pub(crate) fn start(host: SocketAddr, faults: Faults, seed: u64) -> anyhow::Result<Self> {
        let front = UdpSocket::bind("127.0.0.1:0")?;
        let back = UdpSocket::bind("127.0.0.1:0")?;
        for s in [&front, &back] {
            s.set_read_timeout(Some(Duration::from_millis(2)))?;
        }
        let addr = front.local_addr()?;
        let back_addr = back.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let counts = Arc::new(Counts::default());
        let mut state = State { front, back, host, client: None, faults, rng: seed | 1, held: Vec::new() };
        let (flag, c) = (Arc::clone(&stop), Arc::clone(&counts));
        let thread = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                state.turn(&c);
            }
        });
        Ok(Self { front: addr, back: back_addr, stop, counts, thread: Some(thread) })
    }

    /// Where clients send.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.front
    }

    /// Where the host's datagrams come from, and where it sends to reach the client.
    pub(crate) fn back_addr(&self) -> SocketAddr {
        self.back
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct State {
    front: UdpSocket,
    back: UdpSocket,
    host: SocketAddr,
    client: Option<SocketAddr>,
    faults: Faults,
    rng: u64,
    /// Held-back datagrams: when due, towards the host or not, bytes.
    held: Vec<(Instant, bool, Vec<u8>)>,
}

impl State {
    /// xorshift64: a percentage draw.
    fn percent(&mut self) -> u64 {
        self.rng ^= self.rng << 13;
        self.rng ^= self.rng >> 7;
        self.rng ^= self.rng << 17;
        self.rng % 100
    }

    #[allow(clippy::disallowed_methods)] // a real proxy on real time
    fn turn(&mut self, c: &Counts) {
        let mut buf = [0u8; 2048];
        if let Ok((n, from)) = self.front.recv_from(&mut buf) {
            self.client = Some(from);
            self.pass(c, true, buf.get(..n).unwrap_or_default());
        }
        if let Ok((n, _)) = self.back.recv_from(&mut buf) {
            self.pass(c, false, buf.get(..n).unwrap_or_default());
        }
        let now = Instant::now();
        let (due, keep): (Vec<_>, Vec<_>) =
            std::mem::take(&mut self.held).into_iter().partition(|h| h.0 <= now);
        self.held = keep;
        for (_, to_host, data) in due {
            self.send(to_host, &data);
        }
    }

    #[allow(clippy::disallowed_methods)]
    fn pass(&mut self, c: &Counts, to_host: bool, data: &[u8]) {
        if self.percent() < self.faults.loss {
            c.lost.fetch_add(1, Ordering::Relaxed);
            return;
        }
        if self.percent() < self.faults.reorder {
            c.reordered.fetch_add(1, Ordering::Relaxed);
            self.held.push((Instant::now() + HOLD, to_host, data.to_vec()));
            return;
        }
        self.send(to_host, data);
        if self.percent() < self.faults.duplicate {
            c.duplicated.fetch_add(1, Ordering::Relaxed);
            self.send(to_host, data);
        }
        c.forwarded.fetch_add(1, Ordering::Relaxed);
    }

    fn send(&self, to_host: bool, data: &[u8]) {
        let _ = if to_host {
            self.back.send_to(data, self.host)
        } else if let Some(client) = self.client {
            self.front.send_to(data, client)
        } else {
            Ok(0)
        };
    }
}
