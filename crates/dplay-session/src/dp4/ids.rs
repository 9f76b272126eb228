//! Player and group IDs as the host makes them (MC-DPL4CS 3.2.5.4 note, 3.1.7.1, 5.1).
//!
//! The low 16 bits are a zero-based index not used by another live ID, the high 16 bits a
//! counter incremented for every ID handed out, and the whole is XORed with the session's
//! `Reserved1`.

use std::collections::BTreeSet;

/// Allocates IDs for one session.
#[derive(Debug, Clone)]
pub struct IdAllocator {
    key: u32,
    counter: u16,
    used: BTreeSet<u16>,
}

impl IdAllocator {
    /// An allocator XORing with `reserved1`, its uniqueness counter starting at `counter`.
    pub fn new(reserved1: u32, counter: u16) -> Self {
        Self { key: reserved1, counter, used: BTreeSet::new() }
    }

    /// Rebuilds the state from the live IDs, for a host that took over (MC-DPL4CS 3.1.7.1).
    pub fn from_live(reserved1: u32, live: impl IntoIterator<Item = u32>) -> Self {
        let mut a = Self::new(reserved1, 0);
        for id in live {
            let raw = id ^ reserved1;
            a.used.insert(low(raw));
            a.counter = a.counter.max(high(raw).wrapping_add(1));
        }
        a
    }

    /// A new ID, or `None` when all 65536 indexes are in use. Never `DPID_ALLPLAYERS` (0) or
    /// `DPID_SERVERPLAYER` (1), which name other things on the wire.
    pub fn allocate(&mut self) -> Option<u32> {
        let id = |i: u16| (u32::from(self.counter) << 16 | u32::from(i)) ^ self.key;
        let index = (0..=u16::MAX).find(|&i| !self.used.contains(&i) && id(i) > 1)?;
        let id = id(index);
        self.used.insert(index);
        self.counter = self.counter.wrapping_add(1);
        Some(id)
    }

    /// Frees the index of `id` (not 0 or 1, which were never handed out).
    pub fn release(&mut self, id: u32) {
        if id > 1 {
            self.used.remove(&low(id ^ self.key));
        }
    }
}

fn low(raw: u32) -> u16 {
    u16::try_from(raw & 0xFFFF).unwrap_or_default()
}

fn high(raw: u32) -> u16 {
    u16::try_from(raw >> 16).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MC-DPL4CS 3.2.5.4: index in the low 16 bits, counter in the high 16, XOR Reserved1.
    #[test]
    fn ids_are_index_and_counter_xor_reserved1() {
        let key = 0x1E52_A0A1;
        let mut a = IdAllocator::new(key, 5);
        assert_eq!(a.allocate(), Some(0x0005_0000 ^ key));
        assert_eq!(a.allocate(), Some(0x0006_0001 ^ key));
        a.release(0x0005_0000 ^ key);
        // The freed index comes back, with a new counter, so the ID is new.
        assert_eq!(a.allocate(), Some(0x0007_0000 ^ key));
    }

    /// DPID_ALLPLAYERS (0) and DPID_SERVERPLAYER (1) are never handed out, even when the
    /// index and counter XOR Reserved1 would make them.
    #[test]
    fn reserved_ids_are_skipped() {
        // Indexes 0 and 1 with counter 5 would give 1 and 0.
        let mut a = IdAllocator::new(0x0005_0001, 5);
        assert_eq!(a.allocate(), Some(3));
        a.release(1);
        assert_eq!(a.allocate(), Some(0x0006_0000 ^ 0x0005_0001), "releasing 1 frees nothing");
    }

    proptest::proptest! {
        /// Whatever Reserved1 and the starting counter, 0 and 1 never come out, and no ID
        /// comes out twice while it lives.
        #[test]
        fn never_a_reserved_or_repeated_id(key: u32, counter: u16, n in 1usize..300) {
            let mut a = IdAllocator::new(key, counter);
            let ids: Vec<u32> = (0..n).filter_map(|_| a.allocate()).collect();
            proptest::prop_assert!(ids.iter().all(|&id| id > 1));
            let unique: BTreeSet<u32> = ids.iter().copied().collect();
            proptest::prop_assert_eq!(unique.len(), ids.len());
        }
    }

    /// MC-DPL4CS 3.1.7.1: a new host continues from the IDs it knows, never repeating one.
    #[test]
    fn rebuilt_allocator_never_repeats_a_live_id() {
        let key = 0xDEAD_BEEF;
        let mut a = IdAllocator::new(key, 0);
        let live: Vec<_> = (0..3).map(|_| a.allocate().unwrap()).collect();
        let mut b = IdAllocator::from_live(key, live.clone());
        let next = b.allocate().unwrap();
        assert!(!live.contains(&next));
        assert_eq!(next ^ key, 0x0003_0003);
    }
}
