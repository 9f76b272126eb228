//! A DirectPlay 4 client/server session across processes (DPSESSION_CLIENTSERVER, MC-DPL4CS
//! 1.3, 2.2.5, 2.2.28): `dplay host --dp4 --client-server` and `dplay join --dp4` clients that
//! find the session by enumeration and reach each other through the server.

use std::time::Duration;

use anyhow::ensure;

use super::dp4::{capture_file, check_capture, free_udp_port, host};
use super::{Proc, Suite, WAIT, event_with, is};

/// The host's window for replies to unknown sources (`Dp4Limits::reply_interval`, 4 per IP):
/// on loopback every client is 127.0.0.1, so each starts in a window of its own.
const REPLY_WINDOW: Duration = Duration::from_millis(1100);

/// A client joining through the enumeration port `enum_port`, sending `send` when given.
fn client(s: &Suite, enum_port: &str, name: &str, send: Option<&str>) -> anyhow::Result<Proc> {
    std::thread::sleep(REPLY_WINDOW);
    let mut args =
        vec!["join", "--dp4", "127.0.0.1", "--host-enum-port", enum_port, "--json", "--name", name];
    args.extend_from_slice(&["--duration", "20"]);
    if let Some(text) = send {
        args.extend_from_slice(&["--send", text]);
    }
    let p = s.start(name, &args)?;
    let joining = s.expect(&p, "joining", WAIT, is("joining"))?;
    ensure!(joining["role"] == "client", "{name} did not see a client/server session: {joining}");
    let table = s.expect(&p, "the name table", WAIT, is("name_table"))?;
    // DPID_SERVERPLAYER is 1 on the wire.
    let server = table["players"]
        .as_array()
        .is_some_and(|players| players.iter().any(|p| p["id"] == "0x00000001" && p["name"] == "server"));
    ensure!(server, "{name}'s table has no server player 1: {table}");
    Ok(p)
}

/// Two clients and the server: each client's table holds the server player; alice's message
/// to everyone reaches the server and, relayed, bob; carol's reaches alice and bob; neither
/// client ever sees the other's application player; the capture decodes cleanly with the
/// ENUMPLAYERSREPLY name tables.
pub(super) fn session(s: &Suite) -> anyhow::Result<()> {
    let enum_port = free_udp_port()?;
    let (pcap, pcap_arg) = capture_file("dp4-cs");
    let (server, _) = host(s, &enum_port, &["--client-server", "--name", "server", "--pcap", &pcap_arg])?;
    let hosting = s.expect(&server, "hosting", WAIT, is("hosting"))?;
    ensure!(hosting["mode"] == "client-server", "the host does not say client/server: {hosting}");
    let bob = client(s, &enum_port, "bob", None)?;
    s.expect(&server, "bob joining", WAIT, event_with("player_joined", "name", "bob"))?;
    let alice = client(s, &enum_port, "alice", Some("hello from alice"))?;
    s.expect(&server, "alice's message", WAIT, event_with("message", "text", "hello from alice"))?;
    s.expect(&bob, "alice's message, relayed", WAIT, event_with("message", "text", "hello from alice"))?;
    let carol = client(s, &enum_port, "carol", Some("hello from carol"))?;
    for p in [&alice, &bob] {
        s.expect(p, "carol's message, relayed", WAIT, event_with("message", "text", "hello from carol"))?;
    }
    for (p, other) in [(&bob, "alice"), (&bob, "carol"), (&alice, "carol")] {
        let seen = p.events(event_with("player_joined", "name", other));
        ensure!(seen.is_empty(), "{} learned of {other}'s player: {seen:?}", p.name());
    }
    drop((carol, alice, bob, server));
    check_capture(&pcap, "Enum Players Reply")?;
    let _ = std::fs::remove_file(&pcap);
    Ok(())
}
