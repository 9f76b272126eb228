//! Hostile cases against a DirectPlay 4 host (issue 14): stalled and partial TCP connections
//! (slowloris), header addresses naming a third party, oversize names. Each is bounded in
//! connections, datagrams and time, reads the host's peak RSS from /proc, and has a real
//! `dplay join --dp4` succeed during and after.
//!
//! The third parties are listeners this case opens itself on 127.0.0.3 and 127.0.0.4; flood
//! sources are addresses of 127.0.0.0/8 (all loopback on Linux). Inside the private network
//! namespace nothing else listens there.
// serde_json's `value["key"]` gives Null for a missing key; it never panics.
#![allow(clippy::indexing_slicing)]

use std::io::{ErrorKind, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::Value;

use crate::integration::dp4::{free_udp_port, host};
use crate::integration::{Case, Proc, Suite, WAIT, event_with};

/// Every DirectPlay 4 case, in order.
pub(super) const CASES: &[(&str, Case)] = &[
    ("DirectPlay 4: slowloris on TCP (stalled connections, partial messages)", slowloris),
    ("DirectPlay 4: header addresses naming a third party (REQUESTPLAYERID, ENUMSESSIONS)", spoofed_headers),
    ("DirectPlay 4: oversize player names", oversize_names),
    ("DirectPlay 4: partial messages against the memory budget; stats on SIGUSR1", memory_budget),
];

/// Stalled connections: this many sources (127.0.1.x) ...
const STALLED_SOURCES: u8 = 80;
/// ... each trying this many: 1,600 in all, more than the host's 1,024 and 4 over the per-source
/// cap of each.
const STALLED_PER_SOURCE: usize = 20;
/// Connections that each announce a message of 0xFFFFF bytes and send ...
const PARTIAL_CONNECTIONS: u8 = 128;
/// ... this much of it.
const PARTIAL_BYTES: usize = 1_000_000;
/// The host's peak RSS must stay under this during the flood.
const RSS_LIMIT_KIB: u64 = 64 << 10;
/// Budget case: this many sources (127.0.4.x) of 15 connections each (under the per-source
/// cap of 16) ...
const BUDGET_SOURCES: u8 = 40;
/// ... each sending this much of a message announced as [`BUDGET_ANNOUNCED`] bytes (under the
/// 64 KiB allowed a connection of no known instance): 36 MB in all.
const BUDGET_PARTIAL: usize = 60_000;
const BUDGET_ANNOUNCED: u32 = 65_000;
/// The budget the second host runs with, in MiB.
const BUDGET_MIB: u64 = 8;

/// A DirectPlay 4 system message: size and token 0xFAB, SockAddr naming `ip:port`, 'play',
/// `command`, dialect 14, then `body` (MC-DPL4CS 2.2.6).
fn message(ip: Ipv4Addr, port: u16, command: u16, body: &[u8]) -> Vec<u8> {
    let size = u32::try_from(28 + body.len()).unwrap_or(0);
    let mut m = (size | 0xFAB << 20).to_le_bytes().to_vec();
    m.extend_from_slice(&[2, 0]);
    m.extend_from_slice(&port.to_be_bytes());
    m.extend_from_slice(&ip.octets());
    m.extend_from_slice(&[0; 8]);
    m.extend_from_slice(b"play");
    m.extend_from_slice(&command.to_le_bytes());
    m.extend_from_slice(&14u16.to_le_bytes());
    m.extend_from_slice(body);
    m
}

/// DPSP_MSG_REQUESTPLAYERID with SP and PL, as Windows sends it (MC-DPL4CS 2.2.49).
fn request_player_id(ip: Ipv4Addr, port: u16) -> Vec<u8> {
    message(ip, port, 0x05, &9u32.to_le_bytes())
}

/// DPSP_MSG_ENUMSESSIONS for any application, all sessions (MC-DPL4CS 2.2.29).
fn enum_sessions(ip: Ipv4Addr, port: u16) -> Vec<u8> {
    let mut body = vec![0; 16];
    body.extend_from_slice(&0u32.to_le_bytes());
    body.extend_from_slice(&2u32.to_le_bytes());
    message(ip, port, 0x02, &body)
}

/// A TCP connection to `to` from `source` (port chosen by the system).
fn connect_from(source: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.bind(&SocketAddr::from((source, 0)).into())?;
    s.connect_timeout(&to.into(), Duration::from_secs(1))?;
    Ok(s.into())
}

/// The host's peak resident set (VmHWM), in KiB.
fn peak_rss_kib(p: &Proc) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{}/status", p.pid()))?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).context("no VmHWM")?;
    line.split_whitespace().nth(1).and_then(|n| n.parse().ok()).context("bad VmHWM")
}

