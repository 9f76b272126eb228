//! Hostile cases against a DirectPlay 4 host.

use crate::integration::Case;

/// Every DirectPlay 4 case, in order.
pub(super) const CASES: &[(&str, Case)] = &[];
