//! Benchmarks of the stack against baselines measured in the same run, for `cargo xtask bench`
//! (docs/PERFORMANCE.md).
//!
//! The library holds what the two bench targets share: the row format written to
//! `target/bench/` ([`report`]), a [`dplay_runtime::Protocol`] adapter around a
//! [`dplay_dframe::Endpoint`] that generates and counts traffic inside the network thread
//! ([`peer`]), an in-memory pair of endpoints ([`pair`]), the raw UDP baseline ([`udp`]), the
//! loss-and-delay proxy applied to every library alike ([`proxy`]) and the many-connection load
//! ([`scale`]), and the dashboard under that load ([`dashboard`]), with an in-memory host of
//! joined clients for its snapshot micro-benchmark ([`roster`]). ENet, a peer library, is only
//! a dev-dependency and lives in `benches/net/`.
//!
//! Every socket is bound to 127.0.0.1.
#![allow(clippy::disallowed_methods)] // benchmarks read the clock (clippy.toml bans it elsewhere)

pub mod dashboard;
pub mod netns;
pub mod ours;
pub mod pair;
pub mod peer;
pub mod pin;
pub mod proxy;
pub mod relay;
pub mod report;
pub mod roster;
pub mod scale;
pub mod stats;
pub mod udp;
pub mod wire;

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Instant;

/// 127.0.0.1 with any free port.
pub const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

/// Messages sent but not yet delivered that a bulk sender allows itself (4 MiB of 1 KiB
/// messages, the transport's default send queue): the same bound for every library.
pub const BACKLOG: u64 = 4096;

/// Writes the one-way timestamp (nanoseconds since `epoch`) into the first 8 bytes of `buf`.
pub fn stamp(buf: &mut [u8], epoch: Instant) {
    let ns = u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
    if let Some(head) = buf.get_mut(..8) {
        head.copy_from_slice(&ns.to_le_bytes());
    }
}

/// Nanoseconds from the timestamp at the front of `data` until now, if `data` carries one.
pub fn age_ns(data: &[u8], epoch: Instant) -> Option<u64> {
    let head: [u8; 8] = data.get(..8)?.try_into().ok()?;
    let sent = u64::from_le_bytes(head);
    let now = u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
    Some(now.saturating_sub(sent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamp_reads_back_as_a_small_age() {
        let epoch = Instant::now();
        let mut buf = [0u8; 64];
        stamp(&mut buf, epoch);
        let age = age_ns(&buf, epoch).unwrap();
        assert!(age < 1_000_000_000);
        assert_eq!(age_ns(&buf[..4], epoch), None);
    }
}
