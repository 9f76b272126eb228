//! Two transport endpoints over std `UdpSocket`s on 127.0.0.1: a connects, sends three reliable
//! sequential messages and a 5000-byte one (split into frames and reassembled), and once b has
//! them all closes gracefully: `cargo run -p dplay-dframe --example udp_pair`.
#![allow(clippy::print_stdout, clippy::disallowed_methods)] // an example prints and has a clock

use std::net::UdpSocket;
use std::time::{Duration, Instant};

use dplay_dframe::{Config, Endpoint, Event, MessageKind};

/// One endpoint and its socket.
struct Side {
    socket: UdpSocket,
    endpoint: Endpoint,
}

impl Side {
    fn new() -> std::io::Result<Self> {
        let socket = UdpSocket::bind("127.0.0.1:0")?;
        socket.set_nonblocking(true)?;
        Ok(Self { endpoint: Endpoint::new(Config::default(), Instant::now()), socket })
    }

    /// One turn: datagrams in, due timers, datagrams out; returns the events.
    fn drive(&mut self) -> std::io::Result<Vec<Event>> {
        let mut buf = [0; 1500];
        while let Ok((len, from)) = self.socket.recv_from(&mut buf) {
            self.endpoint.handle_datagram(Instant::now(), from, buf.get(..len).unwrap_or_default());
        }
        if self.endpoint.poll_timeout().is_some_and(|t| t <= Instant::now()) {
            self.endpoint.handle_timeout(Instant::now());
        }
        while let Some(t) = self.endpoint.poll_transmit() {
            self.socket.send_to(&t.contents, t.destination)?;
        }
        Ok(std::iter::from_fn(|| self.endpoint.poll_event()).collect())
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut a, mut b) = (Side::new()?, Side::new()?);
    let b_addr = b.socket.local_addr()?;
    a.endpoint.connect(Instant::now(), b_addr)?;
    // Messages may be queued during the handshake; they go out once it completes.
    for text in ["one", "two", "three"] {
        a.endpoint.send(Instant::now(), b_addr, text.as_bytes(), MessageKind::RELIABLE_SEQUENTIAL)?;
    }
    a.endpoint.send(Instant::now(), b_addr, &[7; 5000], MessageKind::RELIABLE)?;
    let (mut received, mut closed) = (0, 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while closed < 2 {
        if Instant::now() > deadline {
            return Err("timed out".into());
        }
        for (who, event) in
            a.drive()?.into_iter().map(|e| ("a", e)).chain(b.drive()?.into_iter().map(|e| ("b", e)))
        {
            match event {
                Event::Connected { peer, .. } => println!("{who}: connected to {peer}"),
                Event::Message { data, .. } => {
                    received += 1;
                    if received == 4 {
                        // END_STREAM, after anything still queued; b answers with its own.
                        a.endpoint.disconnect(Instant::now(), b_addr);
                    }
                    match std::str::from_utf8(&data) {
                        Ok(text) if data.len() < 16 => println!("{who}: received \"{text}\""),
                        _ => println!("{who}: received {} bytes", data.len()),
                    }
                }
                Event::Disconnected { peer, reason, .. } => {
                    closed += 1;
                    println!("{who}: {peer} {reason}");
                }
                _ => {}
            }
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if received != 4 {
        return Err(format!("{received} messages arrived, 4 expected").into());
    }
    Ok(())
}
