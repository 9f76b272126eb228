//! The inbound attempts whose source is not verified yet (CONNECT answered, CONNECTED not back,
//! MC-DPL8R 3.1.5.1.1), in the order they came, counted per IP address, so that the caps of
//! [`crate::Config::max_half_open`] and [`crate::Config::max_half_open_per_ip`] can evict the
//! oldest first (docs/limits.md).

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;
use std::net::{IpAddr, SocketAddr};

use dplay_wire::budget::Charge;

/// What one half-open attempt holds at most (the connection record and its table entries,
/// about 1.8 KB as issue 14 measured), as charged to the memory budget (docs/limits.md).
pub const HALF_OPEN_BYTES: usize = 2048;

/// A fixed hasher, as for the connections: every simulated run is reproducible.
type Fixed = BuildHasherDefault<DefaultHasher>;

/// The half-open attempts of one endpoint.
#[derive(Debug, Default)]
pub(crate) struct HalfOpen {
    /// Arrival number to address, oldest first.
    order: BTreeMap<u64, SocketAddr>,
    by_addr: HashMap<SocketAddr, u64, Fixed>,
    per_ip: HashMap<IpAddr, usize, Fixed>,
    next: u64,
    /// [`HALF_OPEN_BYTES`] for each attempt, charged to the host's memory budget.
    charge: Charge,
}

impl HalfOpen {
    /// Draws on `charge` from now on (what was charged before is released).
    pub(crate) fn set_charge(&mut self, mut charge: Charge) {
        charge.grow(self.len() * HALF_OPEN_BYTES);
        self.charge = charge;
    }

    /// Records a new attempt from `addr` (replacing any earlier record of it); false, and
    /// nothing recorded, when the memory budget cannot take it.
    pub(crate) fn insert(&mut self, addr: SocketAddr) -> bool {
        self.remove(addr);
        if !self.charge.grow(HALF_OPEN_BYTES) {
            return false;
        }
        let n = self.next;
        self.next += 1;
        self.order.insert(n, addr);
        self.by_addr.insert(addr, n);
        *self.per_ip.entry(addr.ip()).or_default() += 1;
        true
    }

    /// Forgets `addr`'s attempt (confirmed, failed or evicted); false when there was none.
    pub(crate) fn remove(&mut self, addr: SocketAddr) -> bool {
        let Some(n) = self.by_addr.remove(&addr) else { return false };
        self.order.remove(&n);
        self.charge.shrink(HALF_OPEN_BYTES);
        if let Some(count) = self.per_ip.get_mut(&addr.ip()) {
            *count -= 1;
            if *count == 0 {
                self.per_ip.remove(&addr.ip());
            }
        }
        true
    }

    pub(crate) fn len(&self) -> usize {
        self.by_addr.len()
    }

    /// Attempts from `ip`.
    pub(crate) fn count_ip(&self, ip: IpAddr) -> usize {
        self.per_ip.get(&ip).copied().unwrap_or(0)
    }

    /// The oldest attempt, or the oldest from `ip`.
    pub(crate) fn oldest(&self, ip: Option<IpAddr>) -> Option<SocketAddr> {
        self.order.values().copied().find(|a| ip.is_none_or(|ip| a.ip() == ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn oldest_first_and_per_ip_counts() {
        let mut h = HalfOpen::default();
        h.insert(a("10.0.0.1:1"));
        h.insert(a("10.0.0.2:1"));
        h.insert(a("10.0.0.1:2"));
        assert_eq!(h.len(), 3);
        assert_eq!(h.count_ip(a("10.0.0.1:0").ip()), 2);
        assert_eq!(h.oldest(None), Some(a("10.0.0.1:1")));
        assert_eq!(h.oldest(Some(a("10.0.0.2:0").ip())), Some(a("10.0.0.2:1")));
        assert!(h.remove(a("10.0.0.1:1")));
        assert!(!h.remove(a("10.0.0.1:1")));
        assert_eq!(h.oldest(Some(a("10.0.0.1:0").ip())), Some(a("10.0.0.1:2")));
        h.insert(a("10.0.0.1:2"));
        assert_eq!(h.count_ip(a("10.0.0.1:0").ip()), 1);
        assert_eq!(h.oldest(None), Some(a("10.0.0.2:1")));
    }

    #[test]
    fn each_attempt_is_charged_and_released() {
        let budget = dplay_wire::budget::MemoryBudget::new(2 * HALF_OPEN_BYTES);
        let mut h = HalfOpen::default();
        assert!(h.insert(a("10.0.0.1:1")));
        h.set_charge(budget.account());
        assert_eq!(budget.held(), HALF_OPEN_BYTES);
        assert!(h.insert(a("10.0.0.2:1")));
        assert!(!h.insert(a("10.0.0.3:1")), "the budget is full");
        assert_eq!(h.len(), 2);
        assert!(h.insert(a("10.0.0.2:1")), "a repeat replaces its own record");
        assert!(h.remove(a("10.0.0.1:1")));
        assert_eq!(budget.held(), HALF_OPEN_BYTES);
        drop(h);
        assert_eq!(budget.held(), 0);
    }
}