/// Starts `dplay join --dp4 tcp` as `name`; [`joined`] checks it got in.
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn start_join(s: &Suite, tcp: &str, name: &str) -> anyhow::Result<(Proc, Instant)> {
    let args = ["join", "--dp4", tcp, "--json", "--name", name, "--duration", "1", "--timeout", "10"];
    Ok((s.start(name, &args)?, Instant::now()))
}

/// The join started by [`start_join`] got in (the host reports it) and exited 0; how long the
/// host took to report it.
fn joined(s: &Suite, host: &Proc, (mut p, started): (Proc, Instant)) -> anyhow::Result<Duration> {
    let name = p.name().to_owned();
    s.expect(host, &format!("{name} joining"), WAIT, event_with("player_joined", "name", &name))?;
    let took = started.elapsed();
    ensure!(s.exit_code(&mut p, WAIT)? == Some(0), "{name}: join --dp4 did not exit 0");
    Ok(took)
}

/// `dplay join --dp4 tcp` as `name`, which must get in and exit 0.
fn join_succeeds(s: &Suite, host: &Proc, tcp: &str, name: &str) -> anyhow::Result<Duration> {
    joined(s, host, start_join(s, tcp, name)?)
}

/// The host's total of drops or refusals for `reason`, as its last `dropped` event says.
fn total(host: &Proc, reason: &str) -> u64 {
    host.events(|v| v["event"] == "dropped" && v["reason"] == reason)
        .last()
        .and_then(|v| v["total"].as_u64())
        .unwrap_or(0)
}

/// Issue 14, item 2 and 4: 128 connections each holding 1,000,000 bytes of a message announced
/// as 0xFFFFF bytes, then 1,600 stalled connections from 80 sources, kept open while new
/// stalled ones keep coming. A join must succeed during the flood and after it, and the host's
/// peak RSS stay under 64 MiB.
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn slowloris(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_udp_port()?;
    let (host, tcp) = host(s, &enum_port, &[])?;
    let to: SocketAddr = tcp.parse()?;
    let rss_before = peak_rss_kib(&host)?;
    let mut held = Vec::new();
    let mut header = (0xF_FFFFu32 | 0xFAB << 20).to_le_bytes().to_vec();
    header.resize(PARTIAL_BYTES, 0x55);
    for i in 0..PARTIAL_CONNECTIONS {
        let Ok(mut c) = connect_from(Ipv4Addr::new(127, 0, 2, i + 1), to) else { continue };
        c.set_write_timeout(Some(Duration::from_millis(500)))?;
        // The host may close it after the first bytes: a failed write is the fix working.
        let _ = c.write_all(&header);
        held.push(c);
    }
    let mut refused = 0;
    for i in 0..STALLED_SOURCES {
        for _ in 0..STALLED_PER_SOURCE {
            match connect_from(Ipv4Addr::new(127, 0, 1, i + 1), to) {
                Ok(c) => held.push(c),
                Err(_) => refused += 1,
            }
        }
    }
    println!("    flood: {} connections open, {refused} connects failed", held.len());
    // New stalled connections keep coming, 50 a second, while the join runs.
    let stop = Arc::new(AtomicBool::new(false));
    let trickle = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut conns = Vec::new();
            let mut i = 0u8;
            while !stop.load(Ordering::Relaxed) && conns.len() < 500 {
                i = i.wrapping_add(1);
                if let Ok(c) = connect_from(Ipv4Addr::new(127, 0, 3, i.max(1)), to) {
                    conns.push(c);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            conns.len()
        })
    };
    let during = join_succeeds(s, &host, &tcp, "during");
    stop.store(true, Ordering::Relaxed);
    let trickled = trickle.join().unwrap_or(0);
    let rss_flood = peak_rss_kib(&host)?;
    println!(
        "    join during the flood: {}; host peak RSS {rss_before} KiB before, {rss_flood} KiB under the flood; {trickled} more connections during the join",
        match &during {
            Ok(t) => format!("in {:.2} s", t.as_secs_f64()),
            Err(e) => format!("FAILED ({e:#})"),
        }
    );
    drop(held);
    let after = join_succeeds(s, &host, &tcp, "after")?;
    std::thread::sleep(Duration::from_millis(1500));
    let reasons =
        ["tcp-per-source-cap", "tcp-evicted", "tcp-rejected", "tcp-first-message-timeout", "tcp-full"];
    let counts: Vec<String> = reasons.iter().map(|r| format!("{r} {}", total(&host, r))).collect();
    println!("    join after: in {:.2} s; host counted {}", after.as_secs_f64(), counts.join(", "));
    during?;
    ensure!(rss_flood < RSS_LIMIT_KIB, "the host's peak RSS reached {rss_flood} KiB under the flood");
    ensure!(total(&host, "tcp-per-source-cap") > 0, "no connection was refused by the per-source cap");
    Ok(())
}

