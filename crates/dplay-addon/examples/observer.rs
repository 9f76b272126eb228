//! A Flight Simulator session over DirectPlay 8 on 127.0.0.1: a host, a player flying north and
//! an observer that prints the aircraft it sees, each on its own std `UdpSocket`:
//! `cargo run -p dplay-addon --example observer`.
#![allow(clippy::print_stdout, clippy::disallowed_methods)] // an example prints and has a clock

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use dplay_addon::{
    AddonOverDp8, Client, ClientConfig, Dialect, Event, HostConfig, HostPolicy, OverDp8Event, Position, Role,
};
use dplay_session::{Session, SessionConfig};
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

/// One participant: its socket and its sans-IO add-on over a session.
struct Node {
    socket: UdpSocket,
    addon: AddonOverDp8,
}

impl Node {
    fn new(name: &str, make: impl FnOnce(Session) -> AddonOverDp8) -> std::io::Result<Self> {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_nonblocking(true)?;
        let config = SessionConfig::new(DXDIAG_APPLICATION_GUID, socket.local_addr()?, name);
        Ok(Self { addon: make(Session::new(config, Instant::now())), socket })
    }

    /// One turn: datagrams in, due timers, datagrams out; returns the events.
    fn drive(&mut self) -> std::io::Result<Vec<OverDp8Event>> {
        let mut buf = [0; 1500];
        while let Ok((len, from)) = self.socket.recv_from(&mut buf) {
            self.addon.handle_datagram(Instant::now(), from, buf.get(..len).unwrap_or_default());
        }
        if self.addon.poll_timeout().is_some_and(|t| t <= Instant::now()) {
            self.addon.handle_timeout(Instant::now());
        }
        while let Some(t) = self.addon.poll_transmit() {
            self.socket.send_to(&t.contents, t.destination)?;
        }
        Ok(std::iter::from_fn(|| self.addon.poll_event()).collect())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let policy = HostPolicy::default();
    let mut host =
        Node::new("host", |s| AddonOverDp8::host(s, HostConfig::new(Dialect::Fs98, Role::Observer, policy)))?;
    host.addon.host_session(Instant::now())?;
    let host_addr = host.socket.local_addr()?;
    let mut pilot =
        Node::new("pilot", |s| AddonOverDp8::client(s, Client::new(ClientConfig::new(Role::Player))))?;
    let mut tower =
        Node::new("tower", |s| AddonOverDp8::client(s, Client::new(ClientConfig::new(Role::Observer))))?;
    pilot.addon.join(Instant::now(), host_addr, None)?;
    tower.addon.join(Instant::now(), host_addr, None)?;

    let start = Instant::now();
    let mut seen = 0;
    // The observer leaves after five positions; the example ends once its connections closed.
    while !tower.addon.session().is_finished() {
        if start.elapsed() > Duration::from_secs(20) {
            return Err("timed out".into());
        }
        // The pilot flies north at about 100 m/s; it sends its position four times a second.
        let latitude_deg = 47.0 + start.elapsed().as_secs_f64() * 0.001;
        let position =
            Position { latitude_deg, longitude_deg: -122.3, altitude_m: 1000.0, ..Position::default() };
        pilot.addon.with_client(Instant::now(), |c, now| {
            c.set_position(now, position, None);
            Ok(())
        });
        host.drive()?;
        pilot.drive()?;
        for event in tower.drive()? {
            let OverDp8Event::Addon(Event::PositionUpdated { id }) = event else { continue };
            let Some(fix) = tower.addon.tracker().and_then(|t| t.get(id)).and_then(|r| r.fix) else {
                continue;
            };
            let p = fix.position;
            println!(
                "tower: aircraft {:#010X} at {:.5}°N {:.5}°E, {:.0} m",
                id.0, p.latitude_deg, p.longitude_deg, p.altitude_m
            );
            seen += 1;
            if seen == 5 {
                tower.addon.with_client(Instant::now(), |c, now| {
                    c.leave(now);
                    Ok(())
                });
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("tower: left after {seen} positions");
    Ok(())
}
