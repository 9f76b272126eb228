//! `--relay` and a member that vanishes on a real network (issue 23; docs/relay.md): the NAT
//! network of `relay_nat` (the relaying host on the public side, three pilots behind three
//! NATs, one symmetric). Once the three have joined and see each other, pilot 1's process is
//! killed (SIGKILL: no goodbye) and pilot 3's cable is pulled (its router drops everything it
//! would forward, both ways: nothing at all). Within the bound the timers give, the host
//! removes both, the survivor is told and goes on flying with the host, and the relay frees
//! their endpoints (`/api/relay`). Once the cable is back, pilot 3's stale frames at the relay
//! are dropped and counted as a stranger's, nothing is relayed, and no relay endpoint sends
//! anything toward pilot 3's NAT (nftables counters in its router). A new pilot behind router
//! 1 then joins, and it and the survivor see each other through the relay.
//!
//! The members are FS pilots (`dplay fs join`, through `dplay fs host --relay`): they send
//! positions several times a second to every player, so that the survivor's traffic after the
//! removals, and both ways with the new pilot, can be seen; a `dplay join` sends once.

use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::dp4_cable::{self, plug, pull};
use super::netns::Net;
use super::relay_nat::{HOST_IP, PILOTS, each_sees_the_others, ready, start_pilot};
use super::{Suite, WAIT, event_with, is};

/// The dashboard, on loopback inside the public namespace: `/api/relay` is read there.
const WEB: &str = "127.0.0.1:8080";
/// Its admin token (reads need it).
const TOKEN: &str = "relay-gone-0123456789abcdef";
/// Every process's `--duration`: longer than the case.
const DURATION: &str = "45";

/// One protocol's shape of the case.
struct Shape {
    /// `fs host --sim` and `fs join --sim`.
    sim: &'static str,
    /// The host's first event once it serves.
    serving: &'static str,
    /// The host's port.
    port: u16,
    /// The relay endpoints' ports (TCP and UDP), as nftables writes a range.
    relay_ports: &'static str,
    /// The timers of the host and the survivor, scaled down so that the case takes seconds.
    timers: &'static [&'static str],
    /// The bound those timers give: a vanished member is removed within it.
    deadline: Duration,
    /// How long the session runs before the member vanishes, so that the host has heard what
    /// its rule needs.
    settle: Duration,
}

/// DirectPlay 8: a KeepAlive after 1 to 2 s of silence (MC-DPL8R 3.1.2.6; `--keepalive` sets
/// the idle time and the timer's granularity), then at most 5 retries (3.1.2.5), each wait at
/// most 0.5 s: the host and the survivor give up on a silent member within 2 × 1 + (5 + 1) ×
/// 0.5 = 5 s of the last datagram heard from it. The defaults (25 s, 10 retries, 5 s) give
/// 105 s, too long for CI; the rule itself is dplay-dframe's and is tested there.
const DP8: Shape = Shape {
    sim: "fs2004",
    serving: "joined",
    port: 23456,
    relay_ports: "23457-23488",
    timers: &["--keepalive", "1", "--send-retries", "5", "--max-retry-interval", "0.5"],
    deadline: Duration::from_millis(5000),
    settle: Duration::from_secs(1),
};

/// DirectPlay 4: the Ping period scaled to 3 s as in `dp4_cable` (`--keepalive 3`); a silent
/// member that has answered a PING is removed within two periods (MC-DPL4CS 3.1.2.5, 3.2.6.2;
/// docs/decisions.md, "A silent peer"), a killed one sooner. Two periods pass before, so that
/// each member has answered the host's PINGs.
const DP4: Shape = Shape {
    sim: "fs98",
    serving: "hosting",
    port: 2300,
    relay_ports: "2401-2432",
    timers: &["--keepalive", dp4_cable::PERIOD],
    deadline: dp4_cable::DEADLINE,
    settle: Duration::from_secs(2 * dp4_cable::PERIOD_SECS),
};

/// DirectPlay 8 (`dplay fs host --relay`, FS2004 pilots).
pub(super) fn dp8_member_vanishes(s: &Suite) -> anyhow::Result<()> {
    vanishing(s, &DP8)
}

/// DirectPlay 4 (`dplay fs host --sim fs98 --relay`, FS98 pilots over TCP and UDP).
pub(super) fn dp4_member_vanishes(s: &Suite) -> anyhow::Result<()> {
    vanishing(s, &DP4)
}

