//! `dplay fs host --web`: the add-on host's dashboard in headless Chromium over DevTools
//! (`cdp`; issue 17). Two players fly their circuit and an observer watches; the live page lists
//! every player and shows the two aircraft on the map with their names over the built-in
//! coastline (Chromium resolves nothing but loopback, so OpenStreetMap's tiles cannot load), and
//! `/api/traffic` has them. The second player's name and aircraft title are markup: shown as
//! text, and no dialog opened. A screenshot goes to target/. Then, by clicks in the page: the
//! second player is kicked and its process reports its removal; the first is banned by name,
//! removed, written to the ban file, and its next `dplay fs join` is refused with
//! DPNERR_HOSTREJECTEDCONNECTION, which the page lists.

use std::process::Command;
use std::time::Duration;

use anyhow::{Context, ensure};
use serde_json::Value;

use super::cdp::Page;
use super::web::{http, logged, row_button};
use super::{Suite, WAIT, event_with, free_addr, is};
use crate::util::root;

const TOKEN: &str = "integration-token";
/// The second player's name and aircraft title: markup that would run script or style text if
/// the page inserted it as such.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";
const BOEING: &str = "Boeing <b>737</b>";

pub(super) fn map(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let dir = root().join("target");
    std::fs::create_dir_all(&dir)?;
    let bans = dir.join(format!("web-fs-bans-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&bans);
    let bans_arg = bans.display().to_string();
    let host_args = [
        "fs",
        "host",
        "--bind",
        &addr,
        "--web",
        "127.0.0.1:0",
        "--web-token",
        TOKEN,
        "--bans",
        &bans_arg,
        "--json",
        "--duration",
        "60",
    ];
    let host = s.start("fs host --web", &host_args)?;
    let web = s.expect(&host, "the dashboard's address", WAIT, is("web"))?;
    let url = web["url"].as_str().context("no url")?.to_owned();
    let at = url.trim_start_matches("http://").trim_end_matches('/').to_owned();

    let join = |name: &str, role: &str, aircraft: &str| {
        let args =
            ["fs", "join", &addr, role, "--name", name, "--aircraft", aircraft, "--json", "--duration", "60"];
        s.start(name, &args)
    };
    let alice = join("alice", "--player", "Cessna Skyhawk 172SP")?;
    let _watcher = join("watcher", "--observer", "")?;
    s.expect(&host, "alice accepted", WAIT, event_with("accepted", "name", "alice"))?;
    s.expect(&host, "the observer accepted", WAIT, event_with("accepted", "name", "watcher"))?;
    // Both fly the same circuit from their start: a few seconds apart, they are apart on the map.
    std::thread::sleep(Duration::from_secs(4));
    let second = join(HOSTILE, "--player", BOEING)?;
    s.expect(&host, "the second aircraft", WAIT, event_with("plane_changed", "aircraft", BOEING))?;

    let flying = two_flying(&at)?;
    let dpnid = flying.iter().find(|a| a["name"] == HOSTILE).and_then(|a| a["dpnid"].as_str());
    let dpnid = dpnid.context("the second player is not in /api/traffic")?.to_owned();
    ensure!(
        http(&at, "POST", &format!("/api/players/{dpnid}/kick"), None)?.0 == 401,
        "a kick without the token"
    );

    // The live page, as an operator keeps it open (the token comes from the address's fragment).
    let mut page = Page::open(&format!("{url}#token={TOKEN}"), (1280, 1000))?;
    let markers = "document.querySelectorAll('.leaflet-marker-icon.aircraft')";
    page.wait_for("four players", "document.querySelectorAll('#players tr[data-dpnid]').length === 4", WAIT)?;
    page.wait_for("two aircraft", &format!("{markers}.length === 2"), WAIT)?;
    page.wait_for("the offline coastline", "!!document.querySelector('path[fill=\"#f2eedf\"]')", WAIT)?;
    // Trails take a point a second: let them grow before the picture.
    std::thread::sleep(Duration::from_secs(2));
    let shot = page.screenshot("web-dashboard-fs.png")?;

    let dom = page.html()?;
    let hostile = "&lt;img src=x onerror=alert(1)&gt;";
    for name in ["alice", hostile, "watcher", "fs-host"] {
        ensure!(dom.contains(&format!("<td>{name}</td>")), "{name} is not in the players table:\n{dom}");
    }
    for name in ["alice", hostile] {
        ensure!(
            dom.contains(&format!("<span class=\"label\">{name}</span>")),
            "no marker named {name}:\n{dom}"
        );
    }
    ensure!(
        dom.contains("<td>Boeing &lt;b&gt;737&lt;/b&gt;</td>") && !dom.contains("<b>737"),
        "the second aircraft's title is not shown as text:\n{dom}"
    );
    // Leaflet's tiles are images; the name must not have become one.
    ensure!(!dom.contains("<img src=\"x\""), "the hostile name became markup:\n{dom}");
    ensure!(page.dialogs()? == 0, "the page's scripts opened a dialog: markup ran as script");
    let first = page.eval(&format!("{markers}[0].style.transform"))?;
    page.wait_for("an aircraft moving", &format!("{markers}[0].style.transform !== {first}"), WAIT)?;

    // A kick by a click: the second player is removed and says so.
    page.click("the second player's Kick button", &row_button(HOSTILE, "Kick"))?;
    s.expect(&second, "being removed", WAIT, is("session_ended"))?;
    s.expect(&host, "its removal", WAIT, event_with("player_left", "name", HOSTILE))?;
    let row = format!("document.querySelector('#players tr[data-dpnid=\"{dpnid}\"]')");
    page.wait_for("the player gone", &format!("{row} === null && {markers}.length === 1"), WAIT)?;

    // A ban by name by a click: alice is removed, the file has her, her next join is refused.
    page.click("alice's Ban name button", &row_button("alice", "Ban name"))?;
    page.wait_for("the ban's answer", &logged(&["ban name alice", "200"]), WAIT)?;
    s.expect(&alice, "being removed by the ban", WAIT, is("session_ended"))?;
    let file = std::fs::read_to_string(&bans).context("the ban file was not written")?;
    ensure!(file.lines().any(|l| l == "name alice"), "the ban file: {file}");
    let again = Command::new(&s.bin)
        .args(["fs", "join", &addr, "--player", "--name", "Alice", "--timeout", "5"])
        .output()
        .context("running dplay fs join")?;
    let stderr = String::from_utf8_lossy(&again.stderr);
    ensure!(again.status.code() == Some(1), "a refused fs join did not exit 1: {stderr}");
    ensure!(
        stderr.contains("refused the join with DPNERR_HOSTREJECTEDCONNECTION"),
        "alice's next join: {stderr}"
    );
    page.wait_for(
        "alice's refusal",
        &logged(&["join refused", "Alice", "DPNERR_HOSTREJECTEDCONNECTION"]),
        WAIT,
    )?;
    println!("    screenshot: {}", shot.display());
    drop(page);
    let _ = std::fs::remove_file(&bans);
    Ok(())
}

/// `/api/traffic`'s aircraft once two have positions (the loop publishes every 250 ms, a
/// player's first position comes after its plane).
#[allow(clippy::disallowed_methods)] // a deadline for real processes
fn two_flying(at: &str) -> anyhow::Result<Vec<Value>> {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let traffic: Value = serde_json::from_str(&http(at, "GET", "/api/traffic", Some(TOKEN))?.1)?;
        let flying: Vec<Value> = traffic["aircraft"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["lat_deg"].is_f64())
            .cloned()
            .collect();
        if flying.len() == 2 {
            return Ok(flying);
        }
        ensure!(
            std::time::Instant::now() < deadline,
            "/api/traffic does not have two aircraft with positions: {traffic}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}
