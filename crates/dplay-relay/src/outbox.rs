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

/// Forwards of kind `F` (where each goes) waiting with their bytes, charged to a budget.
#[derive(Debug)]
pub(crate) struct Outbox<F> {
    queue: VecDeque<(F, Vec<u8>)>,
    charge: Charge,
    max_queue: usize,
    rate: RateLimit,
}

impl<F> Outbox<F> {
    pub(crate) fn new(budget: &MemoryBudget, max_queue: usize, rate: RateLimit) -> Self {
        Self { queue: VecDeque::new(), charge: budget.account(), max_queue, rate }
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
        let len = data.len() as u64;
        sender.stats.datagrams_from += 1;
        sender.stats.bytes_from += len;
        if let Some(r) = receiver {
            r.datagrams_to += 1;
            r.bytes_to += len;
        }
        totals.datagrams += 1;
        totals.bytes += len;
        self.queue.push_back((to, data.to_vec()));
    }

    /// The next forward: its bytes into `buf`.
    pub(crate) fn pop(&mut self, buf: &mut Vec<u8>) -> Option<F> {
        let (to, data) = self.queue.pop_front()?;
        self.charge.shrink(data.len());
        buf.extend_from_slice(&data);
        Some(to)
    }
}
