//! `dplay host --web`: the dashboard in a real browser (headless Chromium, Debian's `chromium`,
//! installed with apt-get when missing). Two players join, one of them named as markup; the
//! rendered page lists both, the hostile name as text; a kick through the JSON API with the
//! admin token removes the other, which reports it (issue 17).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::{Suite, WAIT, event_with, free_addr, host, is};
use crate::util::{have, root, step};

const TOKEN: &str = "integration-token";
/// A name that would run script if the page inserted it as markup.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

pub(super) fn dashboard(s: &Suite) -> anyhow::Result<()> {
    let chromium = chromium()?;
    let addr = free_addr()?;
    let host = host(s, &addr, &["--web", "127.0.0.1:0", "--web-token", TOKEN])?;
    let web = s.expect(&host, "the dashboard's address", WAIT, is("web"))?;
    let url = web["url"].as_str().context("no url")?.to_owned();
    let at = url.trim_start_matches("http://").trim_end_matches('/').to_owned();

    let join = |name: &str| s.start(name, &["join", &addr, "--json", "--name", name, "--duration", "60"]);
    let hostile = join(HOSTILE)?;
    s.expect(&hostile, "the name table", WAIT, is("name_table"))?;
    let alice = join("alice")?;
    s.expect(&alice, "the name table", WAIT, is("name_table"))?;
    s.expect(&host, "alice joining", WAIT, event_with("player_joined", "name", "alice"))?;
    // The loop publishes at most every 250 ms.
    std::thread::sleep(Duration::from_millis(500));

    // One snapshot, no event stream: Chromium waits for the network to settle before it dumps.
    // The reads need the token (no --web-public): the page takes it from the fragment.
    let dom = render(chromium, &format!("{url}#token={TOKEN}&live=0"), "web-dashboard.png", (1200, 700))?;
    ensure!(dom.matches("<tr data-dpnid=").count() == 3, "the page does not list three players:\n{dom}");
    ensure!(dom.contains("<td>alice</td>"), "alice is not listed:\n{dom}");
    ensure!(
        dom.contains("<td>&lt;img src=x onerror=alert(1)&gt;</td>") && !dom.contains("<img"),
        "the hostile name is not shown as text:\n{dom}"
    );

    let players: Value = serde_json::from_str(&http(&at, "GET", "/api/players", Some(TOKEN))?.1)?;
    let dpnid = players
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["name"] == "alice")
        .and_then(|p| p["dpnid"].as_str())
        .context("alice not in /api/players")?
        .to_owned();
    let kick = format!("/api/players/{dpnid}/kick");
    ensure!(http(&at, "POST", &kick, None)?.0 == 401, "a kick without the token was not refused");
    let (status, body) = http(&at, "POST", &kick, Some(TOKEN))?;
    ensure!(status == 202, "kick answered {status}: {body}");
    let ended = s.expect(&alice, "being removed", WAIT, is("session_ended"))?;
    ensure!(ended["reason"].as_str().is_some_and(|r| r.contains("terminated")), "alice: {ended}");
    s.expect(&host, "alice removed", WAIT, event_with("player_left", "name", "alice"))?;
    Ok(())
}

/// Chromium, installed from Debian's packages when missing.
pub(super) fn chromium() -> anyhow::Result<&'static str> {
    if !have("chromium") {
        println!(
            "==> chromium is missing: installing Debian's chromium package (the dashboard case needs it)"
        );
        step("apt-get update", Command::new("apt-get").args(["update", "-qq"]))?;
        step(
            "install chromium",
            Command::new("apt-get")
                .args(["install", "-y", "-qq", "--no-install-recommends", "chromium"])
                .env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
        ensure!(
            have("chromium"),
            "chromium is still missing after apt-get; install Debian's chromium package"
        );
    }
    Ok("chromium")
}

/// The page's DOM once its script ran, and a screenshot `shot` of `size` pixels into target/
/// (a test artifact). Chromium resolves no name but loopback: it never leaves the machine (the
/// map then draws its built-in coastline).
pub(super) fn render(chromium: &str, url: &str, shot: &str, size: (u32, u32)) -> anyhow::Result<String> {
    let profile = std::env::temp_dir().join(format!("dplay-web-chromium-{}", std::process::id()));
    let flags = |profile: &Path| {
        let mut c = Command::new(chromium);
        c.args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--virtual-time-budget=3000",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ])
        .arg(format!("--window-size={},{}", size.0, size.1))
        .arg(format!("--user-data-dir={}", profile.display()));
        c
    };
    let out = flags(&profile).args(["--dump-dom", url]).output().context("cannot run chromium")?;
    let shot = root().join("target").join(shot);
    let _ = flags(&profile).arg(format!("--screenshot={}", shot.display())).arg(url).output();
    let _ = std::fs::remove_dir_all(&profile);
    if !out.status.success() {
        bail!("chromium failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One HTTP/1.1 request to the dashboard at `at`; the status and the body.
pub(super) fn http(at: &str, method: &str, path: &str, token: Option<&str>) -> anyhow::Result<(u16, String)> {
    let mut s = TcpStream::connect(at)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {at}\r\n{auth}Content-Length: 0\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    s.read_to_string(&mut response)?;
    let status = response.split(' ').nth(1).and_then(|c| c.parse().ok()).context("no status")?;
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    Ok((status, body))
}
