//! One memory budget for everything a host holds for others (issue 14; docs/limits.md):
//! bytes are charged when held and released when freed, against one limit an operator sets.
//!
//! This is the one piece of state in this crate: the transports (`dplay-dframe`,
//! `dplay-dpsp`) and the session layer above them all hold bytes for others and must draw on
//! the same budget, and this is the crate they share (docs/decisions.md, "One memory budget").
//! The counter is atomic so that a dashboard thread may read it; the protocol crates charge it
//! from one thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// A shared budget: clones draw on the same counter.
#[derive(Debug, Clone)]
pub struct MemoryBudget(Arc<Counter>);

#[derive(Debug)]
struct Counter {
    limit: AtomicUsize,
    held: AtomicUsize,
    peak: AtomicUsize,
    refused: AtomicU64,
}

impl MemoryBudget {
    /// A budget of `limit` bytes, none held.
    pub fn new(limit: usize) -> Self {
        Self(Arc::new(Counter {
            limit: AtomicUsize::new(limit),
            held: AtomicUsize::new(0),
            peak: AtomicUsize::new(0),
            refused: AtomicU64::new(0),
        }))
    }

    /// A budget that refuses nothing (it still counts).
    pub fn unlimited() -> Self {
        Self::new(usize::MAX)
    }

    /// The limit, in bytes.
    pub fn limit(&self) -> usize {
        self.0.limit.load(Ordering::Relaxed)
    }

    /// Changes the limit; what is held stays held.
    pub fn set_limit(&self, limit: usize) {
        self.0.limit.store(limit, Ordering::Relaxed);
    }

    /// Bytes held now.
    pub fn held(&self) -> usize {
        self.0.held.load(Ordering::Relaxed)
    }

    /// The most bytes held at once so far.
    pub fn peak(&self) -> usize {
        self.0.peak.load(Ordering::Relaxed)
    }

    /// Charges refused so far because the budget was full.
    pub fn refused(&self) -> u64 {
        self.0.refused.load(Ordering::Relaxed)
    }

    /// True when `bytes` more would fit now (nothing is charged).
    pub fn fits(&self, bytes: usize) -> bool {
        self.held().saturating_add(bytes) <= self.limit()
    }

    /// Charges `bytes` if they fit under the limit; else charges nothing, counts a refusal
    /// and returns false.
    fn try_charge(&self, bytes: usize) -> bool {
        if bytes == 0 {
            return true;
        }
        let limit = self.limit();
        let charged = self.0.held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            held.checked_add(bytes).filter(|total| *total <= limit)
        });
        match charged {
            Ok(before) => {
                self.0.peak.fetch_max(before.saturating_add(bytes), Ordering::Relaxed);
                true
            }
            Err(_) => {
                self.0.refused.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    fn release(&self, bytes: usize) {
        // Never below zero, whatever a holder does.
        let _ = self
            .0
            .held
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| Some(held.saturating_sub(bytes)));
    }

    /// A holder's account on this budget, holding nothing yet.
    pub fn account(&self) -> Charge {
        Charge { budget: self.clone(), bytes: 0 }
    }
}

impl Default for MemoryBudget {
    fn default() -> Self {
        Self::unlimited()
    }
}

/// What one holder (a connection's receive window, a reassembly, a table) has charged to a
/// [`MemoryBudget`]; released when it is dropped, so freed state never stays counted.
#[derive(Debug)]
pub struct Charge {
    budget: MemoryBudget,
    bytes: usize,
}

impl Charge {
    /// Bytes this holder has charged.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Charges `bytes` more if they fit; false (nothing charged, a refusal counted) if not.
    pub fn grow(&mut self, bytes: usize) -> bool {
        if self.budget.try_charge(bytes) {
            self.bytes = self.bytes.saturating_add(bytes);
            true
        } else {
            false
        }
    }

    /// Releases `bytes` (at most what this holder charged).
    pub fn shrink(&mut self, bytes: usize) {
        let bytes = bytes.min(self.bytes);
        self.budget.release(bytes);
        self.bytes -= bytes;
    }

    /// Makes this holder's charge `bytes`: releases the difference when smaller; when larger,
    /// charges it if it fits (false and unchanged if not).
    pub fn set(&mut self, bytes: usize) -> bool {
        if bytes <= self.bytes {
            self.shrink(self.bytes - bytes);
            true
        } else {
            self.grow(bytes - self.bytes)
        }
    }

    /// Records that this holder holds `bytes` now, whether or not they fit: for what is held
    /// already and cannot be refused (a name table the host sent). A refusal is not counted.
    pub fn set_held(&mut self, bytes: usize) {
        if bytes <= self.bytes {
            self.shrink(self.bytes - bytes);
        } else {
            let more = bytes - self.bytes;
            let _ =
                self.budget.0.held.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                    Some(held.saturating_add(more))
                });
            self.budget.0.peak.fetch_max(self.budget.held(), Ordering::Relaxed);
            self.bytes = bytes;
        }
    }

    /// The budget this charge draws on.
    pub fn budget(&self) -> &MemoryBudget {
        &self.budget
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.budget.release(self.bytes);
    }
}

impl Default for Charge {
    /// An account on an unlimited budget of its own (a holder outside any host).
    fn default() -> Self {
        MemoryBudget::unlimited().account()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_and_releases_against_one_limit() {
        let budget = MemoryBudget::new(1000);
        let mut a = budget.account();
        let mut b = budget.account();
        assert!(a.grow(600));
        assert!(!b.grow(500), "past the limit: refused");
        assert_eq!((budget.held(), budget.refused(), b.bytes()), (600, 1, 0));
        assert!(b.grow(400));
        assert_eq!(budget.held(), 1000);
        assert!(!a.grow(1));
        a.shrink(100);
        assert!(b.set(500));
        assert_eq!((budget.held(), a.bytes(), b.bytes()), (1000, 500, 500));
        assert!(b.set(10));
        assert_eq!(budget.held(), 510);
        drop(a);
        assert_eq!(budget.held(), 10, "a dropped holder releases what it held");
        b.shrink(usize::MAX);
        assert_eq!((budget.held(), budget.peak(), budget.refused()), (0, 1000, 2));
    }

    #[test]
    fn a_lowered_limit_keeps_what_is_held_and_refuses_more() {
        let budget = MemoryBudget::new(100);
        let mut a = budget.account();
        assert!(a.grow(80));
        budget.set_limit(50);
        assert!(!a.grow(1));
        assert!(!budget.fits(1));
        assert!(a.set(40));
        assert!(a.grow(10));
        assert_eq!(budget.held(), 50);
        a.set_held(70);
        assert_eq!((budget.held(), budget.refused()), (70, 1), "held past the limit, counted as held");
    }
}
