//! The live traffic table of `dplay fs host` on a terminal (issue 25 item 17): the screen is
//! cleared when the table is first drawn, so the line that says where players join is the
//! table's first line, drawn after the clear. The terminal is a pseudo-terminal from
//! `script` (util-linux).

use std::process::{Command, Stdio};

use anyhow::{Context, ensure};

use super::Suite;
use crate::util::have;

/// FS2004 and FS98 hosts (free ports; FS98's enumeration socket too), each for a second on a
/// pseudo-terminal: after the last screen clear (`ESC [2J`) comes "players can join at" with
/// the host's address.
pub(super) fn keeps_where_to_join(s: &Suite) -> anyhow::Result<()> {
    if !have("script") {
        println!("    skipped: needs script (util-linux)");
        return Ok(());
    }
    let enum_port = super::dp4::free_udp_port()?;
    let bin = s.bin.to_str().context("a UTF-8 path to dplay")?;
    for command in [
        format!("{bin} fs host --bind 127.0.0.1:0 --duration 1"),
        format!("{bin} fs host --sim fs98 --bind 127.0.0.1 --enum-port {enum_port} --duration 1"),
    ] {
        let out = Command::new("script")
            .args(["-qec", &command, "/dev/null"])
            .stdin(Stdio::null())
            .output()
            .context("cannot run script")?;
        let text = String::from_utf8_lossy(&out.stdout);
        ensure!(out.status.success(), "{command}: {:?}: {text}", out.status.code());
        let (_, after) =
            text.rsplit_once("\x1b[2J").with_context(|| format!("{command}: no table: {text}"))?;
        ensure!(after.contains("players can join at 127.0.0.1:"), "{command}: the screen cleared it: {text}");
    }
    Ok(())
}
