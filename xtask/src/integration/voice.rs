//! DirectPlay Voice across processes: `dplay host --voice` with `dplay join --voice-test`
//! clients (MC-DPLVP over DirectPlay 8, and over DirectPlay 4 with `--dp4`), the forwarding
//! host's dashboard in a browser.

use anyhow::ensure;

use super::cdp::Page;
use super::{Suite, WAIT, event_with, free_addr, host, is};

const TOKEN: &str = "voice-token";

/// Two test clients against a forwarding host (each hears its own frames back through
/// SPEECHWITHFROM), then one against an echo host announcing DPVCTGUID_NONE (SPEECHBOUNCE).
pub(crate) fn forwarding_and_echo(s: &Suite) -> anyhow::Result<()> {
    for (kind, codec) in [("forwarding", "SC03"), ("echo", "NONE")] {
        let addr = free_addr()?;
        let host = host(
            s,
            &addr,
            &["--voice", kind, "--voice-codec", codec, "--web", "127.0.0.1:0", "--web-token", TOKEN],
        )?;
        let server = s.expect(&host, "the voice server", WAIT, is("voice_server"))?;
        ensure!(server["codec"] == format!("DPVCTGUID_{codec}"), "voice server {server}");
        // The dashboard in a browser, for the forwarding host: its session type and codec,
        // then each client "talking" while it sends.
        let mut page = if kind == "forwarding" {
            let web = s.expect(&host, "the dashboard's address", WAIT, is("web"))?;
            let url = web["url"].as_str().unwrap_or_default().to_owned();
            let mut page = Page::open(&format!("{url}#token={TOKEN}"), (1200, 600))?;
            page.wait_for(
                "the voice session on the page",
                "document.getElementById('s-voice').textContent.startsWith('DVSESSIONTYPE_FORWARDING, DPVCTGUID_SC03')",
                WAIT,
            )?;
            Some(page)
        } else {
            None
        };
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
        if let Some(page) = &mut page {
            page.wait_for(
                "two players talking on the page",
                "document.querySelectorAll('#players td.voice.talking').length === 2",
                WAIT,
            )?;
            page.screenshot("web-voice.png")?;
        }
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

/// Over DirectPlay 4 (DPSP_MSG_VOICE, MC-DPL4CS 2.2.54): two test clients against a forwarding
/// host, each connected under its application player's ID and hearing its own frames back
/// through SPEECHWITHFROM; then one against an echo host (SPEECHBOUNCE).
pub(crate) fn over_dp4(s: &Suite) -> anyhow::Result<()> {
    for kind in ["forwarding", "echo"] {
        let enum_port = super::dp4::free_udp_port()?;
        let (host, tcp) = super::dp4::host(s, &enum_port, &["--voice", kind])?;
        s.expect(&host, "the voice server", WAIT, is("voice_server"))?;
        let names: &[&str] = if kind == "echo" { &["carol"] } else { &["alice", "bob"] };
        let clients: Vec<_> = names
            .iter()
            .map(|name| {
                let args = [
                    "join",
                    "--dp4",
                    &tcp,
                    "--json",
                    "--name",
                    name,
                    "--voice-test",
                    "20",
                    "--duration",
                    "20",
                ];
                s.start(name, &args)
            })
            .collect::<anyhow::Result<_>>()?;
        let mut players = Vec::new();
        for mut c in clients {
            let me = s.expect(&c, "its player", WAIT, is("player_created"))?;
            players.push(me["id"].as_str().unwrap_or_default().to_owned());
            let done = s.expect(&c, "the voice test's end", WAIT, is("voice_test_done"))?;
            ensure!(done["sent"] == 20 && done["received"].as_u64().unwrap_or(0) >= 18, "{kind}: {done}");
            ensure!(s.exit_code(&mut c, WAIT)? == Some(0), "{kind}: join --dp4 --voice-test did not exit 0");
        }
        // Each voice client is its application player (docs/decisions.md, "DirectPlay Voice").
        let connected = host.events(is("voice_client_connected"));
        // Both write IDs as `0x%08X` (docs/json-events.md), so they compare as they are.
        let mut dvids: Vec<_> =
            connected.iter().map(|c| c["player"].as_str().unwrap_or_default().to_owned()).collect();
        dvids.sort();
        players.sort();
        ensure!(dvids == players, "{kind}: voice clients {dvids:?}, players {players:?}");
        s.expect(
            &host,
            "a voice client gone",
            WAIT,
            event_with("voice_client_gone", "reason", "disconnected"),
        )?;
    }
    Ok(())
}
