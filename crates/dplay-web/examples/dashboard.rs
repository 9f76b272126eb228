//! A DirectPlay 8 host on 127.0.0.1 with its dashboard: the runtime drives an [`Observed`]
//! session that publishes through the link, the [`WebServer`] serves it on a free port. The
//! example reads `/api/session` the way a browser would, prints it and ends the session:
//! `cargo run -p dplay-web --example dashboard`.
#![allow(clippy::print_stdout, clippy::disallowed_methods)] // an example prints and has a clock

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use dplay_runtime::{Dp8Command, Dp8Protocol, Runtime, RuntimeConfig};
use dplay_session::SessionConfig;
use dplay_web::{Observed, WebServer};
use dplay_wire::dp8::enumeration::DXDIAG_APPLICATION_GUID;

/// `GET path` over plain HTTP/1.1; the response body.
fn get(addr: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (loop_side, server_side) = dplay_web::link();
    let start = Instant::now();
    let loopback = SocketAddr::from((Ipv4Addr::LOCALHOST, 0));
    let host = Runtime::spawn_with(RuntimeConfig::new(loopback), |local| {
        let mut config = SessionConfig::new(DXDIAG_APPLICATION_GUID, local, "host");
        config.session_name = "dashboard".into();
        Observed::new(Dp8Protocol::new(config, start), loop_side, start)
    })?;
    host.command(Dp8Command::Host)?;
    // The admin token guards the commands (a kick); reading needs none.
    let web = WebServer::start(loopback, server_side, dplay_web::random_token()?)?;
    println!("dashboard on http://{}/", web.local_addr());

    // The loop publishes a snapshot at most every PUBLISH_INTERVAL: wait until it shows the
    // session hosted.
    let deadline = Instant::now() + Duration::from_secs(10);
    let session = loop {
        let body = get(web.local_addr(), "/api/session")?;
        if body.contains("\"hosting\":true") {
            break body;
        }
        if Instant::now() > deadline {
            return Err(format!("the session never showed as hosted: {body}").into());
        }
        std::thread::sleep(dplay_web::PUBLISH_INTERVAL);
    };
    println!("/api/session: {session}");

    host.command(Dp8Command::Terminate)?;
    drop(web);
    while host.is_running() {
        if Instant::now() > deadline {
            return Err("the runtime did not stop".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    println!("session ended");
    Ok(())
}
