//! The host's one memory budget (issue 14; docs/limits.md): what the session layer holds for
//! others is charged to the same [`MemoryBudget`] as what its transport holds (the half-open
//! table and every connection's receive window and reassembly). The session's share: the
//! name table (each entry's name, data and URL, and the operations kept for members not yet
//! caught up) and the application data held for us before we are joined. A DirectPlay 4
//! session charges its Player List here, and its TCP framers, DPSP and MC-DPL4R reassembly
//! draw on the same budget.

use dplay_wire::budget::{Charge, MemoryBudget};
use uuid::Uuid;

use crate::NameTable;

/// The session layer's accounts on the budget.
#[derive(Debug, Default)]
pub(crate) struct Memory {
    pub(crate) budget: MemoryBudget,
    table: Charge,
    pub(crate) early: Charge,
    /// The table as last counted: instance, version and size.
    table_seen: Option<(Uuid, u32, usize)>,
}

impl Memory {
    /// Accounts on a new budget of `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        let budget = MemoryBudget::new(limit);
        Self { table: budget.account(), early: budget.account(), budget, table_seen: None }
    }

    /// Counts the table again if it changed since last time. What the table holds is not
    /// refused here (a host refuses the join instead, [`Memory::fits_entry`]; a member leaves
    /// before it would hold what does not fit, [`Memory::admit_table`],
    /// [`Memory::admit_growth`]), only counted.
    pub(crate) fn sync_table(&mut self, table: &NameTable) {
        let seen = (table.instance(), table.version(), table.len());
        if self.table_seen != Some(seen) {
            self.table_seen = Some(seen);
            self.table.set_held(table.held_bytes());
        }
    }

    /// Member: a whole table of `bytes` from our host (DN_SEND_CONNECT_INFO) in place of ours.
    /// Charged and true when it fits with everything else held; false, nothing charged, when
    /// it does not: the member leaves rather than hold it.
    pub(crate) fn admit_table(&mut self, bytes: usize) -> bool {
        let others = self.budget.held().saturating_sub(self.table.bytes());
        if others.saturating_add(bytes) > self.budget.limit() {
            return false;
        }
        self.table.set_held(bytes);
        self.table_seen = None;
        true
    }

    /// Member: our table grows by at most `bytes` (an operation from our host). Charged (the
    /// next [`Memory::sync_table`] counts the table exactly) and true when it fits; false,
    /// nothing charged, when it does not.
    pub(crate) fn admit_growth(&mut self, bytes: usize) -> bool {
        if !self.budget.fits(bytes) {
            return false;
        }
        self.table.set_held(self.table.bytes().saturating_add(bytes));
        self.table_seen = None;
        true
    }

    /// Records what a DirectPlay 4 Player List holds now (counted, not refused, as above).
    pub(crate) fn set_table(&mut self, bytes: usize) {
        self.table.set_held(bytes);
    }

    /// Host: would a joiner's entry of `bytes` fit in the budget now?
    pub(crate) fn fits_entry(&self, bytes: usize) -> bool {
        self.budget.fits(bytes)
    }
}
