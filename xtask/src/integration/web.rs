//! `dplay host --web`: the dashboard in a real browser (headless Chromium over DevTools,
//! `cdp`). Three players join, one of them named as markup; the live page lists them, the
//! hostile name as text, and a chat line of markup from a player shows as text too, with no
//! dialog opened by the page's scripts. Then, by clicks in the page: a chat line reaches a
//! player, a kick removes alice, which reports it, and a ban by name removes mallory, is written
//! to the ban file, and refuses mallory's next join with DPNERR_HOSTREJECTEDCONNECTION, which
//! the page lists as a refusal, as it does a join with a wrong password (issue 17).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use anyhow::{Context, ensure};

use super::cdp::Page;
use super::{Suite, WAIT, event_with, free_addr, host, is};
use crate::util::root;

const TOKEN: &str = "integration-token";
/// A name that would run script if the page inserted it as markup.
const HOSTILE: &str = "<img src=x onerror=alert(1)>";
/// A chat line that would, too.
const HOSTILE_CHAT: &str = "<img src=y onerror=alert(2)> hi";

/// The button labelled `label` on the row of the player named `name`, as a page expression.
pub(super) fn row_button(name: &str, label: &str) -> String {
    format!(
        "[...([...document.querySelectorAll('#players tr')].find(tr => tr.cells[0].textContent === {name:?})\
         ?.querySelectorAll('button') ?? [])].find(b => b.textContent === {label:?})"
    )
}

/// A page expression: the events list has a line containing every one of `parts`.
pub(super) fn logged(parts: &[&str]) -> String {
    let tests: Vec<String> = parts.iter().map(|p| format!("li.textContent.includes({p:?})")).collect();
    format!("[...document.querySelectorAll('#events li')].some(li => {})", tests.join(" && "))
}

pub(super) fn dashboard(s: &Suite) -> anyhow::Result<()> {
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
    ensure!(
        http(&at, "POST", "/api/players/1/kick", None)?.0 == 401,
        "a kick without the token was not refused"
    );

    // The live page, as an operator keeps it open.
    let mut page = Page::open(&format!("{url}#token={TOKEN}"), (1200, 800))?;
    let join = |name: &str, extra: &[&str]| {
        let mut args = vec!["join", &addr, "--json", "--name", name, "--duration", "60"];
        args.extend_from_slice(extra);
        s.start(name, &args)
    };
    let hostile = join(HOSTILE, &["--send", HOSTILE_CHAT])?;
    s.expect(&hostile, "the name table", WAIT, is("name_table"))?;
    let alice = join("alice", &[])?;
    s.expect(&alice, "the name table", WAIT, is("name_table"))?;
    let mallory = join("mallory", &[])?;
    s.expect(&mallory, "the name table", WAIT, is("name_table"))?;
    page.wait_for("four players", "document.querySelectorAll('#players tr[data-dpnid]').length === 4", WAIT)?;
    page.wait_for("the hostile chat line", &logged(&["chat from", HOSTILE_CHAT]), WAIT)?;
    page.screenshot("web-dashboard.png")?;

    let dom = page.html()?;
    ensure!(dom.contains("<td>alice</td>"), "alice is not listed:\n{dom}");
    ensure!(
        dom.contains("<td>&lt;img src=x onerror=alert(1)&gt;</td>"),
        "the hostile name is not shown as text:\n{dom}"
    );
    ensure!(!dom.contains("<img"), "markup from the network became an element:\n{dom}");
    ensure!(page.dialogs()? == 0, "the page's scripts opened a dialog: markup ran as script");
    ensure!(dom.contains("id=\"admin\""), "the administration part is missing:\n{dom}");

    // Clicks in the page, as an operator makes them.
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
    // The page drops alice's row when its event stream says so, moving the rows below it: a
    // click aimed before that lands beside mallory's button.
    page.wait_for(
        "alice's row gone",
        "document.querySelectorAll('#players tr[data-dpnid]').length === 3",
        WAIT,
    )?;

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
    s.expect(&host, "the refusal reported", WAIT, |v| {
        v["event"] == "join_refused" && v["name"] == "Mallory" && v["code"] == "DPNERR_HOSTREJECTEDCONNECTION"
    })?;
    page.wait_for(
        "mallory's refusal",
        &logged(&["join refused", "Mallory", "DPNERR_HOSTREJECTEDCONNECTION"]),
        WAIT,
    )?;

    // A wrong password, set live through the page's API: refused, and listed as such.
    let (status, _) = http_body(&at, "POST", "/api/settings", TOKEN, r#"{"password":"secret"}"#)?;
    ensure!(status == 202, "setting a password: {status}");
    let mut wrong = s.start(
        "a wrong password",
        &["join", &addr, "--json", "--name", "guess", "--password", "nope", "--duration", "5"],
    )?;
    s.expect(&wrong, "the refusal", WAIT, is("session_ended"))?;
    ensure!(s.exit_code(&mut wrong, WAIT)? == Some(1), "a refused join did not exit 1");
    page.wait_for("the wrong password", &logged(&["join refused", "guess", "DPNERR_INVALIDPASSWORD"]), WAIT)?;
    ensure!(page.dialogs()? == 0, "the page's scripts opened a dialog: markup ran as script");
    drop(page);
    let _ = std::fs::remove_file(&bans);
    Ok(())
}

/// One HTTP/1.1 request to the dashboard at `at`; the status and the body.
pub(super) fn http(at: &str, method: &str, path: &str, token: Option<&str>) -> anyhow::Result<(u16, String)> {
    request(at, method, path, token, "")
}

/// One HTTP/1.1 request with a JSON body and the token.
fn http_body(at: &str, method: &str, path: &str, token: &str, body: &str) -> anyhow::Result<(u16, String)> {
    request(at, method, path, Some(token), body)
}

fn request(
    at: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: &str,
) -> anyhow::Result<(u16, String)> {
    let mut s = TcpStream::connect(at)?;
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let auth = token.map(|t| format!("Authorization: Bearer {t}\r\n")).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {at}\r\n{auth}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = String::new();
    s.read_to_string(&mut response)?;
    let status = response.split(' ').nth(1).and_then(|c| c.parse().ok()).context("no status")?;
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    Ok((status, body))
}
