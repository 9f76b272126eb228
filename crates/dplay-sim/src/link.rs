//! Link models and per-link counters.

use std::ops::AddAssign;
use std::time::Duration;

/// How one direction of a link treats datagrams. Probabilities are per datagram, in `0.0..=1.0`
/// (values outside are clamped). Build one from a preset and adjust it, either with the `with_*`
/// methods or with struct update syntax: `LinkConfig { loss: 0.1, ..LinkConfig::clean() }`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// One-way delay of every datagram.
    pub latency: Duration,
    /// Extra delay drawn uniformly from `0..=jitter` per datagram. Jitter alone never reorders:
    /// a datagram that is not picked for reordering never arrives before one sent earlier on the
    /// same link.
    pub jitter: Duration,
    /// Probability that a datagram is dropped.
    pub loss: f64,
    /// Probability that a datagram is delivered twice.
    pub duplicate: f64,
    /// The second copy of a duplicated datagram arrives up to this much after the first.
    pub duplicate_delay: Duration,
    /// Probability that a datagram is held back by an extra delay so that later ones overtake it.
    pub reorder: f64,
    /// Upper bound of the extra delay of a reordered datagram (drawn uniformly, at least 1 µs).
    pub reorder_delay: Duration,
    /// Probability that a datagram's bytes are damaged in flight: one random byte is XORed with a
    /// random non-zero mask, so the copy always differs from what was sent.
    pub corrupt: f64,
    /// Largest datagram (UDP payload, bytes) the link carries; larger ones are dropped.
    pub mtu: usize,
}

impl LinkConfig {
    /// The payload of one UDP datagram in one Ethernet frame: 1500 - 20 (IPv4) - 8 (UDP).
    pub const ETHERNET_MTU: usize = 1472;

    /// A perfect link: 10 ms latency, no jitter, nothing lost, duplicated, reordered or damaged,
    /// Ethernet MTU.
    pub fn clean() -> Self {
        Self {
            latency: Duration::from_millis(10),
            jitter: Duration::ZERO,
            loss: 0.0,
            duplicate: 0.0,
            duplicate_delay: Duration::from_millis(20),
            reorder: 0.0,
            reorder_delay: Duration::from_millis(50),
            corrupt: 0.0,
            mtu: Self::ETHERNET_MTU,
        }
    }

    /// A clean link that loses each datagram with probability `loss`.
    pub fn lossy(loss: f64) -> Self {
        Self { loss, ..Self::clean() }
    }

    /// An internet path: 50 ms ± 10 ms, 1% loss, 1% reordering, 0.1% duplication.
    pub fn wan() -> Self {
        Self {
            latency: Duration::from_millis(50),
            jitter: Duration::from_millis(10),
            loss: 0.01,
            duplicate: 0.001,
            reorder: 0.01,
            ..Self::clean()
        }
    }

    /// Everything at once, for robustness sweeps: 30 ms ± 20 ms, 10% loss, 5% duplication,
    /// 10% reordering, 1% corruption.
    pub fn hostile() -> Self {
        Self {
            latency: Duration::from_millis(30),
            jitter: Duration::from_millis(20),
            loss: 0.1,
            duplicate: 0.05,
            reorder: 0.1,
            corrupt: 0.01,
            ..Self::clean()
        }
    }

    /// This link with another latency.
    pub fn with_latency(self, latency: Duration) -> Self {
        Self { latency, ..self }
    }

    /// This link with another jitter.
    pub fn with_jitter(self, jitter: Duration) -> Self {
        Self { jitter, ..self }
    }

    /// This link with another loss probability.
    pub fn with_loss(self, loss: f64) -> Self {
        Self { loss, ..self }
    }

    /// This link with another duplication probability.
    pub fn with_duplicate(self, duplicate: f64) -> Self {
        Self { duplicate, ..self }
    }

    /// This link with another reordering probability.
    pub fn with_reorder(self, reorder: f64) -> Self {
        Self { reorder, ..self }
    }

    /// This link with another corruption probability.
    pub fn with_corrupt(self, corrupt: f64) -> Self {
        Self { corrupt, ..self }
    }

    /// This link with another MTU.
    pub fn with_mtu(self, mtu: usize) -> Self {
        Self { mtu, ..self }
    }
}

impl Default for LinkConfig {
    /// [`LinkConfig::clean`].
    fn default() -> Self {
        Self::clean()
    }
}

/// What one direction of a link did with the datagrams sent on it.
///
/// `sent` counts datagrams handed to the link; each ends up in exactly one of `delivered` or a
/// `dropped_*` counter, except that a duplicated datagram is delivered (or dropped by a later
/// partition) twice. `duplicated`, `reordered` and `corrupted` count the datagrams so treated.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    /// Datagrams handed to the link.
    pub sent: u64,
    /// Copies handed to the receiving node.
    pub delivered: u64,
    /// Dropped at random ([`LinkConfig::loss`]).
    pub dropped_loss: u64,
    /// Dropped because the nodes were partitioned when it was sent or when it arrived.
    pub dropped_partition: u64,
    /// Dropped because it was larger than [`LinkConfig::mtu`].
    pub dropped_mtu: u64,
    /// Delivered twice.
    pub duplicated: u64,
    /// Held back so that later datagrams could overtake it.
    pub reordered: u64,
    /// Damaged in flight.
    pub corrupted: u64,
}

impl LinkStats {
    /// All drops, whatever their cause.
    pub fn dropped(&self) -> u64 {
        self.dropped_loss + self.dropped_partition + self.dropped_mtu
    }
}

impl AddAssign for LinkStats {
    fn add_assign(&mut self, o: Self) {
        self.sent += o.sent;
        self.delivered += o.delivered;
        self.dropped_loss += o.dropped_loss;
        self.dropped_partition += o.dropped_partition;
        self.dropped_mtu += o.dropped_mtu;
        self.duplicated += o.duplicated;
        self.reordered += o.reordered;
        self.corrupted += o.corrupted;
    }
}
