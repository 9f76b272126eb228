//! What the command says and how it exits (issue 25 items 3, 7, 12, 13, 14, 16, 18 and 19), on
//! loopback ports the case opens: weak dashboard settings, forced session kinds, exit codes,
//! JSON for tool builders, named completions, refused clamps, waits that end at the answer.

use std::process::Output;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::second_contact::{ended, run_here};
use super::{Suite, free_addr, host, is};

/// The JSON lines of a finished run.
fn events(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The first event named `name` of a finished run.
fn event(out: &Output, name: &str) -> anyhow::Result<Value> {
    events(out).into_iter().find(|e| e["event"] == name).with_context(|| format!("no {name} event"))
}

/// `dplay args...` exits `code` and says `says` on its standard error.
fn refused(s: &Suite, args: &[&str], code: i32, says: &str) -> anyhow::Result<()> {
    let out = run_here(s, args)?;
    let (got, err) = ended(&out);
    ensure!(
        got == Some(code) && err.contains(says),
        "{args:?}: exit {got:?}, not {code} saying {says}: {err}"
    );
    Ok(())
}

/// Items 3, 12 and 18: options refused before anything runs (exit 2 for usage, 1 for a
/// missing folder), a config file's bad value named by file and line, options of the other
/// protocol said once, a truncated CFRAME named so, and what a dashboard open to the network
/// says.
pub(super) fn refused_options(s: &Suite) -> anyhow::Result<()> {
    let bind = free_addr()?;
    refused(s, &["host", "--web", "0", "--web-token", "", "--duration", "0"], 2, "the token is empty")?;
    refused(s, &["host", "--web", "0", "--web-token", "a b", "--duration", "0"], 2, "spaces")?;
    let missing = std::env::temp_dir().join(format!("dplay-no-such-folder-{}", std::process::id()));
    let bans = missing.join("bans.txt");
    let bans = bans.to_str().context("a UTF-8 temporary folder")?;
    refused(
        s,
        &["host", "--bind", &bind, "--bans", bans, "--duration", "0"],
        1,
        "its folder does not exist",
    )?;
    refused(s, &["join", "127.0.0.1:0"], 2, "port 0")?;
    refused(s, &["join", "127.0.0.1", "--client-server", "--peer"], 2, "cannot be used with")?;
    for args in [
        &["join", "127.0.0.1", "--keepalive", "0"][..],
        &["join", "127.0.0.1", "--send-retries", "0"],
        &["host", "--stats-every", "1ms"],
    ] {
        let out = run_here(s, args)?;
        ensure!(out.status.code() == Some(2), "{args:?} was not refused: {:?}", ended(&out));
    }
    refused(s, &["decode", "--hex", "88 01"], 1, "")?;
    let out = run_here(s, &["decode", "--hex", "88 01"])?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(text.contains("truncated") && !text.contains("unknown lead byte"), "decode 88 01: {text}");
    let config = std::env::temp_dir().join(format!("dplay-integration-bad-{}.toml", std::process::id()));
    std::fs::write(&config, "session = \"ok\"\nmax-players = \"lots\"\n").context("a config file")?;
    let file = config.to_str().context("a UTF-8 temporary folder")?;
    let out = run_here(s, &["host", "--config", file, "--duration", "0"]);
    let _ = std::fs::remove_file(&config);
    let (code, err) = ended(&out?);
    ensure!(
        code == Some(2) && err.contains(&format!("{file}:2:")),
        "a bad config value: exit {code:?}: {err}"
    );
    let out = run_here(
        s,
        &["host", "--bind", &bind, "--enum-port", "47625", "--tcp-idle", "5s", "--duration", "0"],
    )?;
    let err = ended(&out).1;
    ensure!(
        err.matches("ignored").count() == 1
            && err.contains("--enum-port, --tcp-idle are DirectPlay 4 options"),
        "options of the other protocol: {err}"
    );
    let out = run_here(s, &["manpage", "fs-host"])?;
    ensure!(
        String::from_utf8_lossy(&out.stdout).contains("dplay-fs-host"),
        "manpage fs-host: {:?}",
        ended(&out)
    );

    // Exposed: said in text; the token's URL encoded. `localhost` works as --bind takes it.
    let args = ["host", "--bind", &bind, "--web", "0.0.0.0:0", "--web-token", "t+1", "--duration", "0"];
    let out = run_here(s, &args)?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(text.contains("EXPOSED") && text.contains("#token=t%2B1"), "an exposed dashboard: {text}");
    let out = run_here(s, &["host", "--json", "--bind", &bind, "--web", "localhost:0", "--duration", "0"])?;
    let web = event(&out, "web")?;
    let url = web["url"].as_str().unwrap_or_default();
    ensure!(url.starts_with("http://127.0.0.1:") && web["exposed"] == false, "--web localhost:0: {web}");
    Ok(())
}

/// Items 7, 13, 14, 16 and 18 against running hosts: `enum` returns at the answer; a failed
/// `--join-group` and an unban of nobody exit 1; completions name their operation; a join
/// says it probes and Ctrl-C ends the probe; a join that fails ends its JSON with
/// `join_failed`, and `session_ended` reasons are documented; `--client-server` joins as a
/// client.
#[allow(clippy::disallowed_methods)] // the case's own clock: enum's wait is the behaviour
pub(super) fn answers_and_exit_codes(s: &Suite) -> anyhow::Result<()> {
    let (addr, web) = (free_addr()?, free_addr()?);
    let _host = host(s, &addr, &["--web", &web, "--web-token", "tok"])?;
    let started = Instant::now();
    let out = run_here(s, &["enum", &addr, "--timeout", "3"])?;
    ensure!(out.status.success(), "enum: {:?}", ended(&out));
    ensure!(started.elapsed() < Duration::from_millis(2500), "enum waited {:?}", started.elapsed());

    let out = run_here(s, &["join", &addr, "--join-group", "nosuch", "--duration", "2"])?;
    ensure!(out.status.code() == Some(1), "a failed --join-group: {:?}", ended(&out));
    let admin = |args: &[&str]| run_here(s, &[&["admin", &web, "--token", "tok"][..], args].concat());
    let out = admin(&["unban", "nobody"])?;
    ensure!(
        out.status.code() == Some(1) && ended(&out).1.contains("not banned"),
        "unban nobody: {:?}",
        ended(&out)
    );
    ensure!(admin(&["ban", "mallory"])?.status.success(), "ban mallory");
    let out = admin(&["unban", "Mallory"])?;
    ensure!(out.status.success(), "unban Mallory: {:?}", ended(&out));

    let out = run_here(s, &["join", &addr, "--create-group", "wing", "--duration", "1"])?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(text.contains("create group done") && text.contains("add to group done"), "{text}");
    ensure!(!text.contains("operation "), "an operation not named: {text}");
    let out = run_here(s, &["join", &addr, "--json", "--create-group", "wing2", "--duration", "1"])?;
    let done = event(&out, "completed")?;
    ensure!(done["command"] == "create group", "{done}");

    let nothing = free_addr()?;
    let mut join = s.start("join", &["join", &nothing, "--json", "--timeout", "10"])?;
    s.expect(&join, "the probe said", Duration::from_millis(1500), is("probing"))?;
    let sigint = std::process::Command::new("kill").args(["-INT", &join.pid().to_string()]).status()?;
    ensure!(sigint.success(), "kill -INT the probing join");
    ensure!(s.exit_code(&mut join, Duration::from_secs(2))? == Some(1), "Ctrl-C did not end the probe");
    let out = run_here(s, &["join", &nothing, "--json", "--timeout", "1"])?;
    let last = events(&out).pop().context("no JSON line from a failed join")?;
    ensure!(
        out.status.code() == Some(1) && last["event"] == "join_failed",
        "a failed join ended with {last}"
    );
    ensure!(last["error"].as_str().is_some_and(|e| e.contains("no answer")), "{last}");

    let locked = free_addr()?;
    let _locked = host(s, &locked, &["--password", "right"])?;
    let out = run_here(s, &["join", &locked, "--json", "--password", "wrong", "--timeout", "3"])?;
    let ended_event = event(&out, "session_ended")?;
    let reason = ended_event["reason"].as_str().context("no reason")?;
    let documented = reason.split(" DPNERR_").next().unwrap_or_default();
    let docs = include_str!("../../../docs/json-events.md");
    ensure!(docs.contains(&format!("`{documented} DPNERR_...`")), "`{reason}` is not in docs/json-events.md");

    let server = free_addr()?;
    let _server = host(s, &server, &["--client-server"])?;
    let out = run_here(s, &["join", &server, "--json", "--client-server", "--duration", "1"])?;
    let joined = event(&out, "joined")?;
    ensure!(out.status.success() && joined["mode"] == "client-server", "--client-server: {joined}");
    Ok(())
}

/// Items 19 and 14: two quick joins with a wrong password, then one with the right password: the last
/// one gets in within seconds (the host's rate limit on enumeration replies once made it "no
/// session answered" after 10 s). Each asks the enumeration port, as a bare address does. The
/// player's id is written 0x%08X, as everywhere.
#[allow(clippy::disallowed_methods)] // the case's own clock: the retry's wait is the behaviour
pub(super) fn password_retry(s: &Suite) -> anyhow::Result<()> {
    let enum_port = super::dp4::free_udp_port()?;
    let (_host, _) = super::dp4::host(s, &enum_port, &["--password", "secret"])?;
    let join = ["join", "--dp4", "127.0.0.1", "--host-enum-port", &enum_port];
    for _ in 0..2 {
        let out = run_here(s, &[&join[..], &["--password", "wrong", "--timeout", "3"]].concat())?;
        refused_password(&out)?;
    }
    let started = Instant::now();
    let out = run_here(s, &[&join[..], &["--json", "--password", "secret", "--duration", "3"]].concat())?;
    ensure!(out.status.success(), "the right password after two wrong ones: {:?}", ended(&out));
    let me = event(&out, "player_created")?;
    let id = me["id"].as_str().unwrap_or_default();
    let hex = id.strip_prefix("0x").unwrap_or_default();
    ensure!(
        hex.len() == 8 && hex.chars().all(|c| c.is_ascii_digit() || c.is_ascii_uppercase()),
        "a DirectPlay 4 id not as 0x%08X: {id}"
    );
    ensure!(started.elapsed() < Duration::from_secs(5), "the right password took {:?}", started.elapsed());
    Ok(())
}

/// A join refused for its password, which the joiner names.
fn refused_password(out: &Output) -> anyhow::Result<()> {
    let (code, err) = ended(out);
    ensure!(
        code == Some(1) && err.contains("refused the password"),
        "a wrong password: exit {code:?}: {err}"
    );
    Ok(())
}