/// The case (see the module's comment).
#[allow(clippy::disallowed_methods)] // the suite's own clock: the deadline is the behaviour
fn vanishing(s: &Suite, shape: &Shape) -> anyhow::Result<()> {
    if !ready()? {
        return Ok(());
    }
    let net = Net::build()?;
    let host_addr = format!("{HOST_IP}:{}", shape.port);
    let mut args = vec!["fs", "host", "--sim", shape.sim, "--relay", "--json", "--bind", &host_addr];
    args.extend_from_slice(&["--duration", DURATION, "--web", WEB, "--web-token", TOKEN]);
    args.extend_from_slice(shape.timers);
    let host = s.start_in(&net.ns("pub"), "relay host", &args)?;
    s.expect(&host, shape.serving, WAIT, is(shape.serving))?;
    let [alpha, bravo, charlie] = PILOTS;
    // The killed pilot's timers do not matter; the cut one keeps the defaults, so that it is
    // still sending when its cable is back.
    let default = ["--duration", DURATION];
    let fast = [&default[..], shape.timers].concat();
    let pilots = [
        start_pilot(s, &net, "p1", alpha, shape.sim, &host_addr, &default)?,
        start_pilot(s, &net, "p2", bravo, shape.sim, &host_addr, &fast)?,
        start_pilot(s, &net, "p3", charlie, shape.sim, &host_addr, &default)?,
    ];
    each_sees_the_others(s, &pilots)?;
    std::thread::sleep(shape.settle);

    // Charlie's process runs on (until the case ends) behind its pulled cable.
    let [mut killed, survivor, _cut] = pilots;
    killed.child.kill()?;
    let _ = killed.child.wait();
    pull(&net, "r3")?;
    let gone = Instant::now();
    let bound = shape.deadline + dp4_cable::SLACK;
    let mut left_at = Vec::new();
    let mut took = Vec::new();
    for p in [&host, &survivor] {
        for name in [alpha, charlie] {
            let left =
                s.expect(p, &format!("{name} gone"), bound, event_with("player_left", "name", name))?;
            left_at.push(left["t"].as_f64().unwrap_or(0.0));
            took.push(gone.elapsed().as_secs_f64());
        }
    }
    println!(
        "    gone from the host {:.1} s ({alpha}, killed) and {:.1} s ({charlie}, cable pulled) after; {bravo} told by {:.1} s (bound {:.1} s)",
        took[0],
        took[1],
        took[3],
        shape.deadline.as_secs_f64()
    );
    ensure!(gone.elapsed() < bound, "removed after {:?}", gone.elapsed());
    let host_removed = left_at.iter().take(2).copied().fold(0.0, f64::max);
    s.expect(&host, &format!("{bravo}'s position after the removals"), WAIT, |v| {
        position_after(v, bravo, host_removed)
    })?;
    ensure!(
        survivor.events(|v| v["event"] == "session_ended" || v["event"] == "addon_disconnect").is_empty(),
        "{bravo} left the session"
    );
    let freed = relay_until(&net, "the vanished members' endpoints freed", |v| {
        v["endpoints_held"] == 1 && v["members"].as_array().is_some_and(|m| m.len() == 1)
    })?;

    stale_frames_dropped(&net, shape, &freed)?;

    // A new pilot behind router 1: it and the survivor see each other through the relay.
    let survivor_told = left_at.get(2).copied().unwrap_or(0.0);
    let again = start_pilot(s, &net, "p1", alpha, shape.sim, &host_addr, &default)?;
    s.expect(&again, &format!("{bravo}'s position"), WAIT, |v| position_after(v, bravo, 0.0))?;
    s.expect(&survivor, &format!("the new {alpha}'s position"), WAIT, |v| {
        position_after(v, alpha, survivor_told)
    })?;
    let to = |m: &Value| m["datagrams_to"].as_u64().unwrap_or(0);
    let survivor_before = freed["members"].as_array().and_then(|m| m.first()).map_or(0, to);
    relay_until(&net, &format!("the new pilot and {bravo} relayed to each other"), |v| {
        let members = v["members"].as_array().map(Vec::as_slice).unwrap_or_default();
        members.len() == 2
            && members.iter().all(|m| to(m) > 0)
            && members.iter().any(|m| to(m) > survivor_before)
    })?;
    nothing_sent_toward(&net, "up to the new pilot's positions")
}

/// `v` is a position of `name` printed after `t` (seconds since its process started).
fn position_after(v: &Value, name: &str, t: f64) -> bool {
    v["event"] == "position" && v["name"] == name && v["t"].as_f64().is_some_and(|at| at > t)
}

/// The cable back in: pilot 3 (still running, its own timers at the defaults) sends to the
/// relay again; its frames are dropped and counted as a stranger's, nothing is relayed to the
/// survivor, and nothing goes from a relay endpoint toward pilot 3's NAT. `freed` is
/// `/api/relay` before.
fn stale_frames_dropped(net: &Net, shape: &Shape, freed: &Value) -> anyhow::Result<()> {
    watch(net, "r3", shape)?;
    plug(net, "r3")?;
    let strangers = freed["strangers"].as_u64().unwrap_or(0);
    relay_until(net, "a stale frame counted at the relay", |v| {
        v["strangers"].as_u64().is_some_and(|n| n > strangers)
    })?;
    // A second more of its retries, then what the relay did with them all.
    std::thread::sleep(Duration::from_secs(1));
    let now = relay_api(net)?;
    let stale = counter(net, "stale")?;
    println!(
        "    after the cable is back: {stale} packets from pilot 3 toward the host, strangers at the relay {strangers} -> {}",
        now["strangers"]
    );
    ensure!(stale > 0, "pilot 3 sent nothing after the cable was back");
    ensure!(
        now["datagrams"] == freed["datagrams"] && now["members"] == freed["members"],
        "something was relayed after the removals: before {freed}, now {now}"
    );
    nothing_sent_toward(net, "once the stale frames were counted")
}

