//! Hostile cases against a DirectPlay 8 host (issue 14; docs/limits.md): a spoofed-source
//! CONNECT flood, a flood of half-open and silent connections, a ghost member and oversize
//! names. Each is bounded in count and time, reads the host's memory from /proc, and has a
//! real `dplay join` succeed during and after. Datagrams go only to the host the case started;
//! the other source addresses (127.0.0.2 and up) exist on the private namespace's loopback.
// serde_json's `value["key"]` gives Null for a missing key; it never panics.
#![allow(clippy::indexing_slicing)]

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::Value;

use crate::integration::{Case, Proc, Suite, WAIT, event_with, free_addr, host, is};
use crate::util::{cargo, root, step};

/// Every DirectPlay 8 case, in order.
pub(super) const CASES: &[(&str, Case)] = &[
    ("DirectPlay 8: a spoofed-source CONNECT flood gets 3 replies per source at most", connect_flood),
    ("DirectPlay 8: half-open and silent connections are capped and dropped", half_open_flood),
    ("DirectPlay 8: a ghost member does not close the session", ghost_member),
    ("DirectPlay 8: a 100,000-character player name is refused", oversize_name),
    ("DirectPlay 8: the drops-and-refusals line on SIGUSR1, with the bytes held", stats_on_signal),
];

/// A CONNECT (MC-DPL8R 2.2.1.1): POLL, `bMsgID`, version 0x00010006, `dwSessID`.
pub(super) fn connect(msg_id: u8, sess_id: u32) -> Vec<u8> {
    let mut frame = vec![0x88, 0x01, msg_id, 0];
    frame.extend_from_slice(&0x0001_0006u32.to_le_bytes());
    frame.extend_from_slice(&sess_id.to_le_bytes());
    frame.extend_from_slice(&0u32.to_le_bytes());
    frame
}

/// The confirming CONNECTED (MC-DPL8R 2.2.1.2): POLL clear, `bRspId` echoing the listener's
/// `bMsgID`.
pub(super) fn confirm(reply: &[u8], sess_id: u32) -> Vec<u8> {
    let mut frame = vec![0x80, 0x02, 1, reply.get(2).copied().unwrap_or(0)];
    frame.extend_from_slice(&0x0001_0006u32.to_le_bytes());
    frame.extend_from_slice(&sess_id.to_le_bytes());
    frame.extend_from_slice(&0u32.to_le_bytes());
    frame
}

/// A UDP socket on 127.0.0.`ip`, non-blocking.
fn source(ip: u8) -> anyhow::Result<UdpSocket> {
    let socket = UdpSocket::bind(SocketAddr::from((Ipv4Addr::new(127, 0, 0, ip), 0)))
        .with_context(|| format!("cannot bind 127.0.0.{ip} (outside a network namespace?)"))?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// Datagrams waiting on `socket`.
fn drain(socket: &UdpSocket) -> usize {
    let mut buf = [0u8; 2048];
    std::iter::from_fn(|| socket.recv_from(&mut buf).ok()).count()
}

/// A `dplay-runtime` example run by a hostile case, its stdout read line by line; killed when
/// dropped.
pub(super) struct Example {
    child: Child,
    lines: Receiver<String>,
}

impl Example {
    /// Builds the example `name` and starts it with `args`.
    pub(super) fn start(name: &str, args: &[&str]) -> anyhow::Result<Self> {
        step(
            &format!("build the {name} example"),
            cargo().args(["build", "-p", "dplay-runtime", "--example", name]),
        )?;
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| root().join("target"));
        let mut child = Command::new(target.join("debug").join("examples").join(name))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("cannot start {name}"))?;
        let out = BufReader::new(child.stdout.take().context("no stdout")?).lines();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in out.map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Ok(Self { child, lines })
    }

    /// Its next line of output, within `limit`.
    pub(super) fn line(&self, limit: Duration) -> anyhow::Result<String> {
        Ok(self.lines.recv_timeout(limit)?)
    }
}

