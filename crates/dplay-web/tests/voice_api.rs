//! DirectPlay Voice on the dashboard (issue 24): a DirectPlay 8 host running an echo voice
//! server and a joiner running the voice test, on loopback. `/api/session` says there is voice,
//! `/api/voice` shows the session type, the codec and the joiner talking while it sends and
//! not once it stops, and `/metrics` counts the clients and the speech.
#![allow(clippy::disallowed_methods)] // real sockets, real clock

mod common;

use std::net::SocketAddr;
use std::time::Instant;

use common::{json_until, metrics_until};
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig, VoiceEvent, VoiceRole};
use dplay_session::{Event, SessionConfig};
use dplay_testkit::wait::wait_for;
use dplay_voice::VoiceServerConfig;
use dplay_web::{Observed, WebServer};
use dplay_wire::voice::Codec;
use uuid::Uuid;

const APP: Uuid = Uuid::from_u128(0x1234_5678_9abc_def0_1234_5678_9abc_def1);
const LOOPBACK: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);
const TOKEN: &str = "voice-token";

#[test]
fn voice_session_talkers_and_metrics() {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let host: Runtime<Observed<Dp8Protocol>> = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        let mut p = Dp8Protocol::new(SessionConfig::new(APP, local, "host"), start);
        let cfg = VoiceServerConfig { codec: Codec::pcm(), ..VoiceServerConfig::echo() };
        assert!(p.set_voice(VoiceRole::Server(cfg)));
        Observed::new(p, loop_side, start)
    })
    .unwrap();
    let web = WebServer::start(LOOPBACK, server_side, TOKEN.into()).unwrap();
    let at = web.local_addr();
    host.command(Dp8Command::Host).unwrap();
    wait_for(host.events(), |e| matches!(e, Dp8Event::Session(Event::Joined { .. })).then_some(()));
    let token = Some(TOKEN);
    json_until(at, "/api/session", token, |s| s["voice"] == true);
    let idle = json_until(at, "/api/voice", token, |v| v["clients"].as_array().is_some_and(Vec::is_empty));
    assert_eq!(idle["session_type"], "DVSESSIONTYPE_ECHO");
    assert_eq!(idle["codec"], "DPVCTGUID_NONE");

    // 40 PCM frames of 50 ms: two seconds of speech, bounced back.
    let joiner = Runtime::spawn_with(RuntimeConfig::new(LOOPBACK), |local| {
        let mut p = Dp8Protocol::new(SessionConfig::new(APP, local, "talker"), Instant::now());
        p.set_voice(VoiceRole::Test { frames: 40 });
        p
    })
    .unwrap();
    joiner.command(Dp8Command::Join { host: host.local_addr(), instance: None }).unwrap();
    let talking = json_until(at, "/api/voice", token, |v| v["clients"][0]["talking"] == true);
    let dpnid = talking["clients"][0]["dpnid"].as_str().unwrap().to_owned();
    let players = json_until(at, "/api/players", token, |p| p.as_array().is_some_and(|l| l.len() == 2));
    assert!(players.as_array().unwrap().iter().any(|p| p["dpnid"] == dpnid.as_str()), "{players}");
    metrics_until(at, token, &["dplay_voice_clients 1", "dplay_voice_clients_talking 1"]);

    let done = wait_for(joiner.events(), |e| match e {
        Dp8Event::Voice(VoiceEvent::TestDone(r)) => Some(*r),
        _ => None,
    });
    assert_eq!(done.sent, 40);
    // Once the client stopped (and disconnected its voice): nobody talks, the counts stay.
    let after = json_until(at, "/api/voice", token, |v| {
        v["clients"].as_array().is_some_and(|c| c.iter().all(|c| c["talking"] == false))
    });
    assert_eq!(after["speech_in"], 40, "{after}");
    assert_eq!(after["speech_out"], 40, "{after}");
    metrics_until(
        at,
        token,
        &[
            "dplay_voice_clients_talking 0",
            "dplay_voice_clients_connected_total 1",
            "dplay_voice_speech_total{direction=\"in\"} 40",
            "dplay_voice_speech_total{direction=\"out\"} 40",
        ],
    );
}
