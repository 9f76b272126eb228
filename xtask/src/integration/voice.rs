//! DirectPlay Voice across processes: `dplay host --voice` with `dplay join --voice-test`
//! clients (MC-DPLVP over DirectPlay 8).

use anyhow::ensure;

use super::{Suite, WAIT, event_with, free_addr, host, is};

/// Two test clients against a forwarding host (each hears its own frames back through
/// SPEECHWITHFROM), then one against an echo host announcing DPVCTGUID_NONE (SPEECHBOUNCE).
pub(crate) fn forwarding_and_echo(s: &Suite) -> anyhow::Result<()> {
    for (kind, codec) in [("forwarding", "SC03"), ("echo", "NONE")] {
        let addr = free_addr()?;
        let host = host(s, &addr, &["--voice", kind, "--voice-codec", codec])?;
        let server = s.expect(&host, "the voice server", WAIT, is("voice_server"))?;
        ensure!(server["codec"] == format!("DPVCTGUID_{codec}"), "voice server {server}");
        let clients: Vec<_> = ["alice", "bob"]
            .iter()
            .take(if kind == "echo" { 1 } else { 2 })
            .map(|name| {
                s.start(
                    name,
                    &["join", &addr, "--json", "--name", name, "--voice-test", "20", "--duration", "20"],
                )
            })
            .collect::<anyhow::Result<_>>()?;
        for mut c in clients {
            let done = s.expect(&c, "the voice test's end", WAIT, is("voice_test_done"))?;
            ensure!(done["sent"] == 20 && done["received"].as_u64().unwrap_or(0) >= 18, "{kind}: {done}");
            ensure!(done["rtt_max_ms"].as_f64().is_some_and(|ms| ms < 1000.0), "{kind}: {done}");
            ensure!(s.exit_code(&mut c, WAIT)? == Some(0), "{kind}: join --voice-test did not exit 0");
        }
        let connected = host.events(is("voice_client_connected"));
        ensure!(connected.len() == if kind == "echo" { 1 } else { 2 }, "{kind}: {connected:?}");
        ensure!(
            connected
                .iter()
                .all(|c| c["player"].as_str().is_some_and(|p| p.starts_with("0x") && p.len() == 10)),
            "{kind}: {connected:?}"
        );
        s.expect(
            &host,
            "a voice client gone",
            WAIT,
            event_with("voice_client_gone", "reason", "disconnected"),
        )?;
    }
    Ok(())
}
