//! A hostile DirectPlay Voice client for `cargo xtask hostile` (issue 24; MC-DPLVP 5.1): it
//! joins the session at HOST and sends the host speech it must drop.
//!
//! - `unconnected`: 1,000 DVMSGID_SPEECH without ever sending CONNECTREQUEST (speech before
//!   SETTINGSCONFIRM).
//! - `connected`: connects as a voice client (as `dplay join --voice-test` does), then sends 20
//!   SPEECH with a 2,000-byte frame (over the server's 1 KiB cap), 20 SPEECHWITHTARGET with 65
//!   targets (over the 64 of 2.2.2.6) and a flood of 6,000 PCM-sized SPEECH in 3 s (2,000 a
//!   second, fifty times an honest client's rate).
//!
//! It prints `{"event":"joined"}`, `{"event":"voice_connected"}` (connected only) and
//! `{"event":"sent","count":N}` once done, then stays in the session until killed.
//!
//! Usage: `voice_flood HOST:PORT BIND_ADDR:PORT unconnected|connected`

use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig, VoiceEvent, VoiceRole};
use dplay_session::{Event, SessionConfig};
use dplay_wire::dp8::dpnid::Dpnid;
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

/// DVMSGID_SPEECH (2.2.4.4): `MessageType`, `MessageNumber`, `SequenceNumber`, `SpeechData`.
fn speech(seq: u8, len: usize) -> Vec<u8> {
    let mut m = vec![0x55, 0, seq];
    m.resize(3 + len, 0x80);
    m
}

/// DVMSGID_SPEECHWITHTARGET (2.2.2.6) with `n` distinct targets, written by hand: the wire
/// crate refuses to emit more than 64.
fn speech_with_targets(n: u32) -> Vec<u8> {
    let mut m = vec![0x63, 0, 0];
    m.extend_from_slice(&n.to_le_bytes());
    (1..=n).for_each(|t| m.extend_from_slice(&t.to_le_bytes()));
    m.extend_from_slice(&[0x80; 32]);
    m
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: voice_flood HOST:PORT BIND:PORT unconnected|connected";
    let mut args = std::env::args().skip(1);
    let host: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let bind: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let connected = match args.next().as_deref() {
        Some("connected") => true,
        Some("unconnected") => false,
        _ => return Err(usage.into()),
    };
    #[allow(clippy::disallowed_methods)] // the program's start
    let start = Instant::now();
    let runtime = Runtime::spawn_with(RuntimeConfig::new(bind), |local| {
        let mut c = SessionConfig::new(DXDIAG_APPLICATION_GUID, local, "voice_flood");
        c.rng_seed = u64::from(std::process::id());
        let mut p = Dp8Protocol::new(c, start);
        if connected {
            // No frames of its own: it connects and stays connected.
            p.set_voice(VoiceRole::Test { frames: 0 });
        }
        p
    })?;
    runtime.command(Dp8Command::Join { host, instance: None })?;
    let mut server = None;
    let mut sent = 0u32;
    let mut send = |to: Dpnid, data: Vec<u8>| -> Result<(), Box<dyn std::error::Error>> {
        runtime.command(Dp8Command::SendVoice { to, data })?;
        sent += 1;
        Ok(())
    };
    for event in runtime.events() {
        match event {
            Dp8Event::NameTable(players) => {
                server = players.iter().find(|p| p.is_host).map(|p| p.dpnid);
                say(r#"{"event":"joined"}"#);
                if !connected {
                    break;
                }
            }
            Dp8Event::Voice(VoiceEvent::TestConnected { .. }) => {
                say(r#"{"event":"voice_connected"}"#);
                break;
            }
            Dp8Event::Session(Event::SessionEnded { .. }) => return Err("the session ended".into()),
            _ => {}
        }
    }
    let to = server.ok_or("no host in the name table")?;
    if connected {
        for seq in 0..20u8 {
            send(to, speech(seq, 2000))?;
            send(to, speech_with_targets(65))?;
        }
        for _ in 0..60 {
            for seq in 0..100u8 {
                send(to, speech(seq, 394))?;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    } else {
        for seq in 0..1000u32 {
            send(to, speech(seq.to_le_bytes()[0], 64))?;
        }
    }
    say(&format!(r#"{{"event":"sent","count":{sent}}}"#));
    // Stay in the session: the host must keep a client that sent bad speech (issue 24).
    for event in runtime.events() {
        if matches!(event, Dp8Event::Session(Event::SessionEnded { .. })) {
            break;
        }
    }
    Ok(())
}
