//! The DirectPlay 8 memory budget under a flood (issue 14; docs/limits.md, "The memory
//! budget"): half-open attempts from many source addresses and connected joiners that each
//! hold a large, never-finished message, against a host with the default budget and with a
//! small one. The budget's counter must stay under the budget, the host's RSS under a bound,
//! the drops be counted and logged without flooding, and a real join get in after.
// serde_json's `value["key"]` gives Null for a missing key; it never panics.
#![allow(clippy::indexing_slicing)]

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::dp8::{confirm, connect, join_ok, refusals, rss_kib};
use crate::integration::{Case, Suite, WAIT, free_addr};
use crate::util::root;

/// The case, after the other DirectPlay 8 ones.
pub(super) const CASES: &[(&str, Case)] =
    &[("DirectPlay 8: half-open and joiners' unfinished messages against the memory budget", memory_budget)];

/// Half-open flood: this many source IPs (127.0.1.x) ...
const HALF_OPEN_IPS: u8 = 100;
/// ... of this many CONNECTs each (ports), 2,000 in all: past the 16 per IP and the 1,024 held.
const HALF_OPEN_PER_IP: u32 = 20;
/// Connected joiners: this many source IPs (127.0.2.x) ...
const JOINER_IPS: u8 = 8;
/// ... of this many connections each: 56, under the 64 joins under way the host allows (8 per
/// IP), so a join during the flood pushes none of them out.
const JOINERS_PER_IP: u32 = 7;
/// Each joiner sends this many frames of a message it never ends ...
const FRAMES: u8 = 120;
/// ... of this many payload bytes: 168,000 bytes, under the 256 KiB a joiner may send.
const FRAME_PAYLOAD: usize = 1400;
/// The small budget, in MiB.
const SMALL_MIB: u64 = 1;
/// A join during the flood has a name this long (the host and the joiner allow 2,000): its
/// PLAYER_CONNECT_INFO takes three frames, to be reassembled, and its entry, counted twice,
/// about 6.4 KB.
const LONG_NAME: usize = 1500;
/// That join's player data (`--player-data @FILE`), under the 8 KiB default limit: with the
/// name, its PLAYER_CONNECT_INFO takes eight frames and its entry, counted twice, about 18 KB.
const PLAYER_DATA: usize = 6000;

/// The figures of one run.
struct Run {
    rss_before: u64,
    rss_flood: u64,
    rss_peak: u64,
    rss_after: u64,
    /// The `refusals` event once the flood is in, and once its connections are gone.
    flood: Value,
    end: Value,
    /// The largest `bytes_peak` and `bytes_held` of every `refusals` event.
    peak_held: u64,
    /// Datagrams sent and log lines the host wrote.
    sent: u64,
    log_lines: usize,
    joined_in: Duration,
    /// How long the join with a [`LONG_NAME`]-character name and [`PLAYER_DATA`] bytes of
    /// player data made during the flood took to get in.
    long_name: Duration,
}

/// Issue 14, the DP8 budget: 2,000 half-open attempts from 100 addresses and 56 connected
/// joiners each holding 168,000 bytes of an unfinished message (9.4 MB), then a join with a
/// long name and large player data, against the default budget and `--memory-budget 1MiB`. With the small budget the
/// long name's frames wait (not stored, not acknowledged) until the flood's joiners are dropped
/// at their PLAYER_CONNECT_INFO deadline, then it gets in; a plain join after gets in at once.
pub(super) fn memory_budget(s: &Suite) -> anyhow::Result<()> {
    let default = flood(s, &[], "default")?;
    report("default budget", &default);
    let budget = format!("{SMALL_MIB}MiB");
    let small = flood(s, &["--memory-budget", &budget], "small")?;
    report(&format!("--memory-budget {budget}"), &small);
    let limit = SMALL_MIB << 20;
    ensure!(small.peak_held <= limit, "bytes held reached {} over a budget of {limit}", small.peak_held);
    let counts = &small.flood["counts"];
    ensure!(counts["transport_over_budget"].as_u64().unwrap_or(0) > 0, "no frame dropped over the budget");
    ensure!(counts["half_open_evicted"].as_u64().unwrap_or(0) > 0, "no half-open attempt evicted");
    // What the small budget leaves: the baseline, the budget, and the records and buffers it
    // does not count (connections, tables, the allocator's slack).
    let ceiling = small.rss_before + (SMALL_MIB << 10) + (8 << 10);
    ensure!(small.rss_peak < ceiling, "host RSS peak {} KiB, over {ceiling} KiB", small.rss_peak);
    for run in [&default, &small] {
        ensure!(
            (run.log_lines as u64) < run.sent / 10,
            "{} log lines for {} datagrams",
            run.log_lines,
            run.sent
        );
    }
    Ok(())
}

fn report(what: &str, r: &Run) {
    let c = &r.flood["counts"];
    println!(
        "    {what}: host RSS {} KiB before, {} KiB under the flood, peak {} KiB, {} KiB after; {} of {} bytes held under the flood (peak {}), {} after; half_open_evicted {}, transport_over_budget {}; a {LONG_NAME}-character name with {PLAYER_DATA} bytes of player data during the flood in after {:.1} s; a join after in {:.1} s; {} datagrams sent, {} log lines",
        r.rss_before,
        r.rss_flood,
        r.rss_peak,
        r.rss_after,
        r.flood["bytes_held"],
        r.flood["memory_budget"],
        r.peak_held,
        r.end["bytes_held"],
        c["half_open_evicted"],
        c["transport_over_budget"],
        r.long_name.as_secs_f64(),
        r.joined_in.as_secs_f64(),
        r.sent,
        r.log_lines,
    );
    println!("      at the end: {}", r.end["counts"]);
}

