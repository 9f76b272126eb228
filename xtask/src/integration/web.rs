//! `dplay host --web`: the dashboard in a real browser (headless Chromium, Debian's `chromium`,
//! installed with apt-get when missing). Three players join, one of them named as markup; the
//! rendered page lists them, the hostile name as text. Then, driven by clicks in the page
//! (DevTools, `cdp`): a chat line reaches a player, a kick removes alice, which reports it, and
//! a ban by name removes mallory, is written to the ban file, and refuses mallory's next join
//! with DPNERR_HOSTREJECTEDCONNECTION (issue 17).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail, ensure};

use super::cdp::Browser;
use super::{Suite, WAIT, event_with, free_addr, host, is};
use crate::util::{have, root, step};

const TOKEN: &str = "integration-token";
/// A name that would run script if the page inserted it as markup.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";

/// The button labelled `label` on the row of the player named `name`, as a page expression.
fn row_button(name: &str, label: &str) -> String {
    format!(
        "[...([...document.querySelectorAll('#players tr')].find(tr => tr.cells[0].textContent === {name:?})\
         ?.querySelectorAll('button') ?? [])].find(b => b.textContent === {label:?})"
    )
}

/// A page expression: the events list has a line containing every one of `parts`.
fn logged(parts: &[&str]) -> String {
    let tests: Vec<String> = parts.iter().map(|p| format!("li.textContent.includes({p:?})")).collect();
    format!("[...document.querySelectorAll('#events li')].some(li => {})", tests.join(" && "))
}

pub(super) fn dashboard(s: &Suite) -> anyhow::Result<()> {
    let chromium = chromium()?;
    let addr = free_addr()?;
    // target/ may not exist yet (CARGO_TARGET_DIR elsewhere): the ban file's folder.
    let dir = root().join("target");
    std::fs::create_dir_all(&dir)?;
    let bans = dir.join(format!("web-bans-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&bans);
    let bans_arg = bans.display().to_string();
    let host = host(s, &addr, &["--web", "127.0.0.1:0", "--web-token", TOKEN, "--bans", &bans_arg])?;
    let web = s.expect(&host, "the dashboard's address", WAIT, is("web"))?;
    let url = web["url"].as_str().context("no url")?.to_owned();
    let at = url.trim_start_matches("http://").trim_end_matches('/').to_owned();

    let join = |name: &str| s.start(name, &["join", &addr, "--json", "--name", name, "--duration", "60"]);
    let hostile = join(HOSTILE)?;
    s.expect(&hostile, "the name table", WAIT, is("name_table"))?;
    let alice = join("alice")?;
    s.expect(&alice, "the name table", WAIT, is("name_table"))?;
    let mallory = join("mallory")?;
    s.expect(&mallory, "the name table", WAIT, is("name_table"))?;
    s.expect(&host, "mallory joining", WAIT, event_with("player_joined", "name", "mallory"))?;
    // The loop publishes at most every 250 ms.
    std::thread::sleep(Duration::from_millis(500));

    // One snapshot, no event stream: Chromium waits for the network to settle before it dumps.
    let dom = render(chromium, &format!("{url}#live=0&token={TOKEN}"), "web-dashboard.png", (1200, 700))?;
    ensure!(dom.matches("<tr data-dpnid=").count() == 4, "the page does not list four players:\n{dom}");
    ensure!(dom.contains("<td>alice</td>"), "alice is not listed:\n{dom}");
    ensure!(
        dom.contains("<td>&lt;img src=x onerror=alert(1)&gt;</td>") && !dom.contains("<img"),
        "the hostile name is not shown as text:\n{dom}"
    );
    ensure!(dom.contains("id=\"admin\""), "the administration part is missing:\n{dom}");
    ensure!(
        http(&at, "POST", "/api/players/1/kick", None)?.0 == 401,
        "a kick without the token was not refused"
    );

    // Clicks in the page, as an operator makes them.
    let mut page = Browser::open(chromium, &format!("{url}#live=0&token={TOKEN}"))?;
    page.wait_for("alice's row", &format!("!!({})", row_button("alice", "Kick")), WAIT)?;
    page.eval("document.getElementById('a-chat-text').value = 'hello from the <b>host</b>'")?;
    page.click("the chat Send button", "document.getElementById('a-chat-send')")?;
    s.expect(
        &hostile,
        "the operator's chat line",
        WAIT,
        event_with("message", "text", "hello from the <b>host</b>"),
    )?;

    page.click("alice's Kick button", &row_button("alice", "Kick"))?;
    page.wait_for("the kick's answer", &logged(&["kick alice", "202"]), WAIT)?;
    let ended = s.expect(&alice, "being removed", WAIT, is("session_ended"))?;
    ensure!(ended["reason"].as_str().is_some_and(|r| r.contains("terminated")), "alice: {ended}");
    s.expect(&host, "alice removed", WAIT, event_with("player_left", "name", "alice"))?;

    page.click("mallory's Ban name button", &row_button("mallory", "Ban name"))?;
    page.wait_for("the ban's answer", &logged(&["ban name mallory", "200"]), WAIT)?;
    s.expect(&mallory, "being removed by the ban", WAIT, is("session_ended"))?;
    let file = std::fs::read_to_string(&bans).context("the ban file was not written")?;
    ensure!(file.lines().any(|l| l == "name mallory"), "the ban file: {file}");
    let mut again =
        s.start("mallory again", &["join", &addr, "--json", "--name", "Mallory", "--duration", "5"])?;
    let refused = s.expect(&again, "the refusal", WAIT, is("session_ended"))?;
    ensure!(
        refused["reason"].as_str().is_some_and(|r| r.contains("DPNERR_HOSTREJECTEDCONNECTION")),
        "mallory's second join: {refused}"
    );
    ensure!(s.exit_code(&mut again, WAIT)? == Some(1), "a refused join did not exit 1");
    drop(page);
    let _ = std::fs::remove_file(&bans);
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