/// Since the cable is back (up to `when`), no relay endpoint sent pilot 3's NAT a datagram or TCP data, and
/// the host opened no connection toward it. TCP's own answers on the connections pilot 3
/// opened (ACK, FIN) and what the session's port sent on its connection (the DirectPlay 4
/// host's YOUAREDEAD to an instance it removed, MC-DPL4CS 3.2.5.10) are told, not refused
/// (docs/decisions.md, "Relay: a removed member that comes back").
fn nothing_sent_toward(net: &Net, when: &str) -> anyhow::Result<()> {
    let [datagrams, data, connects, control, session] =
        ["relay_datagrams", "relay_tcp_data", "connects", "relay_tcp", "session"].map(|c| counter(net, c));
    let (datagrams, data, connects) = (datagrams?, data?, connects?);
    println!(
        "    toward pilot 3, {when}: {datagrams} datagrams and {data} TCP data segments from relay endpoints, {connects} connections opened; {} TCP control segments from relay endpoints, {} packets from the session's port",
        control?, session?
    );
    ensure!(
        datagrams == 0 && data == 0 && connects == 0,
        "the host sent pilot 3's NAT {datagrams} datagrams and {data} TCP data segments from relay endpoints, and opened {connects} connections toward it"
    );
    Ok(())
}

/// Counters in `router`'s prerouting, before its NAT: what comes from the LAN toward the host
/// (`stale`); from the host toward the LAN: datagrams from a relay endpoint
/// (`relay_datagrams`), TCP segments from one (`relay_tcp`) and those of them that carry data
/// (`relay_tcp_data`: longer than their headers, for each TCP header length), connections the
/// host opens (`connects`: SYN without ACK), and anything from the session's port (`session`).
fn watch(net: &Net, router: &str, shape: &Shape) -> anyhow::Result<()> {
    let from_host = format!("add rule inet watch pre iifname \"wan\" ip saddr {HOST_IP}");
    let relay = shape.relay_ports;
    let mut rules = vec![
        "add table inet watch".to_owned(),
        "add chain inet watch pre { type filter hook prerouting priority -300 ; }".to_owned(),
    ];
    for c in ["stale", "relay_datagrams", "relay_tcp", "relay_tcp_data", "connects", "session"] {
        rules.push(format!("add counter inet watch {c}"));
    }
    rules.push(format!("add rule inet watch pre iifname \"lan\" ip daddr {HOST_IP} counter name stale"));
    rules.push(format!("{from_host} udp sport {relay} counter name relay_datagrams"));
    rules.push(format!("{from_host} tcp sport {relay} counter name relay_tcp"));
    for words in 5..=15u32 {
        let headers = 20 + 4 * words;
        rules.push(format!(
            "{from_host} tcp sport {relay} tcp doff {words} ip length > {headers} counter name relay_tcp_data"
        ));
    }
    rules.push(format!("{from_host} tcp flags & (syn | ack) == syn counter name connects"));
    rules.push(format!(
        "{from_host} meta l4proto {{ tcp, udp }} th sport {} counter name session",
        shape.port
    ));
    for rule in &rules {
        net.exec(router, &["nft", rule])?;
    }
    Ok(())
}

/// The packets counted so far by `name` of [`watch`] in router 3.
fn counter(net: &Net, name: &str) -> anyhow::Result<u64> {
    let out = net.output("r3", &["nft", "-j", "list", "counter", "inet", "watch", name])?;
    let v: Value = serde_json::from_str(&out).with_context(|| format!("nft's answer: {out}"))?;
    v["nftables"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|o| o["counter"]["packets"].as_u64())
        .with_context(|| format!("no counter {name} in {out}"))
}

/// The host's `/api/relay` once `want` accepts it (it is published about once a second).
#[allow(clippy::disallowed_methods)] // the suite's own clock: a bounded wait
fn relay_until(net: &Net, what: &str, want: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
    let until = Instant::now() + WAIT;
    loop {
        let now = relay_api(net)?;
        if want(&now) {
            return Ok(now);
        }
        if Instant::now() >= until {
            bail!("the host's /api/relay never showed {what}: {now}");
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The host's `/api/relay` (HTTP on loopback inside the public namespace, by bash's
/// `/dev/tcp`).
fn relay_api(net: &Net) -> anyhow::Result<Value> {
    let (ip, port) = WEB.split_once(':').context("WEB")?;
    let script = format!(
        "exec 3<>/dev/tcp/{ip}/{port} && printf 'GET /api/relay?token={TOKEN} HTTP/1.0\\r\\n\\r\\n' >&3 && cat <&3"
    );
    let reply = net.output("pub", &["bash", "-c", &script])?;
    let body =
        reply.split_once("\r\n\r\n").map(|(_, b)| b).with_context(|| format!("/api/relay: {reply}"))?;
    serde_json::from_str(body).with_context(|| format!("/api/relay: {reply}"))
}
