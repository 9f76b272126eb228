//! A recorded add-on session decoded (issue 15, items 2, 3 and 9): `dplay fs host` on a
//! non-default port with `--pcap`, a player flying for a few seconds, then `dplay decode` of
//! the capture finds the DirectPlay 8 flow by its content and names the add-on packets; the
//! same over DirectPlay 4, whose positions travel as UDP player messages without a signature.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::Value;

use super::{Suite, WAIT, event_with, free_addr, is};

pub(super) fn decoded(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = ["fs", "host", "--json", "--bind", &addr];
    let player = ["fs", "join", &addr, "--player", "--name", "pilot", "--json", "--duration", "3"];
    let lines = record_and_decode(s, "dp8", &host, &player)?;
    ensure!(lines.iter().any(|l| l["message"] == "CONNECT"), "no CONNECT decoded on port {addr}");
    expect_addon(&lines, "udp")
}

pub(super) fn decoded_dp4(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_addr()?.rsplit(':').next().unwrap_or_default().to_owned();
    let host = ["fs", "host", "--dp4", "--json", "--bind", "127.0.0.1:0", "--enum-port", &enum_port];
    let player = [
        "fs",
        "join",
        "--dp4",
        "127.0.0.1",
        "--host-enum-port",
        &enum_port,
        "--player",
        "--name",
        "pilot",
        "--json",
        "--duration",
        "3",
    ];
    let lines = record_and_decode(s, "dp4", &host, &player)?;
    ensure!(lines.iter().all(|l| l["family_short"] == "dp4"), "a message not DirectPlay 4");
    expect_addon(&lines, "udp")
}

/// Runs `host` with `--pcap` and `--duration 6`, the `player` until it exits, then decodes the
/// capture.
fn record_and_decode(s: &Suite, tag: &str, host: &[&str], player: &[&str]) -> anyhow::Result<Vec<Value>> {
    // The host is ready once in its session (DP8) or once its player exists (DP4).
    let ready = if tag == "dp4" { "player_created" } else { "joined" };
    let pcap = std::env::temp_dir().join(format!("dplay-integration-fs-{tag}-{}.pcap", std::process::id()));
    let pcap_arg = pcap.to_str().context("a temporary path that is not UTF-8")?;
    let mut host_args = host.to_vec();
    host_args.extend_from_slice(&["--pcap", pcap_arg, "--duration", "6"]);
    let mut host = s.start("fs host", &host_args)?;
    s.expect(&host, ready, WAIT, is(ready))?;
    let mut player = s.start("player", player)?;
    s.expect(&player, "addon_joined", WAIT, event_with("addon_joined", "role", "player"))?;
    ensure!(s.exit_code(&mut player, WAIT)? == Some(0), "the player did not exit 0");
    ensure!(s.exit_code(&mut host, Duration::from_secs(10))? == Some(0), "the host did not exit 0");
    let out = Command::new(&s.bin).args(["decode", "--json", pcap_arg]).output()?;
    let _ = std::fs::remove_file(&pcap);
    ensure!(out.status.success(), "decode failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect())
}

/// The join handshake and positions at 1000 m, named in the FS98 dialect; positions over
/// `transport`.
fn expect_addon(lines: &[Value], transport: &str) -> anyhow::Result<()> {
    let packets: Vec<(&Value, &Value)> =
        lines.iter().flat_map(|l| l["addon"].as_array().into_iter().flatten().map(move |p| (l, p))).collect();
    for name in ["ADD_PLAYER_REQUEST", "CHANGE_TO_PLAYER", "POSITION_VELOCITY"] {
        ensure!(
            packets.iter().any(|(_, p)| p["packet"] == name),
            "no {name} among {} add-on packets",
            packets.len()
        );
    }
    let (line, position) =
        packets.iter().find(|(_, p)| p["packet"] == "POSITION_VELOCITY").context("a position")?;
    ensure!(line["transport"] == transport, "{line}");
    ensure!(position["dialect"] == "FS98", "{position}");
    ensure!(position["altitude_m"].as_f64().is_some_and(|a| (a - 1000.0).abs() < 1.0), "{position}");
    Ok(())
}
