//! A host that FS2004 finds, in separate processes on loopback: `dplay fs host --sim fs2004` is a
//! DirectPlay 8 session under FS2004's application GUID (FS-MULTIPLAYER.md 2), answered to
//! `dplay enum` asking for that GUID and to `dplay enum --any-app` (no GUID, MC-DPLHP 2.2.1),
//! and not to an EnumQuery for another application. Bound to a free port, not FS2004's 23456.

use anyhow::ensure;

use super::{Suite, WAIT, event_with, free_addr, is};

/// FS2004's application GUID, as `dplay enum` prints it.
const GUID_FS2004: &str = "0808caa5-e62c-4691-8957-5d4524b922da";

pub(super) fn host_found(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let args = [
        "fs",
        "host",
        "--sim",
        "fs2004",
        "--bind",
        &addr,
        "--session",
        "fs2004",
        "--json",
        "--duration",
        "30",
    ];
    let host = s.start("fs host --sim fs2004", &args)?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    for ask in [&["--app-guid", GUID_FS2004][..], &["--any-app"]] {
        let what = ask.join(" ");
        let mut args = vec!["enum", addr.as_str(), "--json", "--timeout", "2"];
        args.extend_from_slice(ask);
        let mut en = s.start(&format!("enum {what}"), &args)?;
        let found = s.expect(&en, "the FS2004 session", WAIT, is("session"))?;
        ensure!(
            found["name"] == "fs2004" && found["application"] == GUID_FS2004,
            "enum {what} reported {found}"
        );
        ensure!(s.exit_code(&mut en, WAIT)? == Some(0), "enum {what} did not exit 0");
    }
    // Another application's EnumQuery is not answered (MC-DPLHP 2.2.2): enum exits 1.
    let mut other = s.start(
        "enum --app-guid DXDiag",
        &["enum", &addr, "--app-guid", "61EF80DA-691B-4247-9ADD-1C7BED2BC13E", "--json", "--timeout", "1"],
    )?;
    ensure!(s.exit_code(&mut other, WAIT)? == Some(1), "another application's enum was answered");
    // An FS2004 player joins with no handshake; the host accepts it from its player data.
    let pilot = ["fs", "join", &addr, "--player", "--name", "pilot", "--json", "--duration", "5"];
    let _pilot = s.start("fs join --sim fs2004 --player", &pilot)?;
    s.expect(&host, "the player accepted", WAIT, event_with("accepted", "name", "pilot"))?;
    s.expect(&host, "its aircraft", WAIT, event_with("plane_changed", "aircraft", "Cessna Skyhawk 172SP"))?;
    s.expect(&host, "a position", WAIT, is("position"))?;
    Ok(())
}
