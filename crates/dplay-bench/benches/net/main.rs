//! Loopback network benchmarks (placeholder, filled in below).
fn main() {}
