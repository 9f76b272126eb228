//! The add-on over DirectPlay 4 in separate processes on loopback: `dplay fs host --dp4`, an
//! observer and a player that find it by enumeration under GUID_FS6 (FS-MULTIPLAYER.md 1.5;
//! seed 004). The host's enumeration socket is on a free port (`--enum-port`), as in the
//! DirectPlay 4 cases, so nothing needs UDP 47624.

use std::net::UdpSocket;

use super::{Suite, WAIT, event_with, expect_pilot_positions, is};

/// Seed 004: the player's positions (4 a second) reach the observer, named after the player's
/// DirectPlay 4 short name.
pub(super) fn addon_session(s: &Suite) -> anyhow::Result<()> {
    let enum_port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port().to_string();
    let host = s.start(
        "fs host --dp4",
        &[
            "fs",
            "host",
            "--dp4",
            "--json",
            "--bind",
            "127.0.0.1:0",
            "--enum-port",
            &enum_port,
            "--duration",
            "60",
        ],
    )?;
    s.expect(&host, "its player", WAIT, is("player_created"))?;
    let join = |name: &str, role: &str| {
        let args = ["fs", "join", "--dp4", "127.0.0.1", "--host-enum-port", &enum_port, role, "--name", name];
        let mut args = args.to_vec();
        args.extend_from_slice(&["--json", "--duration", "60"]);
        s.start(&format!("fs join --dp4 {role}"), &args)
    };
    let observer = join("tower", "--observer")?;
    s.expect(&observer, "addon_joined", WAIT, event_with("addon_joined", "role", "observer"))?;
    let player = join("pilot", "--player")?;
    s.expect(&player, "addon_joined", WAIT, event_with("addon_joined", "role", "player"))?;
    s.expect(&host, "the player accepted", WAIT, event_with("accepted", "name", "pilot"))?;
    s.expect(&host, "the observer accepted", WAIT, event_with("accepted", "name", "tower"))?;
    expect_pilot_positions(s, &observer)
}
