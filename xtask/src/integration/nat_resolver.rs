//! `dplay nat-resolver` and `dplay host --nat-resolver` on loopback (MC-DPLNAT 3.2, 3.3): the
//! host learns the address its session socket is seen at and shows it on its dashboard (the
//! API and the page in a real browser), the session goes on, and a host without the resolver's
//! user string gets no answer and says so in one line.

use std::process::Command;

use anyhow::{Context, ensure};
use serde_json::Value;

use super::cdp::Page;
use super::web::http;
use super::{Suite, WAIT, free_addr, is};

const TOKEN: &str = "resolver-token";

pub(crate) fn resolver_on_loopback(s: &Suite) -> anyhow::Result<()> {
    let at = free_addr()?;
    let resolver = s.start(
        "resolver",
        &["nat-resolver", "--bind", &at, "--user-string", "FS2004", "--json", "--duration", "30"],
    )?;
    s.expect(&resolver, "resolving", WAIT, is("resolving"))?;
    let host_at = free_addr()?;
    let host_args =
        ["host", "--json", "--bind", &host_at, "--nat-resolver", &at, "--nat-resolver-string", "FS2004"];
    let web = ["--web", "127.0.0.1:0", "--web-token", TOKEN, "--duration", "30"];
    let host = s.start("host", &[&host_args[..], &web[..]].concat())?;
    let public = s.expect(&host, "public_address", WAIT, is("public_address"))?;
    ensure!(
        public["addr"] == host_at.as_str() && public["via"] == "nat-resolver",
        "the host printed {public} (wanted {host_at} via nat-resolver)"
    );
    let url = s.expect(&host, "the dashboard's address", WAIT, is("web"))?["url"]
        .as_str()
        .context("no url")?
        .to_owned();
    let dashboard = url.trim_start_matches("http://").trim_end_matches('/');
    let session: Value = serde_json::from_str(&http(dashboard, "GET", "/api/session", Some(TOKEN))?.1)?;
    ensure!(
        session["public_address"] == host_at.as_str() && session["public_address_via"] == "nat-resolver",
        "/api/session: {session}"
    );
    let mut page = Page::open(&format!("{url}#token={TOKEN}"), (1000, 600))?;
    let shown = format!("document.getElementById('s-public')?.textContent === '{host_at} (nat-resolver)'");
    page.wait_for("the public address on the page", &shown, WAIT)?;
    page.screenshot("web-public-address.png")?;
    drop(page);
    let player = s.start("player", &["join", &host_at, "--json", "--duration", "2"])?;
    s.expect(&player, "joined", WAIT, is("joined"))?;
    let other_at = free_addr()?;
    let other = s.start(
        "other host",
        &["host", "--json", "--bind", &other_at, "--nat-resolver", &at, "--duration", "30"],
    )?;
    let failed = s.expect(&other, "public_address_failed", WAIT, is("public_address_failed"))?;
    ensure!(failed["via"] == "nat-resolver", "{failed}");
    s.expect(&other, "still hosting", WAIT, is("name_table"))?;
    let status = Command::new("kill").args(["-USR1", &resolver.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -USR1 resolver failed");
    let stats = s.expect(&resolver, "resolver_stats", WAIT, is("resolver_stats"))?;
    ensure!(
        stats["answered"] == 1 && stats["refused_user_data"] == 4,
        "one query answered, the other host's four refused: {stats}"
    );
    Ok(())
}
