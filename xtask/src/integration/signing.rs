//! DirectPlay 8 fast signing and joins across processes: `dplay host --signing fast` with
//! `dplay join` peers that sign (MC-DPL8R 3.1.4.4, 3.1.5.1.3) and one that will not, a refused
//! join that names its DPNERR code (MC-DPL8CS 2.2.1.3), and a client/server join that says so.

use std::time::{Duration, Instant};

use anyhow::ensure;
use serde_json::Value;

use super::{Suite, WAIT, event_with, free_addr, host, is};

/// An event `event` whose list `key` holds `word`.
fn listing<'a>(event: &'a str, key: &'a str, word: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |v| v["event"] == event && v[key].as_array().is_some_and(|l| l.iter().any(|w| w == word))
}

/// The reason of a `session_ended` event contains `text`.
fn ended_with(text: &str) -> impl Fn(&Value) -> bool + '_ {
    move |v| v["event"] == "session_ended" && v["reason"].as_str().is_some_and(|r| r.contains(text))
}

/// Three processes in a fast-signed session: each joiner learns the signing from the
/// EnumResponse, the two joiners connect to each other signed, a message goes through; a
/// joiner told not to sign fails at once, naming fast signing.
#[allow(clippy::disallowed_methods)] // the case's own clock: how fast a refusal comes
pub(super) fn fast_signed_session(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--signing", "fast"])?;
    s.expect(&host, "hosting signed", WAIT, listing("hosting", "flags", "fast-signed"))?;
    let mut peers = Vec::new();
    for name in ["alice", "bob"] {
        let mut args = vec!["join", &addr, "--json", "--name", name, "--duration", "60"];
        if name == "bob" {
            args.extend(["--send", "hello signed"]);
        }
        let p = s.start(name, &args)?;
        s.expect(&p, "a signed join", WAIT, listing("joined", "flags", "fast-signed"))?;
        peers.push(p);
    }
    if let Some(alice) = peers.first() {
        s.expect(alice, "bob joining", WAIT, event_with("player_joined", "name", "bob"))?;
        s.expect(alice, "bob's message", WAIT, event_with("message", "text", "hello signed"))?;
    }
    s.expect(&host, "bob's message", WAIT, event_with("message", "text", "hello signed"))?;
    let started = Instant::now();
    let mut mallory = s.start(
        "mallory",
        &["join", &addr, "--json", "--name", "mallory", "--signing", "off", "--timeout", "30"],
    )?;
    s.expect(&mallory, "the signing refusal", WAIT, ended_with("fast signing"))?;
    ensure!(s.exit_code(&mut mallory, WAIT)? == Some(1), "an unsigned join did not exit 1");
    let took = started.elapsed();
    ensure!(took < Duration::from_secs(10), "the unsigned join took {took:?} to fail");
    s.expect(&host, "hosting still", WAIT, is("hosting"))?;
    Ok(())
}

/// A full session refuses with DPNERR_SESSIONFULL, named (not as hex), and the joiner exits 1.
pub(super) fn refusal_is_named(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let _host = host(s, &addr, &["--max-players", "1"])?;
    let mut join = s.start("join", &["join", &addr, "--json", "--name", "late", "--timeout", "10"])?;
    s.expect(&join, "the refusal", WAIT, ended_with("DPNERR_SESSIONFULL"))?;
    ensure!(s.exit_code(&mut join, WAIT)? == Some(1), "a refused join did not exit 1");
    Ok(())
}

/// `dplay join` learns client/server from the EnumResponse (DPNSESSION_CLIENT_SERVER), joins
/// as a client, and says which kind of session it joined (MC-DPL8CS 3.1.5.1).
pub(super) fn client_server_join_says_so(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--client-server"])?;
    let client = s.start("client", &["join", &addr, "--json", "--name", "client", "--duration", "2"])?;
    let joined = s.expect(&client, "a client/server join", WAIT, is("joined"))?;
    ensure!(joined["mode"] == "client-server", "joined {joined}");
    s.expect(&host, "the client joining", WAIT, event_with("player_joined", "name", "client"))?;
    Ok(())
}
