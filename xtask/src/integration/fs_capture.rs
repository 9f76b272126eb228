//! A recorded add-on session decoded (issue 15, items 3 and 9): `dplay fs host` on a
//! non-default port with `--pcap`, a player flying for a few seconds, then `dplay decode` of
//! the capture finds the DirectPlay 8 flow by its content and names the add-on packets.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::Value;

use super::{Suite, WAIT, event_with, free_addr, is};

pub(super) fn decoded(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let pcap = std::env::temp_dir().join(format!("dplay-integration-fs-{}.pcap", std::process::id()));
    let pcap_arg = pcap.to_str().context("a temporary path that is not UTF-8")?;
    let mut host = s.start(
        "fs host",
        &["fs", "host", "--json", "--bind", &addr, "--pcap", pcap_arg, "--duration", "6"],
    )?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    let mut player = s.start(
        "player",
        &["fs", "join", &addr, "--player", "--name", "pilot", "--json", "--duration", "3"],
    )?;
    s.expect(&player, "addon_joined", WAIT, event_with("addon_joined", "role", "Player"))?;
    ensure!(s.exit_code(&mut player, WAIT)? == Some(0), "the player did not exit 0");
    ensure!(s.exit_code(&mut host, Duration::from_secs(10))? == Some(0), "the host did not exit 0");

    let out = Command::new(&s.bin).args(["decode", "--json", pcap_arg]).output()?;
    let _ = std::fs::remove_file(&pcap);
    let lines: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    ensure!(out.status.success(), "decode failed: {}", String::from_utf8_lossy(&out.stderr));
    ensure!(lines.iter().any(|l| l["message"] == "CONNECT"), "no CONNECT decoded on port {addr}");
    let packets: Vec<&Value> = lines.iter().filter_map(|l| l["addon"].as_array()).flatten().collect();
    for name in ["ADD_PLAYER_REQUEST", "CHANGE_TO_PLAYER", "POSITION_VELOCITY"] {
        ensure!(
            packets.iter().any(|p| p["packet"] == name),
            "no {name} among {} add-on packets",
            packets.len()
        );
    }
    let position = packets.iter().find(|p| p["packet"] == "POSITION_VELOCITY").context("a position")?;
    ensure!(position["dialect"] == "FS98", "{position}");
    ensure!(position["altitude_m"].as_f64().is_some_and(|a| (a - 1000.0).abs() < 1.0), "{position}");
    Ok(())
}
