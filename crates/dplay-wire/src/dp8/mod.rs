//! DirectPlay 8: transport frames, enumeration, path test and session messages.

pub mod cframe;
pub mod coalesce;
pub mod dframe;
pub mod enumeration;
pub mod path_test;
