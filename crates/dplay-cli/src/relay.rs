//! `--relay` of `dplay host` and `dplay fs host` (issue 23; docs/relay.md): the host relays
//! the peer mesh for members behind NAT through relay endpoints on the ports after its own.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

use clap::Args;
use dplay_relay::RelayStats;
use dplay_runtime::{Protocol, RelayIo, Runtime, RuntimeError, SharedRelay, SocketSpec, relay_sockets};
use dplay_web::RelayView;
use serde::Serialize;

use crate::address;
use crate::live::{self, Output};

/// The `--relay` option.
#[derive(Args, Clone, Copy, Debug, Default)]
pub(crate) struct RelayArgs {
    /// Relay the peer mesh for members behind NAT (peer-to-peer, DirectPlay 8 or 4): every
    /// member reaches the others through relay endpoints on this host (DirectPlay 8: UDP, on
    /// the ports after the session's; DirectPlay 4: UDP and TCP from port 2401; one per
    /// member), so players open no ports. Implies --no-migration: a relayed session ends with
    /// its host (docs/relay.md).
    #[arg(long)]
    pub(crate) relay: bool,
}

/// Relay endpoints opened when the session has no player limit.
const DEFAULT_ENDPOINTS: usize = 32;
/// At most this many relay endpoints (docs/limits.md, "Relay").
const MAX_ENDPOINTS: usize = 256;

impl RelayArgs {
    /// How many endpoints to open for a session of at most `max_players` (0: no limit), the
    /// host included; `None` without `--relay`.
    pub(crate) fn endpoints(self, max_players: u32) -> Option<usize> {
        let members = usize::try_from(max_players.saturating_sub(1)).unwrap_or(MAX_ENDPOINTS);
        self.relay.then(|| if max_players == 0 { DEFAULT_ENDPOINTS } else { members.clamp(1, MAX_ENDPOINTS) })
    }
}

/// Binds `bind`, and `endpoints` relay endpoints after it when asked, and starts the protocol
/// `make` builds from the session's address and the relay.
pub(crate) fn spawn<P: Protocol>(
    bind: SocketAddr,
    pcap: Option<&PathBuf>,
    endpoints: Option<usize>,
    make: impl FnOnce(SocketAddr, Option<SharedRelay>) -> P,
) -> anyhow::Result<(Runtime<P>, Option<SharedRelay>)> {
    let sockets = endpoints.map_or_else(|| vec![SocketSpec::udp(bind)], |n| relay_sockets(bind, n));
    let mut relay = None;
    let runtime = Runtime::try_spawn_with(live::runtime_config(sockets, pcap)?, |bound| {
        let local = *bound.first().ok_or_else(|| RuntimeError::Protocol("no socket to bind".into()))?;
        relay = endpoints.map(|_| SharedRelay::new(bound, public_ip(local), |_| {}));
        Ok(make(local, relay.clone()))
    })?;
    Ok((runtime, relay))
}

/// The address members reach the endpoints at: the one bound, else the first joinable one.
pub(crate) fn public_ip(local: SocketAddr) -> IpAddr {
    address::joinable(local).first().map_or(local.ip(), SocketAddr::ip)
}

/// The relay's line, `"event":"relay"` in JSON (docs/json-events.md): `/api/relay`'s fields
/// and the latches.
#[derive(Serialize)]
#[serde(tag = "event", rename = "relay")]
struct RelayEvent {
    #[serde(flatten)]
    relay: RelayView,
    latched: u64,
}

/// Prints the relay's counters: the totals, then one row per member.
pub(crate) fn report(out: &Output, relay: &impl RelayIo) {
    let s: RelayStats = relay.stats();
    let text = format!(
        "relay: {} datagrams ({} bytes) relayed, {}/{} endpoints held; dropped: {} from strangers, {} not yet \
         latched, {} over a rate cap, {} over the memory budget",
        s.datagrams,
        s.bytes,
        s.endpoints_held,
        s.endpoints,
        s.strangers,
        s.unlatched,
        s.rate_limited,
        s.over_budget
    );
    let rows: Vec<String> = s
        .members
        .iter()
        .map(|m| {
            format!(
                "{} at {} (relay endpoint {}): {} datagrams ({} bytes) from it, {} ({} bytes) to it, {} over its rate cap",
                m.dpnid, m.addr, m.endpoint, m.datagrams_from, m.bytes_from, m.datagrams_to, m.bytes_to, m.rate_limited
            )
        })
        .collect();
    let latched = s.latched;
    out.event_rows(&RelayEvent { relay: s.into(), latched }, text, &rows);
}

/// The relay's line right after each drops-and-refusals line (`--stats-every`, SIGUSR1) when
/// relaying: `refusals` says the event just printed was that line.
pub(crate) fn after_refusals(out: &Output, relay: Option<&SharedRelay>, refusals: bool) {
    if let (true, Some(r)) = (refusals, relay) {
        report(out, r);
    }
}
