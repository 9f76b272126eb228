//! `dplay host --relay --web` (issue 23; docs/relay.md): the relay's panel in a real browser
//! (headless Chromium over DevTools, `cdp`). Two members join on loopback and each sends a
//! message the other gets through the relay; the panel lists both members by name with their
//! relay endpoints and the datagrams relayed from and to each; a stranger's datagram at an
//! endpoint (from a socket this case opened, to a port the host opened) is counted as dropped;
//! and the relay's line with its members comes on SIGUSR1.

use std::net::UdpSocket;
use std::process::Command;

use anyhow::{Context, ensure};

use super::cdp::Page;
use super::{Suite, WAIT, event_with, free_addr, host, is};

const TOKEN: &str = "relay-token";

/// A page expression: the relay panel's row of the member named `name` has relayed datagrams
/// both from and to it.
fn relayed_both_ways(name: &str) -> String {
    format!(
        "[...document.querySelectorAll('#relay-members tr')].some(tr => tr.cells[0].textContent === {name:?} \
         && Number(tr.cells[4].textContent) > 0 && Number(tr.cells[6].textContent) > 0)"
    )
}

pub(super) fn dashboard(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--relay", "--web", "127.0.0.1:0", "--web-token", TOKEN])?;
    let web = s.expect(&host, "the dashboard's address", WAIT, is("web"))?;
    let url = web["url"].as_str().context("no url")?.to_owned();
    let mut page = Page::open(&format!("{url}#token={TOKEN}"), (1300, 800))?;
    page.wait_for("the relay panel", "!document.getElementById('relay').hidden", WAIT)?;

    let join = |name: &str| {
        let text = format!("hello from {name}");
        s.start(name, &["join", &addr, "--json", "--name", name, "--send", &text, "--duration", "30"])
    };
    let first = join("first")?;
    s.expect(&first, "the name table", WAIT, is("name_table"))?;
    let second = join("second")?;
    s.expect(&second, "the name table", WAIT, is("name_table"))?;
    s.expect(&first, "second's message, relayed", WAIT, event_with("message", "text", "hello from second"))?;
    for name in ["first", "second"] {
        page.wait_for(&format!("{name}'s relayed datagrams"), &relayed_both_ways(name), WAIT)?;
    }
    let endpoint = page.eval(
        "[...document.querySelectorAll('#relay-members tr')].find(tr => tr.cells[0].textContent === 'first')\
         ?.cells[3].textContent",
    )?;
    let endpoint = endpoint.as_str().context("no relay endpoint for first")?.to_owned();
    ensure!(endpoint.starts_with("127.0.0.1:") && endpoint != addr, "first's relay endpoint: {endpoint}");

    // A stranger (a socket of ours) at first's endpoint: dropped, and counted on the page.
    let stranger = UdpSocket::bind("127.0.0.1:0")?;
    stranger.send_to(&[0x88, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], &endpoint)?;
    page.wait_for(
        "the stranger counted",
        "/dropped: [1-9][0-9]* from strangers/.test(document.getElementById('relay-summary').textContent)",
        WAIT,
    )?;
    page.screenshot("web-relay.png")?;

    // SIGUSR1: the drops-and-refusals line, then the relay's with its two members.
    let status = Command::new("kill").args(["-USR1", &host.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -USR1 failed");
    let line = s.expect(&host, "the relay's line on SIGUSR1", WAIT, is("relay"))?;
    let members = line["members"].as_array().context("no members in the relay's line")?;
    ensure!(
        members.len() == 2 && line["strangers"].as_u64().is_some_and(|n| n >= 1),
        "the relay's line on SIGUSR1: {line}"
    );
    ensure!(
        members.iter().any(|m| m["endpoint"] == endpoint.as_str() && m["datagrams_from"].as_u64() > Some(0)),
        "first's endpoint {endpoint} is not in the relay's line: {line}"
    );
    ensure!(page.dialogs()? == 0, "the page's scripts opened a dialog");
    Ok(())
}
