//! DirectPlay Voice on the dashboard (issue 24; MC-DPLVP): a `--voice` host's session type and
//! codec, its voice clients with a live "talking" flag (`/api/voice`, the page's players
//! table), and its counters in `/metrics` (`dplay_voice_*`).

use std::time::{Duration, Instant};

use dplay_voice::VoiceServer;
use serde::Serialize;

/// A voice client is talking while its last accepted speech is at most this old: one
/// second, a few frames of any codec of MC-DPLVP 1.3.7 (50 to 100 ms each).
pub const TALKING_FOR: Duration = Duration::from_secs(1);

/// The voice server as `/api/voice` shows it.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct VoiceView {
    /// `DVSESSIONTYPE_FORWARDING` or `DVSESSIONTYPE_ECHO` (MC-DPLVP 2.2.3.2).
    pub session_type: &'static str,
    /// The codec announced in CONNECTACCEPT, by its constant (`DPVCTGUID_SC03` ...; 1.3.7).
    pub codec: &'static str,
    /// Voice messages received, whatever became of them.
    pub received: u64,
    /// Speech messages accepted (forwarded or bounced).
    pub speech_in: u64,
    /// Speech messages sent on (SPEECHWITHFROM or SPEECHBOUNCE: one per target reached).
    pub speech_out: u64,
    /// Voice clients that completed the connection (SETTINGSCONFIRM) since the start.
    pub clients_connected: u64,
    /// The voice clients connected now.
    pub clients: Vec<VoiceClientView>,
}

/// One connected voice client.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
#[non_exhaustive]
pub struct VoiceClientView {
    /// Its DVID, the player's DPNID (`0x...`).
    pub dpnid: String,
    /// Speech messages accepted from it.
    pub speech: u64,
    /// It sent speech within the last [`TALKING_FOR`].
    pub talking: bool,
}

impl VoiceView {
    /// What `server` shows at `now`.
    pub fn of(server: &VoiceServer, now: Instant) -> Self {
        let cfg = server.config();
        let stats = server.stats();
        let clients = server
            .talkers()
            .iter()
            .map(|t| VoiceClientView {
                dpnid: t.dvid.to_string(),
                speech: t.speech,
                talking: t.last_speech.is_some_and(|at| now.saturating_duration_since(at) <= TALKING_FOR),
            })
            .collect();
        Self {
            session_type: cfg.session_type.name().unwrap_or("DVSESSIONTYPE_UNKNOWN"),
            codec: cfg.codec.constant,
            received: stats.received,
            speech_in: stats.speech_in,
            speech_out: stats.speech_out,
            clients_connected: stats.clients_connected,
            clients,
        }
    }
}

/// The voice server's metrics (docs/metrics.md): `dplay_voice_clients`,
/// `dplay_voice_clients_talking`, `dplay_voice_clients_connected_total`,
/// `dplay_voice_received_total`, `dplay_voice_speech_total{direction=in|out}`. Its drops are in
/// `dplay_refusals_total` under their `voice_*`/`speech_*` reasons.
pub(crate) fn metrics(r: &mut prometheus_client::registry::Registry, v: &VoiceView) {
    use prometheus_client::metrics::counter::Counter;
    use prometheus_client::metrics::family::Family;
    let r = r.sub_registry_with_prefix("voice");
    crate::metrics::gauge(r, "clients", "Voice clients connected now", v.clients.len() as u64);
    let talking = v.clients.iter().filter(|c| c.talking).count() as u64;
    crate::metrics::gauge(r, "clients_talking", "Voice clients that spoke in the last second", talking);
    crate::metrics::counter(
        r,
        "clients_connected",
        "Voice clients that completed the connection (SETTINGSCONFIRM)",
        v.clients_connected,
    );
    crate::metrics::counter(r, "received", "Voice messages received", v.received);
    let speech = Family::<Vec<(&'static str, &'static str)>, Counter>::default();
    speech.get_or_create(&vec![("direction", "in")]).inc_by(v.speech_in);
    speech.get_or_create(&vec![("direction", "out")]).inc_by(v.speech_out);
    r.register(
        "speech",
        "Speech messages accepted (direction=in) and forwarded or bounced (direction=out)",
        speech,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::Snapshot;

    #[test]
    fn voice_metrics() {
        let s = Snapshot {
            voice: Some(VoiceView {
                session_type: "DVSESSIONTYPE_FORWARDING",
                codec: "DPVCTGUID_SC03",
                received: 9,
                speech_in: 5,
                speech_out: 10,
                clients_connected: 3,
                clients: vec![
                    VoiceClientView { dpnid: "0x00000011".into(), speech: 5, talking: true },
                    VoiceClientView { dpnid: "0x00000012".into(), speech: 0, talking: false },
                ],
            }),
            ..Snapshot::default()
        };
        let text = crate::metrics::render(&s).unwrap();
        for line in [
            "dplay_voice_clients 2",
            "dplay_voice_clients_talking 1",
            "dplay_voice_clients_connected_total 3",
            "dplay_voice_received_total 9",
            "dplay_voice_speech_total{direction=\"in\"} 5",
            "dplay_voice_speech_total{direction=\"out\"} 10",
        ] {
            assert!(text.lines().any(|l| l == line), "no `{line}` in\n{text}");
        }
    }
}
