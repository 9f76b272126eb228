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
//! With `dp4`, it joins a DirectPlay 4 session instead (HOST:PORT is the host's TCP listener),
//! creates an application player and sends from it in DPSP_MSG_VOICE (MC-DPL4CS 2.2.54) to the
//! host's system player, the voice server (docs/decisions.md, "DirectPlay Voice").
//!
//! Usage: `voice_flood HOST:PORT BIND_ADDR:PORT unconnected|connected [dp4]`

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use dplay_runtime::{
    Dp4Binding, Dp4Command, Dp4Event, Dp4Protocol, Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig,
    VoiceEvent, VoiceRole,
};
use dplay_session::dp4::{Dp4Config, Dp4Event as Dp4SessionEvent};
use dplay_session::{Event, SessionConfig};
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

type Error = Box<dyn std::error::Error>;

/// What a flooder sends the voice server, through `send`; how many.
fn flood(connected: bool, mut send: impl FnMut(Vec<u8>) -> Result<(), Error>) -> Result<u32, Error> {
    let mut sent = 0u32;
    let mut send = |data| {
        sent += 1;
        send(data)
    };
    if connected {
        for seq in 0..20u8 {
            send(speech(seq, 2000))?;
            send(speech_with_targets(65))?;
        }
        for _ in 0..60 {
            for seq in 0..100u8 {
                send(speech(seq, 394))?;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    } else {
        for seq in 0..1000u32 {
            send(speech(seq.to_le_bytes()[0], 64))?;
        }
    }
    Ok(sent)
}

fn main() -> Result<(), Error> {
    let usage = "usage: voice_flood HOST:PORT BIND:PORT unconnected|connected [dp4]";
    let mut args = std::env::args().skip(1);
    let host: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let bind: SocketAddr = args.next().ok_or(usage)?.parse()?;
    let connected = match args.next().as_deref() {
        Some("connected") => true,
        Some("unconnected") => false,
        _ => return Err(usage.into()),
    };
    match args.next().as_deref() {
        Some("dp4") => dp4(host, bind, connected),
        None => dp8(host, bind, connected),
        Some(_) => Err(usage.into()),
    }
}

fn dp8(host: SocketAddr, bind: SocketAddr, connected: bool) -> Result<(), Error> {
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
    let sent = flood(connected, |data| Ok(runtime.command(Dp8Command::SendVoice { to, data })?))?;
    say(&format!(r#"{{"event":"sent","count":{sent}}}"#));
    // Stay in the session: the host must keep a client that sent bad speech (issue 24).
    for event in runtime.events() {
        if matches!(event, Dp8Event::Session(Event::SessionEnded { .. })) {
            break;
        }
    }
    Ok(())
}

fn dp4(host: SocketAddr, bind: SocketAddr, connected: bool) -> Result<(), Error> {
    let IpAddr::V4(ip) = bind.ip() else { return Err("DirectPlay 4 binds an IPv4 address".into()) };
    let runtime =
        Dp4Protocol::spawn_wrapped(&Dp4Binding::client(ip), Dp4Config::default(), None, |mut p| {
            if connected {
                // No frames of its own: it connects (once its player exists) and stays connected.
                p.set_voice(VoiceRole::Test { frames: 0 });
            }
            p
        })?;
    runtime.command(Dp4Command::Join { host, password: None })?;
    let mut server = None;
    for event in runtime.events() {
        match event {
            Dp4Event::Session(Dp4SessionEvent::Joined { .. }) => {
                runtime.command(Dp4Command::CreatePlayer("voice_flood".into()))?;
            }
            Dp4Event::PlayerList(players) => {
                server = players.iter().find(|p| p.is_host && p.system).map(|p| p.id);
            }
            Dp4Event::Session(Dp4SessionEvent::PlayerCreated { .. }) => {
                say(r#"{"event":"joined"}"#);
                if !connected {
                    break;
                }
            }
            Dp4Event::Voice(VoiceEvent::TestConnected { .. }) => {
                say(r#"{"event":"voice_connected"}"#);
                break;
            }
            Dp4Event::Session(Dp4SessionEvent::Ended(_)) => return Err("the session ended".into()),
            _ => {}
        }
    }
    let to = server.ok_or("no host in the Player List")?;
    let sent = flood(connected, |data| Ok(runtime.command(Dp4Command::SendVoice { to, data })?))?;
    say(&format!(r#"{{"event":"sent","count":{sent}}}"#));
    for event in runtime.events() {
        if matches!(event, Dp4Event::Session(Dp4SessionEvent::Ended(_))) {
            break;
        }
    }
    Ok(())
}
