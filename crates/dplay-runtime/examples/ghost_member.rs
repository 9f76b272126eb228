//! A "ghost" DirectPlay 8 member for `cargo xtask hostile` (issue 14): it joins the session at
//! HOST and stays connected to the host, but every datagram to or from anyone else is dropped,
//! as for a member behind a strict NAT or one that ignores DN_INSTRUCT_CONNECT. It prints
//! `{"event":"joined"}` once in the session and `{"event":"session_ended"}` when out, and
//! runs until killed or until its session ends.
//!
//! Usage: `ghost_member HOST:PORT [BIND_ADDR:PORT]`

use std::io::Write;
use std::net::SocketAddr;
use std::time::Instant;

use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Protocol, Runtime, RuntimeConfig};
use dplay_session::{Event, SessionConfig};
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

/// A [`Dp8Protocol`] that talks to the host only.
struct Ghost {
    inner: Dp8Protocol,
    host: SocketAddr,
}

impl Protocol for Ghost {
    type Command = Dp8Command;
    type Event = Dp8Event;

    fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: &[u8]) {
        if from == self.host {
            self.inner.handle_datagram(now, from, data);
        }
    }

    fn handle_command(&mut self, now: Instant, command: Dp8Command) {
        self.inner.handle_command(now, command);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<SocketAddr> {
        let start = buf.len();
        loop {
            let to = self.inner.poll_transmit(now, buf)?;
            if to == self.host {
                return Some(to);
            }
            buf.truncate(start);
        }
    }

    fn poll_event(&mut self) -> Option<Dp8Event> {
        self.inner.poll_event()
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }

    fn is_finished(&self) -> bool {
        self.inner.is_finished()
    }
}

fn say(event: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{{\"event\":\"{event}\"}}");
    let _ = out.flush();
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let host: SocketAddr = args.next().ok_or("usage: ghost_member HOST:PORT [BIND:PORT]")?.parse()?;
    let bind: SocketAddr = args.next().as_deref().unwrap_or("127.0.0.1:0").parse()?;
    #[allow(clippy::disallowed_methods)] // the program's start
    let start = Instant::now();
    let runtime = Runtime::spawn_with(RuntimeConfig::new(bind), |local| {
        let mut c = SessionConfig::new(DXDIAG_APPLICATION_GUID, local, "ghost");
        c.rng_seed = u64::from(std::process::id());
        Ghost { inner: Dp8Protocol::new(c, start), host }
    })?;
    runtime.command(Dp8Command::Join { host, instance: None })?;
    for event in runtime.events() {
        match event {
            Dp8Event::Session(Event::Joined { .. }) => say("joined"),
            Dp8Event::Session(Event::SessionEnded { .. }) => {
                say("session_ended");
                break;
            }
            _ => {}
        }
    }
    Ok(())
}
