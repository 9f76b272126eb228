//! Hostile cases against a DirectPlay 8 host.

use crate::integration::Case;

/// Every DirectPlay 8 case, in order.
pub(super) const CASES: &[(&str, Case)] = &[];
