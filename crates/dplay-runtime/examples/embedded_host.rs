//! An application that hosts a DirectPlay 8 session on 127.0.0.1 without writing a loop of its
//! own: the [`Runtime`] thread drives the session, the application sends commands and receives
//! events on channels. A second runtime joins, says hello and leaves; the host answers and ends
//! the session: `cargo run -p dplay-runtime --example embedded_host`.
#![allow(clippy::print_stdout, clippy::disallowed_methods)] // an example prints and has a clock

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use crossbeam_channel::{after, never, select};
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol, Runtime, RuntimeConfig};
use dplay_session::{Event, SendFlags, SessionConfig};
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

/// A runtime on a free loopback port, driving one DirectPlay 8 session.
fn spawn(name: &str) -> Result<Runtime<Dp8Protocol>, dplay_runtime::RuntimeError> {
    let bind = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    Runtime::spawn_with(RuntimeConfig::new(bind), |local| {
        let mut config = SessionConfig::new(DXDIAG_APPLICATION_GUID, local, name);
        config.session_name = "embedded".into();
        Dp8Protocol::new(config, Instant::now())
    })
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let host = spawn("host")?;
    host.command(Dp8Command::Host)?;
    let guest = spawn("guest")?;
    guest.command(Dp8Command::Join { host: host.local_addr(), instance: None })?;

    let deadline = Instant::now() + Duration::from_secs(15);
    let timeout = after(Duration::from_secs(15));
    let (mut host_ended, mut guest_ended) = (false, false);
    // A runtime closes its channel once its loop ended: from then on, wait on `never` instead.
    let ended = never();
    // The application's own loop: whichever channel has something, host or guest.
    while !(host_ended && guest_ended) {
        select! {
            recv(if host_ended { &ended } else { host.events() }) -> event => match event? {
                Dp8Event::Session(Event::Message { from, data, .. }) => {
                    println!("host: {from} says {}", String::from_utf8_lossy(&data));
                    host.command(Dp8Command::SendTo { to: from, data: b"welcome".to_vec(), flags: SendFlags::RELIABLE })?;
                }
                Dp8Event::Session(Event::PlayerRemoved { dpnid, .. }) => {
                    println!("host: {dpnid} left; ending the session");
                    host.command(Dp8Command::Terminate)?;
                }
                Dp8Event::Session(Event::SessionEnded { reason }) => {
                    println!("host: session ended ({reason})");
                    host_ended = true;
                }
                Dp8Event::CommandFailed { command, error } => println!("host: {command} failed: {error}"),
                _ => {}
            },
            recv(if guest_ended { &ended } else { guest.events() }) -> event => match event? {
                Dp8Event::Session(Event::Joined { local, .. }) => {
                    println!("guest: joined as {local}");
                    guest.command(Dp8Command::SendAll { data: b"hello".to_vec(), flags: SendFlags::RELIABLE })?;
                }
                Dp8Event::Session(Event::Message { data, .. }) => {
                    println!("guest: host says {}", String::from_utf8_lossy(&data));
                    guest.command(Dp8Command::Leave)?;
                }
                Dp8Event::Session(Event::SessionEnded { reason }) => {
                    println!("guest: session ended ({reason})");
                    guest_ended = true;
                }
                _ => {}
            },
            recv(timeout) -> _ => return Err("timed out".into()),
        }
    }
    // Each network thread ends by itself once its connections closed gracefully (soon after a
    // leave); `shutdown` before that would cut the closes short.
    while host.is_running() || guest.is_running() {
        if Instant::now() > deadline {
            return Err("the runtimes did not stop".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    host.shutdown()?;
    guest.shutdown()?;
    println!("both runtimes stopped");
    Ok(())
}
