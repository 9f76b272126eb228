//! Our transport over real loopback sockets: two dplay-runtime threads, each driving a
//! [`DframePeer`], optionally through a [`Proxy`].

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use dplay_dframe::Config;
use dplay_runtime::{Runtime, RuntimeConfig};

use crate::LOOPBACK;
use crate::peer::{Counters, DframePeer, PeerCommand, PeerEvent, Role};
use crate::proxy::{Impairment, Proxy};

/// A client and a server runtime with one connection between them.
pub struct Link {
    /// The sending side.
    pub client: Runtime<DframePeer>,
    /// The receiving side.
    pub server: Runtime<DframePeer>,
    /// Where the client sends (the server, or the proxy in front of it).
    pub target: SocketAddr,
    /// Counters shared by both sides.
    pub counters: Arc<Counters>,
    _proxy: Option<Proxy>,
}

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

impl Link {
    /// Starts both runtimes and connects; the server reports latencies when `latency` is set.
    pub fn connect(latency: bool, impairment: Option<Impairment>) -> io::Result<Self> {
        let counters = Arc::new(Counters::default());
        let epoch = Instant::now();
        let peer = |role| DframePeer::new(Config::default(), role, Arc::clone(&counters), epoch);
        let server =
            Runtime::spawn(RuntimeConfig::new(LOOPBACK), peer(Role::Sink { latency })).map_err(other)?;
        let client = Runtime::spawn(RuntimeConfig::new(LOOPBACK), peer(Role::Sink { latency: false }))
            .map_err(other)?;
        let proxy = impairment.map(|i| Proxy::spawn(server.local_addr(), i)).transpose()?;
        let target = proxy.as_ref().map_or(server.local_addr(), Proxy::addr);
        client.command(PeerCommand::Connect(target)).map_err(other)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match client.events().recv_timeout(left) {
                Ok(PeerEvent::Connected(_)) => break,
                Ok(_) => {}
                Err(_) => return Err(io::Error::new(io::ErrorKind::TimedOut, "no connection")),
            }
        }
        Ok(Self { client, server, target, counters, _proxy: proxy })
    }
}

/// Delivered payload bytes per second of `size`-byte reliable sequential messages, sent as
/// fast as the transport takes them, measured for `duration` after `warmup`.
pub fn goodput(
    size: usize,
    impairment: Option<Impairment>,
    warmup: Duration,
    duration: Duration,
) -> io::Result<f64> {
    let link = Link::connect(false, impairment)?;
    link.client.command(PeerCommand::Start(Role::Bulk { peer: link.target, size })).map_err(other)?;
    std::thread::sleep(warmup);
    let start = (Instant::now(), link.counters.delivered_bytes.get());
    std::thread::sleep(duration);
    let end = (Instant::now(), link.counters.delivered_bytes.get());
    Ok((end.1 - start.1) as f64 / (end.0 - start.0).as_secs_f64())
}

/// One-way latencies (ns) of `size`-byte reliable sequential messages sent every `interval`
/// for `duration`.
pub fn paced(size: usize, interval: Duration, duration: Duration) -> io::Result<Vec<u64>> {
    let link = Link::connect(true, None)?;
    link.client
        .command(PeerCommand::Start(Role::Paced { peer: link.target, size, interval }))
        .map_err(other)?;
    let end = Instant::now() + duration;
    let mut samples = Vec::new();
    while let Some(left) = end.checked_duration_since(Instant::now()) {
        if let Ok(PeerEvent::Latency(ns)) = link.server.events().recv_timeout(left) {
            samples.push(ns);
        }
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goodput_over_loopback_is_positive() {
        let rate = goodput(1024, None, Duration::ZERO, Duration::from_millis(200)).unwrap();
        assert!(rate > 0.0);
    }

    #[test]
    fn paced_messages_report_latencies() {
        let samples = paced(64, Duration::from_millis(2), Duration::from_millis(100)).unwrap();
        assert!(samples.len() > 10, "{}", samples.len());
    }

    #[test]
    fn goodput_through_a_lossy_proxy_is_positive() {
        let rate =
            goodput(1024, Some(Impairment::LOSSY), Duration::ZERO, Duration::from_millis(300)).unwrap();
        assert!(rate > 0.0);
    }
}
