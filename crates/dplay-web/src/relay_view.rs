//! The relay on the dashboard (issue 23; docs/relay.md): a relaying host's [`Hosted`]
//! protocol is the one underneath, with the relay's counters in its snapshot (`/api/relay`,
//! the dashboard's relay panel, `dplay_relay_*` in `/metrics`).

use std::time::Instant;

use dplay_relay::RelayStats;
use dplay_runtime::{RelayIo, Relayed};
use serde::Serialize;

use crate::host_view::{Hosted, Seen};
use crate::link::AdminCommand;
use crate::snapshot::Snapshot;

/// The relay as `/api/relay` shows it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct RelayView {
    /// Relay endpoints opened.
    pub endpoints: usize,
    /// Endpoints a member holds.
    pub endpoints_held: usize,
    /// Datagrams relayed, and their bytes.
    pub datagrams: u64,
    /// Bytes of `datagrams`.
    pub bytes: u64,
    /// Dropped: from no member.
    pub strangers: u64,
    /// Dropped: the receiver had not yet sent to the sender's endpoint.
    pub unlatched: u64,
    /// Dropped: over the sender's rate cap.
    pub rate_limited: u64,
    /// Dropped: over the host's memory budget.
    pub over_budget: u64,
    /// Each member's relayed traffic.
    pub members: Vec<RelayMemberView>,
}

/// One member's relayed traffic.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct RelayMemberView {
    /// Its DPNID (`0x...`).
    pub dpnid: String,
    /// Its address as the host sees it.
    pub address: String,
    /// Its relay endpoint.
    pub endpoint: String,
    /// Datagrams from it relayed to others.
    pub datagrams_from: u64,
    /// Bytes of `datagrams_from`.
    pub bytes_from: u64,
    /// Datagrams relayed to it.
    pub datagrams_to: u64,
    /// Bytes of `datagrams_to`.
    pub bytes_to: u64,
    /// Its datagrams dropped by its rate cap.
    pub rate_limited: u64,
}

impl From<RelayStats> for RelayView {
    fn from(s: RelayStats) -> Self {
        let members = s
            .members
            .iter()
            .map(|m| RelayMemberView {
                dpnid: m.dpnid.to_string(),
                address: m.addr.to_string(),
                endpoint: m.endpoint.to_string(),
                datagrams_from: m.datagrams_from,
                bytes_from: m.bytes_from,
                datagrams_to: m.datagrams_to,
                bytes_to: m.bytes_to,
                rate_limited: m.rate_limited,
            })
            .collect();
        Self {
            endpoints: s.endpoints,
            endpoints_held: s.endpoints_held,
            datagrams: s.datagrams,
            bytes: s.bytes,
            strangers: s.strangers,
            unlatched: s.unlatched,
            rate_limited: s.rate_limited,
            over_budget: s.over_budget,
            members,
        }
    }
}

/// `s` with the relay's counters.
fn with_relay<P, R: RelayIo>(relayed: &Relayed<P, R>, mut s: Snapshot) -> Snapshot {
    s.relay = relayed.relay().map(|r| r.stats().into());
    s
}

impl<P: Hosted, R: RelayIo> Hosted for Relayed<P, R> {
    fn snapshot(&self) -> Snapshot {
        with_relay(self, self.inner().snapshot())
    }

    fn refresh(&self, last: &Snapshot) -> Option<Snapshot> {
        self.inner().refresh(last).map(|s| with_relay(self, s))
    }

    fn seen(&self, event: &Self::Event) -> Option<Seen> {
        self.inner().seen(event)
    }

    fn traffic(&self, now: Instant) -> Option<dplay_addon::TrafficSnapshot> {
        self.inner().traffic(now)
    }

    fn voice(&self, now: Instant) -> Option<crate::voice_view::VoiceView> {
        self.inner().voice(now)
    }

    fn admin(&mut self, now: Instant, command: AdminCommand) -> String {
        self.inner_mut().admin(now, command)
    }

    fn probe(&mut self, now: Instant) {
        self.inner_mut().probe(now);
    }
}

/// One label, `player` (a DPNID).
type PlayerLabel = Vec<(&'static str, String)>;

/// The relay's metrics (docs/metrics.md): `dplay_relay_datagrams_total` and
/// `dplay_relay_bytes_total` per member and direction, `dplay_relay_dropped_total` by reason,
/// `dplay_relay_endpoints` and `dplay_relay_endpoints_held`.
pub(crate) fn metrics(r: &mut prometheus_client::registry::Registry, relay: &RelayView) {
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    let r = r.sub_registry_with_prefix("relay");
    crate::metrics::gauge(r, "endpoints", "Relay endpoints opened", relay.endpoints as u64);
    crate::metrics::gauge(r, "endpoints_held", "Relay endpoints a member holds", relay.endpoints_held as u64);
    let drops = [
        ("stranger", relay.strangers),
        ("unlatched", relay.unlatched),
        ("rate_limited", relay.rate_limited),
        ("over_budget", relay.over_budget),
    ];
    crate::metrics::by_reason(r, "dropped", "Datagrams at relay endpoints dropped, by reason", &drops);
    for (name, help, from, to) in [
        (
            "datagrams",
            "Datagrams relayed, per member: from it (direction=from) and to it (direction=to)",
            (|m: &RelayMemberView| m.datagrams_from) as fn(&RelayMemberView) -> u64,
            (|m: &RelayMemberView| m.datagrams_to) as fn(&RelayMemberView) -> u64,
        ),
        ("bytes", "Bytes relayed, per member and direction", |m| m.bytes_from, |m| m.bytes_to),
    ] {
        let family = Family::<PlayerLabel, Counter>::default();
        for m in &relay.members {
            let label = |dir: &str| vec![("player", m.dpnid.clone()), ("direction", dir.to_owned())];
            family.get_or_create(&label("from")).inc_by(from(m));
            family.get_or_create(&label("to")).inc_by(to(m));
        }
        r.register(name, help, family);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_metrics_per_member_and_reason() {
        let s = Snapshot {
            relay: Some(RelayView {
                endpoints: 4,
                endpoints_held: 1,
                strangers: 3,
                members: vec![RelayMemberView {
                    dpnid: "0x00000011".into(),
                    datagrams_from: 5,
                    bytes_to: 70,
                    ..RelayMemberView::default()
                }],
                ..RelayView::default()
            }),
            ..Snapshot::default()
        };
        let text = crate::metrics::render(&s).unwrap();
        for line in [
            "dplay_relay_endpoints 4",
            "dplay_relay_endpoints_held 1",
            "dplay_relay_dropped_total{reason=\"stranger\"} 3",
            "dplay_relay_datagrams_total{player=\"0x00000011\",direction=\"from\"} 5",
            "dplay_relay_bytes_total{player=\"0x00000011\",direction=\"to\"} 70",
        ] {
            assert!(text.contains(line), "{line} missing from\n{text}");
        }
    }
}
