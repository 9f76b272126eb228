//! DirectPlay Voice in the command: `dplay host --voice forwarding|echo [--voice-codec NAME]`
//! and `dplay join --voice-test`, and how voice events print (docs/json-events.md, "Voice").

use clap::{Args, ValueEnum};
use dplay_runtime::{VoiceEvent, VoiceRole};
use dplay_voice::{ServerEvent, VoiceServerConfig};
use dplay_wire::voice::{Codec, VoiceSessionType};
use serde::Serialize;

use crate::live::Output;

/// The voice session types this host serves (MC-DPLVP 1.3.5, 1.3.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum VoiceType {
    /// The server forwards each client's speech to its targets (SPEECHWITHFROM).
    Forwarding,
    /// The server sends each client's speech back to it (SPEECHBOUNCE).
    Echo,
}

/// `dplay host` voice options.
#[derive(Args, Debug, Clone)]
pub(crate) struct VoiceArgs {
    /// Be the session's DirectPlay Voice server (MC-DPLVP): forwarding or echo. No codec is
    /// needed: speech bytes are passed on as they came.
    #[arg(long, value_enum, value_name = "TYPE")]
    pub(crate) voice: Option<VoiceType>,
    /// The codec the voice server announces (ADPCM, GSM, NONE, SC03, SC06, TRUESPEECH, VR12).
    #[arg(long, value_name = "NAME", default_value = "SC03", value_parser = parse_codec, requires = "voice")]
    pub(crate) voice_codec: &'static Codec,
    /// Set DVSESSION_SERVERCONTROLTARGET in CONNECTACCEPT (the server owns the clients'
    /// targets).
    #[arg(long, requires = "voice")]
    pub(crate) voice_server_targets: bool,
}

fn parse_codec(name: &str) -> Result<&'static Codec, String> {
    Codec::by_name(name).ok_or_else(|| {
        let names: Vec<_> = dplay_wire::voice::CODECS.iter().map(|c| c.name).collect();
        format!("unknown codec {name:?}: one of {}", names.join(", "))
    })
}

impl VoiceArgs {
    /// The server's role, when `--voice` is given.
    pub(crate) fn role(&self) -> Option<VoiceRole> {
        let session_type = match self.voice? {
            VoiceType::Forwarding => VoiceSessionType::DVSESSIONTYPE_FORWARDING,
            VoiceType::Echo => VoiceSessionType::DVSESSIONTYPE_ECHO,
        };
        Some(VoiceRole::Server(VoiceServerConfig {
            session_type,
            codec: self.voice_codec,
            server_control_target: self.voice_server_targets,
        }))
    }
}

/// The voice events of `--json` (docs/json-events.md).
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[allow(clippy::enum_variant_names)] // the names are the events' (`voice_client_connected`, ...)
enum VoiceJson<'a> {
    VoiceServer {
        session_type: &'a str,
        codec: &'a str,
        server_control_target: bool,
    },
    VoiceClientConnected {
        player: String,
        half_duplex: bool,
    },
    VoiceClientGone {
        player: String,
        reason: &'a str,
        speech: u64,
    },
    VoiceTestConnected {
        session_type: &'a str,
        codec: &'a str,
    },
    VoiceTestFailed {
        error: &'a str,
    },
    VoiceTestDone {
        sent: u64,
        received: u64,
        rtt_min_ms: Option<f64>,
        rtt_mean_ms: Option<f64>,
        rtt_max_ms: Option<f64>,
    },
    VoiceSpeech {
        player: String,
        speech: u64,
    },
}

fn ms(d: Option<std::time::Duration>) -> Option<f64> {
    d.map(|d| (d.as_secs_f64() * 1e6).round() / 1e3)
}

/// Says which voice server runs, if any.
pub(crate) fn announce(out: &Output, args: &VoiceArgs) {
    let Some(VoiceRole::Server(cfg)) = args.role() else { return };
    let session_type = cfg.session_type.name().unwrap_or("DVSESSIONTYPE_UNKNOWN");
    let codec = cfg.codec.constant;
    out.event(
        &VoiceJson::VoiceServer { session_type, codec, server_control_target: cfg.server_control_target },
        format!("voice server: {session_type} announcing {codec}"),
    );
}

/// Prints one voice event.
pub(crate) fn print(out: &Output, event: &VoiceEvent) {
    match event {
        VoiceEvent::Server(ServerEvent::ClientConnected { dvid, half_duplex }) => out.event(
            &VoiceJson::VoiceClientConnected { player: dvid.to_string(), half_duplex: *half_duplex },
            format!("voice client {dvid} connected{}", if *half_duplex { " (listens only)" } else { "" }),
        ),
        VoiceEvent::Server(ServerEvent::ClientGone { dvid, reason, speech }) => out.event(
            &VoiceJson::VoiceClientGone { player: dvid.to_string(), reason: reason.name(), speech: *speech },
            format!("voice client {dvid} gone: {} ({speech} speech frames)", reason.name()),
        ),
        VoiceEvent::TestConnected { session_type, codec } => out.event(
            &VoiceJson::VoiceTestConnected { session_type, codec },
            format!("voice: connected, {session_type} with {codec}"),
        ),
        VoiceEvent::TestFailed(error) => {
            out.event(&VoiceJson::VoiceTestFailed { error }, format!("voice test failed: {error}"))
        }
        VoiceEvent::TestDone(r) => {
            let text = match (r.min, r.mean(), r.max) {
                (Some(min), Some(mean), Some(max)) => format!(
                    "voice test: {} of {} frames came back, round trip {:.1}/{:.1}/{:.1} ms (min/mean/max)",
                    r.received,
                    r.sent,
                    min.as_secs_f64() * 1e3,
                    mean.as_secs_f64() * 1e3,
                    max.as_secs_f64() * 1e3
                ),
                _ => format!("voice test: {} of {} frames came back", r.received, r.sent),
            };
            let json = VoiceJson::VoiceTestDone {
                sent: r.sent,
                received: r.received,
                rtt_min_ms: ms(r.min),
                rtt_mean_ms: ms(r.mean()),
                rtt_max_ms: ms(r.max),
            };
            out.event(&json, text);
        }
        VoiceEvent::Speech(talkers) => {
            for (dvid, speech) in talkers {
                out.event(
                    &VoiceJson::VoiceSpeech { player: dvid.to_string(), speech: *speech },
                    format!("voice: {dvid} sent {speech} speech frames"),
                );
            }
        }
        _ => {}
    }
}
