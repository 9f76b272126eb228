//! DirectPlay 4 sessions with the DirectPlay reliable protocol (`dplay host --dp4
//! --reliable-protocol`, DPSESSION_DIRECTPLAYPROTOCOL): the join keeps to TCP (MC-DPL4R 1.3),
//! then player messages, guaranteed or not, go over MC-DPL4R on the UDP game sockets, split
//! into frames beyond the MTU (MC-DPL4R 2.2.2, 3.1.4).
//!
//! Through the fault-injecting proxy: the join's TCP goes straight to the host, and only the
//! game UDP path is proxied. Each side learns the other's game socket from the SPData of its
//! system player (MC-DPL4CS 2.2.2) and keys its MC-DPL4R link by that address, so each side
//! advertises the proxy's socket facing the other (`--advertise-udp`): the host the proxy's
//! front, where the joiner sends; the joiner the proxy's back, where the host's datagrams come
//! from and go to.

use std::net::{TcpListener, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::dp4::{
    SUPER_ENUM_PLAYERS_REPLY, capture_file, check_capture, echoed, free_udp_port, host, join_alice,
};
use super::{Suite, WAIT, event_with, is};

/// The joiner's `reliable` event (printed as it leaves): MC-DPL4R carried its messages.
fn reliable_counts(s: &Suite, p: &super::Proc, delivered: u64) -> anyhow::Result<Value> {
    let r = s.expect(p, "the MC-DPL4R counters", WAIT, is("reliable"))?;
    let n = |k: &str| r[k].as_u64().unwrap_or(0);
    ensure!(n("messages_delivered") >= delivered, "{}: {r}", p.name);
    ensure!(n("frames_sent") > n("messages_sent") && n("links_failed") == 0, "{}: {r}", p.name);
    Ok(r)
}

/// MC-DPL4R over loopback: an RP session hosted and joined, a text and 200 000 bytes (138
/// frames) sent guaranteed both ways; the joiner's counters show the frames; the host's
/// capture decodes without a malformed packet (MC-DPL4R frames are left undecoded).
pub(super) fn guaranteed(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_udp_port()?;
    let (pcap, pcap_arg) = capture_file("dp4rp");
    let (host, _) = host(s, &enum_port, &["--reliable-protocol", "--echo", "--pcap", &pcap_arg])?;
    let hosting = s.expect(&host, "hosting", WAIT, is("hosting"))?;
    ensure!(has_flag(&hosting, "directplay-protocol"), "{hosting}");
    // Found by enumeration, as a game would (the capture then holds ENUMSESSIONSREPLY).
    let mut alice = join_alice(s, &enum_port, "hello over MC-DPL4R", "3")?;
    echoed(s, &host, &alice, "hello over MC-DPL4R", 200_000)?;
    let counts = reliable_counts(s, &alice, 2)?;
    ensure!(counts["frames_sent"].as_u64().unwrap_or(0) >= 138, "alice: {counts}");
    s.expect(&host, "alice leaving", WAIT, event_with("player_left", "name", "alice"))?;
    ensure!(s.exit_code(&mut alice, WAIT)? == Some(0), "join --dp4 did not exit 0");
    drop(host);
    check_capture(&pcap, SUPER_ENUM_PLAYERS_REPLY)?;
    let _ = std::fs::remove_file(&pcap);
    Ok(())
}

/// A loopback port free for both UDP and TCP, for a host whose game sockets must be known
/// before it starts (`--bind 127.0.0.1:PORT` fixes both).
fn free_game_port() -> anyhow::Result<u16> {
    for _ in 0..20 {
        let udp = UdpSocket::bind("127.0.0.1:0")?;
        let port = udp.local_addr()?.port();
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return Ok(port);
        }
    }
    anyhow::bail!("no loopback port free for both UDP and TCP")
}

/// MC-DPL4R 3.1.5 through a proxy losing, duplicating and reordering 10% of the game UDP
/// datagrams each, in a session with DPSESSION_NOPRESERVEORDER (unordered links):
/// non-guaranteed messages (a text and 30 000 bytes, 21 frames) both ways arrive whole,
/// MC-DPL4R repairing what the proxy broke.
pub(super) fn through_proxy(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_udp_port()?;
    let port = free_game_port()?;
    let game = format!("127.0.0.1:{port}");
    let faults = crate::proxy::Faults { loss: 10, duplicate: 10, reorder: 10 };
    let proxy = crate::proxy::Proxy::start(game.parse()?, faults, 0xD94)?;
    let (front, back) = (proxy.addr().to_string(), proxy.back_addr().to_string());
    let extra =
        ["--reliable-protocol", "--no-preserve-order", "--echo", "non-guaranteed", "--advertise-udp", &front];
    let mut args = vec!["host", "--dp4", "--json", "--bind", &game, "--enum-port", &enum_port];
    args.extend_from_slice(&["--session", "integration4rp", "--duration", "60"]);
    args.extend_from_slice(&extra);
    let host = s.start("dp4 host", &args)?;
    let hosting = s.expect(&host, "hosting", WAIT, is("hosting"))?;
    ensure!(
        has_flag(&hosting, "directplay-protocol") && has_flag(&hosting, "no-preserve-order"),
        "{hosting}"
    );
    let tcp = hosting["tcp"].as_str().context("no TCP address in the hosting event")?.to_owned();
    ensure!(tcp == game, "the host listens on {tcp}, not {game}");
    s.expect(&host, "its player", WAIT, is("player_created"))?;
    let args = [
        "join",
        "--dp4",
        &tcp,
        "--advertise-udp",
        &back,
        "--json",
        "--name",
        "bob",
        "--non-guaranteed",
        "--send",
        "through the proxy",
        "--send-size",
        "30000",
        "--duration",
        "6",
        "--timeout",
        "20",
    ];
    let mut bob = s.start("bob", &args)?;
    echoed(s, &host, &bob, "through the proxy", 30_000)?;
    let counts = reliable_counts(s, &bob, 2)?;
    ensure!(s.exit_code(&mut bob, WAIT)? == Some(0), "join --dp4 through the proxy did not exit 0");
    let c = &proxy.counts;
    let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
    println!(
        "    proxy: {} forwarded, {} lost, {} duplicated, {} reordered; bob: {} frames sent, {} resent",
        load(&c.forwarded),
        load(&c.lost),
        load(&c.duplicated),
        load(&c.reordered),
        counts["frames_sent"],
        counts["frames_resent"]
    );
    ensure!(load(&c.forwarded) >= 21, "the game datagrams did not go through the proxy");
    Ok(())
}

/// Whether the `flags` list of an event (docs/json-events.md) holds `flag`.
fn has_flag(event: &serde_json::Value, flag: &str) -> bool {
    event["flags"].as_array().is_some_and(|flags| flags.iter().any(|f| f == flag))
}