/// A non-blocking UDP socket on `ip`.
fn bind(ip: Ipv4Addr) -> anyhow::Result<UdpSocket> {
    let socket = UdpSocket::bind(SocketAddr::from((ip, 0)))
        .with_context(|| format!("cannot bind {ip} (outside a network namespace?)"))?;
    socket.set_nonblocking(true)?;
    Ok(socket)
}

/// A reliable, sequential DFRAME carrying a session message's piece (MC-DPL8R 2.2.2): the
/// first frame has NEW_MSG; none has END_MSG, so the message is never whole.
fn data_frame(seq: u8) -> Vec<u8> {
    // DATA | RELIABLE | SEQUENTIAL | USER_1, NEW_MSG on the first; bControl 0; bNRcv 0.
    let command = 0x47 | if seq == 0 { 0x10 } else { 0 };
    let mut frame = vec![command, 0, seq, 0];
    frame.resize(4 + FRAME_PAYLOAD, 0x55);
    frame
}

/// One host with `extra` options against the whole flood; a join after it.
#[allow(clippy::disallowed_methods)] // the suite's own clock
fn flood(s: &Suite, extra: &[&str], tag: &str) -> anyhow::Result<Run> {
    let addr = free_addr()?;
    let log = root().join("target").join(format!("hostile-dp8-budget-{tag}.log"));
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut args = vec!["host", "--json", "--bind", &addr, "--session", "budget", "--duration", "60"];
    args.extend_from_slice(&["--stats-every", "1", "--max-name", "2000"]);
    args.extend_from_slice(extra);
    let host = s.start_logged("host", &args, &log)?;
    s.expect(&host, "joined", WAIT, |v| v["event"] == "joined")?;
    let target: SocketAddr = addr.parse()?;
    let (rss_before, _) = rss_kib(&host);
    let mut sent = 0u64;

    for ip in 1..=HALF_OPEN_IPS {
        for port in 0..HALF_OPEN_PER_IP {
            let socket = bind(Ipv4Addr::new(127, 0, 1, ip))?;
            socket.send_to(&connect(0, u32::from(ip) << 8 | port), target)?;
            sent += 1;
        }
    }

    let mut joiners = Vec::new();
    for ip in 1..=JOINER_IPS {
        for k in 0..JOINERS_PER_IP {
            let socket = bind(Ipv4Addr::new(127, 0, 2, ip))?;
            let sess_id = 0x7000 + u32::from(ip) * 100 + k;
            socket.send_to(&connect(0, sess_id), target)?;
            sent += 1;
            joiners.push((socket, sess_id, false));
        }
    }
    let until = Instant::now() + Duration::from_secs(2);
    let mut buf = [0u8; 2048];
    while Instant::now() < until && joiners.iter().any(|j| !j.2) {
        for (socket, sess_id, up) in &mut joiners {
            while let Ok((n, _)) = socket.recv_from(&mut buf) {
                if !*up && n == 16 && buf[0] == 0x88 && buf[1] == 0x02 {
                    socket.send_to(&confirm(&buf[..n], *sess_id), target)?;
                    sent += 1;
                    *up = true;
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let connected = joiners.iter().filter(|j| j.2).count();
    ensure!(connected > 0, "no joiner completed the handshake");
    for seq in 0..FRAMES {
        let frame = data_frame(seq);
        for (socket, _, _) in joiners.iter().filter(|j| j.2) {
            // A full socket buffer loses a frame: it is the peer's to resend, and ours not to.
            if socket.send_to(&frame, target).is_ok() {
                sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(3));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let (rss_flood, _) = rss_kib(&host);
    let flood = refusals(s, &host, |v| v["counts"]["half_open_evicted"].as_u64().is_some_and(|n| n > 0))?;
    let long = "n".repeat(LONG_NAME);
    let data_file = root().join("target").join(format!("hostile-dp8-budget-{tag}.data"));
    std::fs::write(&data_file, vec![0xd7; PLAYER_DATA])?;
    let data = format!("@{}", data_file.display());
    let args = ["join", &addr, "--json", "--name", &long, "--max-name", "2000", "--player-data", &data];
    let started = Instant::now();
    let mut big = s.start("long name", &[&args[..], &["--timeout", "30", "--duration", "1"]].concat())?;
    s.expect(&big, "the name table", Duration::from_secs(30), |v| v["event"] == "name_table")?;
    let long_name = started.elapsed();
    ensure!(s.exit_code(&mut big, WAIT)? == Some(0), "the long name's join did not exit 0");
    drop(joiners);
    // The flood's joiners never send a whole PLAYER_CONNECT_INFO: dropped at its 10 s deadline.
    let end = refusals(s, &host, |v| v["joining"] == 0 && v["half_open"] == 0)?;
    let started = Instant::now();
    join_ok(s, &addr, "after", "127.0.0.1:0", Duration::from_secs(30))?;
    let joined_in = started.elapsed();
    let (rss_after, rss_peak) = rss_kib(&host);
    let peak_held = host
        .events(|v| v["event"] == "refusals")
        .iter()
        .flat_map(|v| [v["bytes_peak"].as_u64(), v["bytes_held"].as_u64()])
        .flatten()
        .max()
        .unwrap_or(0);
    drop(host);
    let log_lines = std::fs::read_to_string(&log).map(|t| t.lines().count()).unwrap_or(0);
    Ok(Run {
        rss_before,
        rss_flood,
        rss_peak,
        rss_after,
        flood,
        end,
        peak_held,
        sent,
        log_lines,
        joined_in,
        long_name,
    })
}
