//! DirectPlay 4: DPSP_MSG_HEADER, every DPSP_MSG_* and the reliable protocol's frames.

pub mod header;
pub mod fragment;
