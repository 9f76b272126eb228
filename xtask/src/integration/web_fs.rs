//! `dplay fs host --web`: the add-on host's dashboard in headless Chromium (issue 17). Two
//! players fly their circuit and an observer watches; the rendered page lists every player,
//! shows the two aircraft on the map with their names over the built-in coastline (Chromium
//! resolves nothing but loopback, so OpenStreetMap's tiles cannot load), and `/api/traffic`
//! has them. The second player's name and aircraft title are markup: shown as text. Then the
//! live page, driven over the DevTools protocol: the aircraft move, and its Kick button removes
//! the second player, whose process reports it.

use anyhow::{Context, ensure};
use serde_json::Value;

use super::browser::Page;
use super::web::{chromium, http, render};
use super::{Suite, WAIT, event_with, free_addr, is};

const TOKEN: &str = "integration-token";
/// The second player's name and aircraft title: markup that would run script or style text if
/// the page inserted it as such.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";
const BOEING: &str = "Boeing <b>737</b>";

pub(super) fn map(s: &Suite) -> anyhow::Result<()> {
    let chromium = chromium()?;
    let addr = free_addr()?;
    let host_args = [
        "fs",
        "host",
        "--bind",
        &addr,
        "--web",
        "127.0.0.1:0",
        "--web-token",
        TOKEN,
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
    let _alice = join("alice", "--player", "Cessna Skyhawk 172SP")?;
    let _watcher = join("watcher", "--observer", "")?;
    s.expect(&host, "alice accepted", WAIT, event_with("accepted", "name", "alice"))?;
    s.expect(&host, "the observer accepted", WAIT, event_with("accepted", "name", "watcher"))?;
    // Both fly the same circuit from their start: a few seconds apart, they are apart on the map.
    std::thread::sleep(std::time::Duration::from_secs(4));
    let second = join(HOSTILE, "--player", BOEING)?;
    s.expect(&host, "the second aircraft", WAIT, event_with("plane_changed", "aircraft", BOEING))?;
    // Trails take a point a second; the loop publishes every 250 ms.
    std::thread::sleep(std::time::Duration::from_secs(2));

    let traffic: Value = serde_json::from_str(&http(&at, "GET", "/api/traffic", Some(TOKEN))?.1)?;
    let flying: Vec<&Value> =
        traffic["aircraft"].as_array().into_iter().flatten().filter(|a| a["lat_deg"].is_f64()).collect();
    ensure!(flying.len() == 2, "/api/traffic does not have two aircraft with positions: {traffic}");

    let dom = render(chromium, &format!("{url}#token={TOKEN}&live=0"), "web-dashboard-fs.png", (1280, 1000))?;
    let hostile = "&lt;img src=x onerror=alert(1)&gt;";
    for name in ["alice", hostile, "watcher", "fs-host"] {
        ensure!(dom.contains(&format!("<td>{name}</td>")), "{name} is not in the players table:\n{dom}");
    }
    ensure!(
        dom.matches("leaflet-marker-icon aircraft").count() == 2,
        "the map does not show two aircraft markers:\n{dom}"
    );
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
    ensure!(dom.contains("fill=\"#f2eedf\""), "the offline coastline is not drawn:\n{dom}");

    let dpnid = flying.iter().find(|a| a["name"] == HOSTILE).and_then(|a| a["dpnid"].as_str());
    let dpnid = dpnid.context("the second player is not in /api/traffic")?;
    ensure!(
        http(&at, "POST", &format!("/api/players/{dpnid}/kick"), None)?.0 == 401,
        "a kick without the token"
    );

    // The live page, as an operator has it open: the aircraft move, and its Kick button
    // removes the second player (the token comes from the address's fragment).
    let mut page = Page::open(chromium, &format!("{url}#token={TOKEN}"))?;
    let markers = "document.querySelectorAll('.leaflet-marker-icon.aircraft')";
    page.wait_for("two aircraft", &format!("{markers}.length === 2"), WAIT)?;
    let first = page.eval(&format!("{markers}[0].style.transform"))?;
    page.wait_for("an aircraft moving", &format!("{markers}[0].style.transform !== {first}"), WAIT)?;
    let row = format!("document.querySelector('#players tr[data-dpnid=\"{dpnid}\"]')");
    page.eval(&format!("{row}.querySelector('button').click()"))?;
    s.expect(&second, "being removed", WAIT, is("session_ended"))?;
    s.expect(&host, "its removal", WAIT, event_with("player_left", "name", HOSTILE))?;
    page.wait_for("the player gone", &format!("{row} === null && {markers}.length === 1"), WAIT)?;
    Ok(())
}
