//! DirectPlay 8: transport frames, enumeration, path test and session messages.

pub mod alternate_address;
pub mod cframe;
pub mod dframe;
pub mod dpnid;
pub mod session;
pub mod url;