/// Counts TCP connections accepted on `ip:port` until `stop`, closing each at once.
fn detector(ip: Ipv4Addr, port: u16, stop: &Arc<AtomicBool>) -> anyhow::Result<Arc<AtomicUsize>> {
    let listener = TcpListener::bind((ip, port)).with_context(|| format!("cannot listen on {ip}:{port}"))?;
    listener.set_nonblocking(true)?;
    let count = Arc::new(AtomicUsize::new(0));
    let (c, stop) = (Arc::clone(&count), Arc::clone(stop));
    std::thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok(_) => {
                    c.fetch_add(1, Ordering::Relaxed);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(5)),
                Err(_) => {}
            }
        }
    });
    Ok(count)
}

/// Issue 14, item 3: a REQUESTPLAYERID sent from 127.0.0.1 whose header names 127.0.0.3 must
/// be answered at 127.0.0.1, never 127.0.0.3; 500 ENUMSESSIONS with the (forged) source
/// 127.0.0.3 and a header naming 127.0.0.4, over a second, must bring at most a few connects to
/// 127.0.0.3 and none to 127.0.0.4. Joins during and after succeed.
fn spoofed_headers(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_udp_port()?;
    let (host, tcp) = host(s, &enum_port, &[])?;
    let to: SocketAddr = tcp.parse()?;
    let port = TcpListener::bind("127.0.0.3:0")?.local_addr()?.port();
    let stop = Arc::new(AtomicBool::new(false));
    let [sender, victim, other] = [[127, 0, 0, 1], [127, 0, 0, 3], [127, 0, 0, 4]].map(Ipv4Addr::from);
    let at_sender = detector(sender, port, &stop)?;
    let at_victim = detector(victim, port, &stop)?;
    let at_other = detector(other, port, &stop)?;

    let mut c = TcpStream::connect(to)?;
    c.write_all(&request_player_id(victim, port))?;
    std::thread::sleep(Duration::from_secs(1));
    let (rpi_victim, rpi_sender) = (at_victim.load(Ordering::Relaxed), at_sender.load(Ordering::Relaxed));
    println!(
        "    REQUESTPLAYERID naming {victim}: {rpi_victim} connects to {victim}, {rpi_sender} to the sender"
    );

    let udp = UdpSocket::bind((victim, 0))?;
    let enum_to = SocketAddr::from((sender, enum_port.parse::<u16>()?));
    let spoofed = 500;
    let during = start_join(s, &tcp, "during")?;
    // Spread over a second, so each reply finds the last connection closed.
    for _ in 0..spoofed {
        udp.send_to(&enum_sessions(other, port), enum_to)?;
        std::thread::sleep(Duration::from_millis(2));
    }
    let during = joined(s, &host, during)?;
    std::thread::sleep(Duration::from_secs(1));
    stop.store(true, Ordering::Relaxed);
    let enum_victim = at_victim.load(Ordering::Relaxed) - rpi_victim;
    let enum_other = at_other.load(Ordering::Relaxed);
    println!(
        "    {spoofed} ENUMSESSIONS from {victim} naming {other}: {enum_victim} connects to {victim} ({:.3} per message), {enum_other} to {other}; host counted {} rate limited; join during in {:.2} s; host peak RSS {} KiB",
        enum_victim as f64 / f64::from(spoofed),
        total(&host, "rate-limited"),
        during.as_secs_f64(),
        peak_rss_kib(&host)?
    );
    ensure!(rpi_victim == 0, "the host connected to the address a header named ({rpi_victim} times)");
    ensure!(rpi_sender >= 1, "the host did not answer the REQUESTPLAYERID at the sender's address");
    ensure!(enum_other == 0, "the host connected to {other}, named only in headers");
    ensure!(enum_victim <= 12, "{enum_victim} connects for {spoofed} forged ENUMSESSIONS");
    join_succeeds(s, &host, &tcp, "after")?;
    Ok(())
}

