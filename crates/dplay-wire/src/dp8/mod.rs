//! DirectPlay 8: transport frames, enumeration, path test and session messages.

pub mod alternate_address;
pub mod cframe;
pub mod coalesce;
pub mod dframe;
pub mod dpnid;
pub mod enumeration;
pub mod path_test;
pub mod session;
pub mod url;
