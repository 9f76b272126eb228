//! `dplay fs host --dp4 --web`: the FS98 add-on host's dashboard over HTTP, with real processes
//! on loopback (issue 17). Two FS98 players find the host by enumeration and fly;
//! `/api/players` lists both with a round trip and bytes, `/api/traffic` with their aircraft;
//! `dplay admin` kicks one (DELETEPLAYER: its process reports the removal), bans the other's
//! name (removed at once, and again at its next join, once its player is created: DirectPlay 4
//! joins are unnamed), then bans the address, and the next join is refused with
//! DPERR_ACCESSDENIED.

use std::net::UdpSocket;

use anyhow::{Context, ensure};
use serde_json::Value;

use super::web::http;
use super::{Proc, Suite, WAIT, event_with, is};

const TOKEN: &str = "fs98-integration-token";

/// `dplay admin` against the dashboard at `at`; it must succeed.
fn admin(s: &Suite, at: &str, command: &[&str]) -> anyhow::Result<()> {
    let mut args = vec!["admin", "--token", TOKEN, at];
    args.extend_from_slice(command);
    let mut p = s.start(&format!("admin {}", command.join(" ")), &args)?;
    let code = s.exit_code(&mut p, WAIT)?;
    ensure!(code == Some(0), "dplay admin {} exited with {code:?}", command.join(" "));
    Ok(())
}

/// The JSON of `path`, once `f` holds of it (the loop publishes at most every 250 ms).
#[allow(clippy::disallowed_methods)] // the case's own clock
fn json_until(at: &str, path: &str, f: impl Fn(&Value) -> bool) -> anyhow::Result<Value> {
    let until = std::time::Instant::now() + WAIT;
    loop {
        let (status, body) = http(at, "GET", path, Some(TOKEN))?;
        let value: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        if status == 200 && f(&value) {
            return Ok(value);
        }
        ensure!(std::time::Instant::now() < until, "{path} never became as expected: {status} {body}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array().into_iter().flatten().filter_map(|p| p["name"].as_str()).collect()
}

pub(super) fn dashboard(s: &Suite) -> anyhow::Result<()> {
    let enum_port = UdpSocket::bind("127.0.0.1:0")?.local_addr()?.port().to_string();
    // target/ may not exist yet (CARGO_TARGET_DIR elsewhere): the ban file's folder.
    let dir = crate::util::root().join("target");
    std::fs::create_dir_all(&dir)?;
    let bans = dir.join(format!("web-fs98-bans-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&bans);
    let bans_arg = bans.display().to_string();
    let host_args = [
        "fs",
        "host",
        "--dp4",
        "--json",
        "--bind",
        "127.0.0.1:0",
        "--enum-port",
        &enum_port,
        "--web",
        "127.0.0.1:0",
        "--web-token",
        TOKEN,
        "--bans",
        &bans_arg,
        "--duration",
        "60",
    ];
    let host = s.start("fs host --dp4 --web", &host_args)?;
    let web = s.expect(&host, "the dashboard's address", WAIT, is("web"))?;
    let url = web["url"].as_str().context("no url")?.to_owned();
    let at = url.trim_start_matches("http://").trim_end_matches('/').to_owned();
    s.expect(&host, "its player", WAIT, is("player_created"))?;
    let hosting = s.expect(&host, "its addresses", WAIT, is("hosting"))?;
    let port = hosting["tcp"].as_str().and_then(|a| a.rsplit(':').next()).context("no TCP listener")?;
    let listener = format!("127.0.0.1:{port}");

    // Players find the host by enumeration (FS-MULTIPLAYER.md 1.5); the banned join at its
    // TCP listener (the host's enumeration answers are rate-limited per address).
    let join_at = |name: &str, at: &str| -> anyhow::Result<Proc> {
        let args = [
            "fs",
            "join",
            "--dp4",
            at,
            "--host-enum-port",
            &enum_port,
            "--player",
            "--name",
            name,
            "--json",
            "--duration",
            "60",
        ];
        s.start(name, &args)
    };
    let alice = join_at("alice", "127.0.0.1")?;
    let bob = join_at("bob", "127.0.0.1")?;
    s.expect(&host, "alice accepted", WAIT, event_with("accepted", "name", "alice"))?;
    s.expect(&host, "bob accepted", WAIT, event_with("accepted", "name", "bob"))?;

    // Each with its round trip (the dashboard PINGs every instance) and bytes each way.
    let measured = |p: &Value| p["rtt_ms"].is_u64() && p["bytes_received"].as_u64().is_some_and(|b| b > 0);
    let players = json_until(&at, "/api/players", |p| {
        let rows = p.as_array().into_iter().flatten();
        rows.filter(|p| (p["name"] == "alice" || p["name"] == "bob") && measured(p)).count() == 2
    })?;
    ensure!(names(&players).contains(&"fs-host"), "the host's own player is not listed: {players}");
    let traffic = json_until(&at, "/api/traffic", |t| {
        t["aircraft"].as_array().is_some_and(|a| a.iter().filter(|a| a["lat_deg"].is_f64()).count() == 2)
    })?;
    let flying = names(&traffic["aircraft"]);
    ensure!(flying.contains(&"alice") && flying.contains(&"bob"), "/api/traffic: {traffic}");
    let session: Value = serde_json::from_str(&http(&at, "GET", "/api/session", Some(TOKEN))?.1)?;
    ensure!(session["protocol"] == "DirectPlay 4" && session["addon"] == true, "/api/session: {session}");

    // MC-DPL4CS 3.1.5.14: the kick deletes alice's instance; her process says so.
    admin(s, &at, &["kick", "alice"])?;
    s.expect(&alice, "being removed", WAIT, is("session_ended"))?;
    s.expect(&host, "alice's removal", WAIT, event_with("player_left", "name", "alice"))?;
    json_until(&at, "/api/players", |p| !names(p).contains(&"alice"))?;

    // A name ban removes bob now, is written to the file, and removes him again at his next
    // join once his player is created.
    admin(s, &at, &["ban", "bob"])?;
    s.expect(&bob, "being removed by the ban", WAIT, is("session_ended"))?;
    let file = std::fs::read_to_string(&bans).context("the ban file was not written")?;
    ensure!(file.lines().any(|l| l == "name bob"), "the ban file: {file}");
    // Every process here is 127.0.0.1, a source whose TCP replies the host limits per second
    // (Dp4Limits::replies_per_source): the removals' answers must not use up the new join's.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let mut again = join_at("bob", &listener)?;
    s.expect(&again, "being removed at its next join", WAIT, is("session_ended"))?;
    ensure!(s.exit_code(&mut again, WAIT)? == Some(1), "the banned name's join did not fail");

    // An address ban is refused at the join itself: DPERR_ACCESSDENIED.
    admin(s, &at, &["ban-address", "127.0.0.1"])?;
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let carol = join_at("carol", &listener)?;
    let failed = s.expect(&carol, "the refusal", WAIT, is("join_failed"))?;
    let error = failed["error"].as_str().unwrap_or_default();
    ensure!(error.contains("DPERR_ACCESSDENIED"), "the refusal does not name DPERR_ACCESSDENIED: {failed}");
    let _ = std::fs::remove_file(&bans);
    Ok(())
}