impl Drop for Example {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The host's resident memory now and at its peak, in KiB (`/proc/<pid>/status`).
pub(super) fn rss_kib(p: &Proc) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{}/status", p.pid())).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Starts a `dplay join` from `bind` that stays `stay` seconds once in.
fn start_join(s: &Suite, addr: &str, name: &str, bind: &str, stay: &str) -> anyhow::Result<Proc> {
    let args =
        ["join", addr, "--json", "--name", name, "--bind", bind, "--duration", stay, "--timeout", "30"];
    s.start(name, &args)
}

/// A real join that must get in within `limit`; how long it took.
#[allow(clippy::disallowed_methods)] // the suite's own clock
pub(super) fn join_ok(
    s: &Suite,
    addr: &str,
    name: &str,
    bind: &str,
    limit: Duration,
) -> anyhow::Result<Duration> {
    let started = Instant::now();
    let p = start_join(s, addr, name, bind, "1")?;
    s.expect(&p, "the name table", limit, is("name_table"))?;
    Ok(started.elapsed())
}

/// The latest `refusals` event of `host` that `want` accepts.
pub(super) fn refusals(s: &Suite, host: &Proc, want: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
    s.expect(host, "a refusals line", WAIT, move |v| v["event"] == "refusals" && want(v))
}

/// 300 sources (15 ports on each of 127.0.0.2-21) send 100 CONNECTs each, 30,000 in all,
/// within 3 s, and read what comes back for 2 s more: at most 3 datagrams per source (before:
/// about 15 per CONNECT). A join made during the flood gets in.
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn connect_flood(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--stats-every", "1"])?;
    let target: SocketAddr = addr.parse()?;
    let mut sources = Vec::new();
    for ip in 2..22 {
        for _ in 0..15 {
            sources.push(source(ip)?);
        }
    }
    let during = start_join(s, &addr, "during", "127.0.0.1:0", "2")?;
    let mut replies = vec![0usize; sources.len()];
    let mut sent = 0u64;
    let started = Instant::now();
    for round in 0..100u8 {
        for (i, socket) in sources.iter().enumerate() {
            let sess_id = u32::try_from(i).unwrap_or(0) + 1;
            if socket.send_to(&connect(round, sess_id), target).is_ok() {
                sent += 1;
            }
        }
        for (count, socket) in replies.iter_mut().zip(&sources) {
            *count += drain(socket);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let flood_time = started.elapsed();
    while started.elapsed() < flood_time + Duration::from_secs(2) {
        for (count, socket) in replies.iter_mut().zip(&sources) {
            *count += drain(socket);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (_, peak) = rss_kib(&host);
    let total: usize = replies.iter().sum();
    let most = replies.iter().copied().max().unwrap_or(0);
    println!(
        "    {sent} CONNECTs from {} sources in {:.1} s: {total} datagrams back ({:.3} per CONNECT, at most {most} per source); host RSS peak {peak} KiB",
        sources.len(),
        flood_time.as_secs_f64(),
        total as f64 / sent.max(1) as f64,
    );
    ensure!(most <= 3, "a source got {most} datagrams");
    s.expect(&during, "a join during the flood", Duration::from_secs(20), is("name_table"))?;
    // Every CONNECT past a source's 3 answers is dropped and counted (one answer and two
    // retries were sent, so at least 99 of each source's 100 are drops or answered retries).
    let dropped = sent.saturating_sub(3 * sources.len() as u64);
    let r = refusals(s, &host, |v| v["counts"]["handshake_budget"].as_u64().is_some_and(|n| n >= dropped))?;
    println!("    host: {}", r["counts"]);
    let took = join_ok(s, &addr, "after", "127.0.0.1:0", Duration::from_secs(20))?;
    println!("    a join after the flood: in after {:.1} s", took.as_secs_f64());
    Ok(())
}

/// 4,000 sources (200 ports on each of 127.0.0.2-21) each send one CONNECT: at most 16 per
/// IP are held, the oldest evicted. Then 60 connections from 5 addresses complete the
/// handshake and say nothing: at most 8 per IP wait, and the rest go at the join deadline
/// (3 s here). A join made meanwhile gets in; the host's memory stays bounded.
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn half_open_flood(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--stats-every", "1", "--join-timeout", "3"])?;
    let target: SocketAddr = addr.parse()?;
    let (rss_before, _) = rss_kib(&host);
    for ip in 2..22 {
        for port in 0..200u32 {
            let socket = source(ip)?;
            socket.send_to(&connect(0, port + 1), target)?;
        }
    }
    let mut silent = Vec::new();
    for ip in 30..35 {
        for k in 0..12u32 {
            let socket = source(ip)?;
            let sess_id = 0x5000 + u32::from(ip) * 100 + k;
            socket.send_to(&connect(0, sess_id), target)?;
            silent.push((socket, sess_id));
        }
    }
    let during = start_join(s, &addr, "during", "127.0.0.1:0", "2")?;
    let until = Instant::now() + Duration::from_secs(1);
    let mut confirmed = 0;
    let mut buf = [0u8; 2048];
    while Instant::now() < until {
        for (socket, sess_id) in &mut silent {
            while let Ok((n, _)) = socket.recv_from(&mut buf) {
                if n == 16 && buf[0] == 0x88 && buf[1] == 0x02 && *sess_id != 0 {
                    socket.send_to(&confirm(&buf[..n], *sess_id), target)?;
                    *sess_id = 0;
                    confirmed += 1;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    s.expect(&during, "a join during the flood", Duration::from_secs(20), is("name_table"))?;
    let held = refusals(s, &host, |v| v["counts"]["half_open_evicted"].as_u64().is_some_and(|n| n > 0))?;
    println!("    while held: {held}");
    let done = refusals(s, &host, |v| {
        v["joining"] == 0 && v["counts"]["join_timeout"].as_u64().is_some_and(|n| n >= confirmed)
    })?;
    let (rss_after, peak) = rss_kib(&host);
    println!(
        "    4000 half-open sources and {confirmed} silent joiners: {}; host RSS {rss_before} KiB before, peak {peak} KiB, {rss_after} KiB after",
        done["counts"]
    );
    ensure!(done["half_open"].as_u64().is_some_and(|n| n <= 320), "half-open held: {done}");
    let took = join_ok(s, &addr, "after", "127.0.0.1:0", Duration::from_secs(20))?;
    println!("    a join after the flood: in after {:.1} s", took.as_secs_f64());
    Ok(())
}

/// A member that stays connected to the host but never reaches a joiner (the
/// `ghost_member` example): the first joiner is removed within seconds, the second (from
/// another address) makes it two failed joins, the ghost is removed and that joiner gets in,
/// well within a minute of the first joiner's start (before: no join ever got in).
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn ghost_member(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--stats-every", "2"])?;
    let ghost = Example::start("ghost_member", &[addr.as_str(), "127.0.0.1:0"])?;
    let result = (|| {
        ensure!(ghost.line(WAIT)?.contains("joined"), "the ghost did not join");
        s.expect(&host, "the ghost joining", WAIT, event_with("player_joined", "name", "ghost"))?;
        let started = Instant::now();
        let mut first = start_join(s, &addr, "first", "127.0.0.2:0", "1")?;
        ensure!(s.exit_code(&mut first, Duration::from_secs(25))? == Some(1), "the first joiner got in");
        let first_out = started.elapsed();
        s.expect(&host, "the first joiner removed", WAIT, event_with("player_left", "name", "first"))?;
        let second = start_join(s, &addr, "second", "127.0.0.3:0", "2")?;
        s.expect(&second, "the second joiner in", Duration::from_secs(30), is("name_table"))?;
        let second_in = started.elapsed();
        s.expect(&host, "the ghost removed", WAIT, event_with("player_left", "name", "ghost"))?;
        let took = join_ok(s, &addr, "third", "127.0.0.4:0", Duration::from_secs(20))?;
        let r = refusals(s, &host, |v| v["counts"]["member_evicted"] == 1)?;
        println!(
            "    ghost member: the first joiner out after {:.1} s, the second in {:.1} s after the first started; a join after: {:.1} s; host {}",
            first_out.as_secs_f64(),
            second_in.as_secs_f64(),
            took.as_secs_f64(),
            r["counts"]
        );
        ensure!(second_in < Duration::from_secs(60), "the second joiner took {second_in:?}");
        Ok(())
    })();
    drop(ghost);
    result
}

/// A joiner named with 100,000 characters is refused with DPNERR_INVALIDPARAM: it never
/// enters the table and the member never hears of it; a normal join still gets in.
fn oversize_name(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--stats-every", "1"])?;
    let member = start_join(s, &addr, "member", "127.0.0.1:0", "30")?;
    s.expect(&member, "the name table", WAIT, is("name_table"))?;
    let big = "x".repeat(100_000);
    let mut p = s.start("big", &["join", &addr, "--json", "--name", &big, "--timeout", "10"])?;
    ensure!(s.exit_code(&mut p, Duration::from_secs(15))? == Some(1), "the oversize join did not fail");
    let r = refusals(s, &host, |v| v["counts"]["oversize"] == 1)?;
    let (_, peak) = rss_kib(&host);
    ensure!(
        count_long_names(s, &host) + count_long_names(s, &member) == 0,
        "a player with the long name was announced"
    );
    println!("    oversize name refused: host {}; RSS peak {peak} KiB", r["counts"]);
    join_ok(s, &addr, "after", "127.0.0.1:0", Duration::from_secs(20))?;
    Ok(())
}

/// Events of `p` that name a player with more than 1,000 characters.
fn count_long_names(s: &Suite, p: &Proc) -> usize {
    let long = |v: &Value| v["name"].as_str().is_some_and(|n| n.len() > 1000);
    usize::from(s.expect(p, "a long name", Duration::from_millis(100), long).is_ok())
}

/// Issue 14: `kill -USR1` makes `dplay host` print its `refusals` event (no `--stats-every`),
/// with the memory budget's figures: the joiner's name-table entry is held, under the
/// `--memory-budget` given.
fn stats_on_signal(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--memory-budget", "4MiB"])?;
    join_ok(s, &addr, "counted", "127.0.0.1:0", WAIT)?;
    let status = std::process::Command::new("kill").args(["-USR1", &host.pid().to_string()]).status()?;
    anyhow::ensure!(status.success(), "kill -USR1 failed");
    let line = refusals(s, &host, |v| v["memory_budget"] == 4 << 20)?;
    let held = line["bytes_held"].as_u64().unwrap_or(0);
    println!("    SIGUSR1: refusals event with {held} of {} bytes held", line["memory_budget"]);
    anyhow::ensure!(held > 0 && held < 4 << 20, "bytes held {held}");
    Ok(())
}
