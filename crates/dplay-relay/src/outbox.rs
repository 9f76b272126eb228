//! The datagrams and messages waiting to be relayed, for both DirectPlay 8 and 4: each
//! member's rate cap, the queue's cap and the host's memory budget, and the counters
//! (docs/limits.md, "Relay").

use std::collections::VecDeque;
use std::time::Instant;

use dplay_wire::budget::{Charge, MemoryBudget};

use crate::rate::{Bucket, RateLimit};
use crate::stats::{MemberStats, RelayStats};

/// What the relay keeps of one sender for the outbox: its rate bucket and its counters.
#[derive(Debug)]
pub(crate) struct Sender {
    pub(crate) bucket: Bucket,
    pub(crate) stats: MemberStats,
}

/// Datagram buffers kept for reuse at most, and the largest kept: forwarding allocates
/// nothing once the queue's buffers exist, and what is kept stays small (64 x 4 KiB).
const SPARES: usize = 64;
const SPARE_CAPACITY: usize = 4096;

/// Forwards of kind `F` (where each goes) waiting with their bytes, charged to a budget.
#[derive(Debug)]
pub(crate) struct Outbox<F> {
    queue: VecDeque<(F, Vec<u8>)>,
    /// Buffers of datagrams sent, for the next ones (at most [`SPARES`]).
    spares: Vec<Vec<u8>>,
    charge: Charge,
    max_queue: usize,
    rate: RateLimit,
}

impl<F> Outbox<F> {
    pub(crate) fn new(budget: &MemoryBudget, max_queue: usize, rate: RateLimit) -> Self {
        Self { queue: VecDeque::new(), spares: Vec::new(), charge: budget.account(), max_queue, rate }
    }

    /// Charges what waits from now on to `budget` (what waits moves along when it fits).
    pub(crate) fn set_budget(&mut self, budget: &MemoryBudget) {
        let mut charge = budget.account();
        if charge.grow(self.charge.bytes()) {
            self.charge = charge;
        }
    }

    /// Queues `data` from `sender` to `to` within the sender's rate cap, the queue's cap and
    /// the budget; counts it in `sender`, `receiver` and `totals`, or why it was dropped.
    pub(crate) fn offer(
        &mut self,
        now: Instant,
        sender: &mut Sender,
        receiver: Option<&mut MemberStats>,
        totals: &mut RelayStats,
        to: F,
        data: &[u8],
    ) {
        if !sender.bucket.take(now, data.len(), self.rate) {
            sender.stats.rate_limited += 1;
            totals.rate_limited += 1;
            return;
        }
        if self.queue.len() >= self.max_queue || !self.charge.grow(data.len()) {
            totals.over_budget += 1;
            return;
        }
        sender.stats.count_from(data.len());
        if let Some(r) = receiver {
            r.count_to(data.len());
        }
        totals.datagrams += 1;
        totals.bytes += data.len() as u64;
        let mut bytes = self.spares.pop().unwrap_or_default();
        bytes.extend_from_slice(data);
        self.queue.push_back((to, bytes));
    }

    /// The next forward: its bytes into `buf` (an empty `buf` is swapped with the forward's
    /// own buffer rather than copied into).
    pub(crate) fn pop(&mut self, buf: &mut Vec<u8>) -> Option<F> {
        let (to, mut data) = self.queue.pop_front()?;
        self.charge.shrink(data.len());
        if buf.is_empty() {
            std::mem::swap(buf, &mut data);
        } else {
            buf.extend_from_slice(&data);
        }
        if self.spares.len() < SPARES && data.capacity() <= SPARE_CAPACITY {
            data.clear();
            self.spares.push(data);
        }
        Some(to)
    }
}
