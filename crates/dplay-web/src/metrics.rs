//! `/metrics`: the published snapshot in the Prometheus (OpenMetrics) text format, through
//! prometheus-client. Every metric and label is listed in docs/metrics.md.

use std::fmt;

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use crate::snapshot::Snapshot;

/// The content type of the OpenMetrics text format.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// One label, `reason`.
type Reason = Vec<(&'static str, &'static str)>;

pub(crate) fn gauge(r: &mut Registry, name: &str, help: &str, value: u64) {
    let g = Gauge::<i64>::default();
    g.set(i64::try_from(value).unwrap_or(i64::MAX));
    r.register(name, help, g);
}

/// One label, `code`.
type Code = Vec<(&'static str, String)>;

/// `name` gets the `_total` suffix from the encoder.
pub(crate) fn counter(r: &mut Registry, name: &str, help: &str, value: u64) {
    let c = Counter::<u64>::default();
    c.inc_by(value);
    r.register(name, help, c);
}

pub(crate) fn by_reason(r: &mut Registry, name: &str, help: &str, counts: &[(&'static str, u64)]) {
    let family = Family::<Reason, Counter>::default();
    for (reason, n) in counts {
        family.get_or_create(&vec![("reason", *reason)]).inc_by(*n);
    }
    r.register(name, help, family);
}

/// The snapshot as OpenMetrics text. A registry is built per scrape: scrapes are rare, and the
/// protocol loop then needs no shared metric objects, only the snapshot it publishes anyway.
pub(crate) fn render(s: &Snapshot) -> Result<String, fmt::Error> {
    let c = &s.counters;
    let mut r = Registry::with_prefix("dplay");
    gauge(&mut r, "hosting", "1 while the session is hosted", u64::from(s.session.hosting));
    gauge(&mut r, "uptime_seconds", "Seconds since the host started", s.session.uptime_s);
    gauge(&mut r, "players", "Players in the name table, the host's own included", s.session.players as u64);
    gauge(&mut r, "max_players", "The session's player limit (0: none)", u64::from(s.session.max_players));
    counter(&mut r, "host_migrations", "Host migrations seen", u64::from(s.session.host_migrations));
    counter(&mut r, "joins", "Players that entered the name table (the host not counted)", c.joins);
    by_reason(&mut r, "leaves", "Players that left the name table, by DPNDESTROYPLAYERREASON", &c.leaves);
    by_reason(
        &mut r,
        "refusals",
        "Inputs dropped and joins refused, by reason (docs/limits.md)",
        &c.refusals,
    );
    let refused = Family::<Code, Counter>::default();
    for (code, n) in &c.join_refusals {
        refused.get_or_create(&vec![("code", code.clone())]).inc_by(*n);
    }
    r.register("join_refusals", "Joins refused, by the DPNERR/DPERR code sent", refused);
    counter(&mut r, "datagrams_received", "UDP datagrams received", c.datagrams_received);
    counter(&mut r, "datagrams_sent", "UDP datagrams sent", c.datagrams_sent);
    counter(&mut r, "received_bytes", "Bytes of the UDP datagrams received", c.bytes_received);
    counter(&mut r, "sent_bytes", "Bytes of the UDP datagrams sent", c.bytes_sent);
    counter(&mut r, "retransmissions", "DFRAMEs sent again (MC-DPL8R 3.1.6.5)", c.retransmissions);
    gauge(&mut r, "reassembly_held_bytes", "Bytes held for reassembly now", c.reassembly_bytes);
    gauge(&mut r, "connections", "Transport connections held", c.connections);
    gauge(&mut r, "half_open_connections", "Inbound connections not confirmed yet", c.half_open);
    gauge(&mut r, "joining", "Joiners connected but not members yet", c.joining);
    if let Some(relay) = &s.relay {
        crate::relay_view::metrics(&mut r, relay);
    }
    if let Some(voice) = &s.voice {
        crate::voice_view::metrics(&mut r, voice);
    }
    let mut out = String::new();
    encode(&mut out, &r)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::counters::Counters;

    #[test]
    fn every_metric_is_rendered_with_its_labels() {
        let mut s = Snapshot::default();
        s.session.players = 3;
        s.counters = Counters {
            joins: 5,
            leaves: vec![("DPNDESTROYPLAYERREASON_NORMAL", 2)],
            refusals: vec![("malformed", 7), ("joins_refused", 1)],
            bytes_sent: 1234,
            join_refusals: vec![("DPNERR_INVALIDPASSWORD".into(), 2)],
            ..Counters::default()
        };
        let text = render(&s).unwrap();
        for line in [
            "dplay_players 3",
            "dplay_joins_total 5",
            "dplay_leaves_total{reason=\"DPNDESTROYPLAYERREASON_NORMAL\"} 2",
            "dplay_refusals_total{reason=\"malformed\"} 7",
            "dplay_refusals_total{reason=\"joins_refused\"} 1",
            "dplay_sent_bytes_total 1234",
            "dplay_join_refusals_total{code=\"DPNERR_INVALIDPASSWORD\"} 2",
            "dplay_reassembly_held_bytes 0",
            "# TYPE dplay_retransmissions counter",
            "# EOF",
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        }
    }
}