/// Issue 14, item 5: a joiner whose own limit allows it creates a player with a 60,000-unit
/// name; the host refuses it (counted as too-long) and never reports it; joins during and after
/// succeed.
fn oversize_names(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_udp_port()?;
    let (host, tcp) = host(s, &enum_port, &[])?;
    let long = "n".repeat(60_000);
    let args = ["join", "--dp4", &tcp, "--json", "--name", &long, "--max-name", "100000", "--duration", "2"];
    let mut big = s.start("long name", &args)?;
    let during = start_join(s, &tcp, "during")?;
    s.expect(&big, "its player created", WAIT, |v: &Value| v["event"] == "player_created")?;
    let _ = s.exit_code(&mut big, WAIT);
    joined(s, &host, during)?;
    std::thread::sleep(Duration::from_millis(1500));
    let accepted = host.events(|v| v["event"] == "player_joined" && v["name"] == long.as_str()).len();
    let refused = total(&host, "too-long");
    println!(
        "    a 60,000-unit name: {accepted} accepted, {refused} refused; host peak RSS {} KiB",
        peak_rss_kib(&host)?
    );
    ensure!(accepted == 0, "the host accepted a player with a 60,000-unit name");
    ensure!(refused >= 1, "the host did not count the refusal");
    join_succeeds(s, &host, &tcp, "after")?;
    Ok(())
}

/// Issue 14, the memory budget: 600 connections from 40 sources each hold 60,000 bytes of a
/// message announced as 65,000 (36 MB, every connection within its own limits). Against a host
/// with the default budget (256 MiB) all of it is held; against one with `--memory-budget 8MiB`
/// the connections past the budget are closed (`over-budget`) and the host's peak RSS stays
/// under its baseline plus the budget plus 16 MiB (read buffers, connection records). SIGUSR1
/// makes that host print its `refusals` and `memory` events; a join succeeds after the
/// flood.
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn memory_budget(s: &Suite) -> anyhow::Result<()> {
    let unlimited = budget_flood(s, &[])?;
    println!(
        "    default budget: host peak RSS {} KiB before, {} KiB under the flood",
        unlimited.before, unlimited.flood
    );
    let budget = format!("{BUDGET_MIB}MiB");
    let limited = budget_flood(s, &["--memory-budget", &budget])?;
    println!(
        "    --memory-budget {budget}: host peak RSS {} KiB before, {} KiB under the flood; {} connections closed over-budget; SIGUSR1: {}",
        limited.before, limited.flood, limited.over_budget, limited.memory
    );
    ensure!(limited.over_budget > 0, "no connection was closed over the budget");
    let ceiling = limited.before + (BUDGET_MIB << 10) + (16 << 10);
    ensure!(limited.flood < ceiling, "peak RSS {} KiB, over {ceiling} KiB", limited.flood);
    Ok(())
}

/// What one run of [`budget_flood`] measured.
struct BudgetRun {
    before: u64,
    flood: u64,
    over_budget: u64,
    memory: String,
}

/// One host with `extra` options, the partial-message flood against it, SIGUSR1, and a join
/// after the flood.
fn budget_flood(s: &Suite, extra: &[&str]) -> anyhow::Result<BudgetRun> {
    let enum_port = free_udp_port()?;
    let (host, tcp) = host(s, &enum_port, extra)?;
    let to: SocketAddr = tcp.parse()?;
    let before = peak_rss_kib(&host)?;
    let mut partial = (BUDGET_ANNOUNCED | 0xFAB << 20).to_le_bytes().to_vec();
    partial.resize(BUDGET_PARTIAL, 0x55);
    let mut held = Vec::new();
    for i in 0..BUDGET_SOURCES {
        for _ in 0..15 {
            let Ok(mut c) = connect_from(Ipv4Addr::new(127, 0, 4, i + 1), to) else { continue };
            c.set_write_timeout(Some(Duration::from_millis(500)))?;
            // A closed connection (over the budget) fails its write: that is the fix working.
            let _ = c.write_all(&partial);
            held.push(c);
        }
    }
    std::thread::sleep(Duration::from_millis(1500));
    let flood = peak_rss_kib(&host)?;
    let status = std::process::Command::new("kill").args(["-USR1", &host.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -USR1 failed");
    let memory = s.expect(&host, "the memory event on SIGUSR1", WAIT, |v| v["event"] == "memory")?;
    let summary = host.events(|v| v["event"] == "refusals");
    ensure!(!summary.is_empty(), "no refusals event on SIGUSR1");
    let over_budget = summary.last().and_then(|v| v["counts"]["over-budget"].as_u64()).unwrap_or(0);
    let memory = format!(
        "{} of {} bytes held (peak {})",
        memory["bytes_held"], memory["memory_budget"], memory["bytes_peak"]
    );
    drop(held);
    join_succeeds(s, &host, &tcp, "after-budget")?;
    Ok(BudgetRun { before, flood, over_budget, memory })
}
