//! A DirectPlay 8 host and a joiner over std `UdpSocket`s on 127.0.0.1, the poll loop spelled
//! out: `cargo run -p dplay-session --example host_and_join`. Given an address
//! (`-- 127.0.0.1:6073`), it only joins the host already there, such as `dplay host`.
#![allow(clippy::print_stdout, clippy::disallowed_methods)] // an example prints and has a clock

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use dplay_session::{Event, SendFlags, Session, SessionConfig};
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

/// One participant: its socket and its sans-IO session.
struct Peer {
    socket: UdpSocket,
    session: Session,
}

impl Peer {
    fn new(name: &str) -> std::io::Result<Self> {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_nonblocking(true)?;
        let config = SessionConfig::new(DXDIAG_APPLICATION_GUID, socket.local_addr()?, name);
        Ok(Self { session: Session::new(config, Instant::now()), socket })
    }

    /// One turn of the loop: datagrams in, due timers, datagrams out; returns the events.
    fn drive(&mut self) -> std::io::Result<Vec<Event>> {
        let mut buf = [0; 1500];
        while let Ok((len, from)) = self.socket.recv_from(&mut buf) {
            self.session.handle_datagram(Instant::now(), from, buf.get(..len).unwrap_or_default());
        }
        if self.session.poll_timeout().is_some_and(|t| t <= Instant::now()) {
            self.session.handle_timeout(Instant::now());
        }
        while let Some(t) = self.session.poll_transmit() {
            self.socket.send_to(&t.contents, t.destination)?;
        }
        Ok(std::iter::from_fn(|| self.session.poll_event()).collect())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let target: Option<SocketAddr> = std::env::args().nth(1).map(|a| a.parse()).transpose()?;
    let mut host = if target.is_none() { Some(Peer::new("host")?) } else { None };
    let host_addr = match (host.as_mut(), target) {
        (Some(h), _) => {
            h.session.host(Instant::now())?;
            h.socket.local_addr()?
        }
        (None, target) => target.ok_or("no host address")?,
    };
    let mut joiner = Peer::new("alice")?;
    joiner.session.join(Instant::now(), host_addr, None)?;
    let deadline = Instant::now() + Duration::from_secs(15);
    let (mut host_saw_leave, mut left_at) = (host.is_none(), Instant::now());
    // Drive both until alice has left and her connections closed (a few round trips after
    // `leave`), and the host has seen her go.
    while !(joiner.session.is_finished() && host_saw_leave) {
        if Instant::now() > deadline {
            return Err("timed out".into());
        }
        for event in host.as_mut().map(Peer::drive).transpose()?.unwrap_or_default() {
            print_event("host", &event);
            host_saw_leave |= matches!(event, Event::PlayerRemoved { .. });
        }
        for event in joiner.drive()? {
            print_event("alice", &event);
            if let Event::Joined { .. } = event {
                joiner.session.send_all(Instant::now(), b"hello", SendFlags::RELIABLE)?;
                joiner.session.leave(Instant::now()); // END_STREAM goes after "hello"
                left_at = Instant::now();
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    println!("alice: every connection closed {:.3} s after leave()", left_at.elapsed().as_secs_f64());
    Ok(())
}

fn print_event(who: &str, event: &Event) {
    match event {
        Event::Joined { local, host, .. } => println!("{who}: in the session as {local}, host {host}"),
        Event::PlayerAdded { dpnid, name } => println!("{who}: {name} ({dpnid}) joined"),
        Event::PlayerRemoved { dpnid, .. } => println!("{who}: {dpnid} left"),
        Event::Message { from, data, .. } => println!("{who}: {from} says {}", String::from_utf8_lossy(data)),
        Event::SessionEnded { reason } => println!("{who}: session ended: {reason}"),
        _ => {}
    }
}
