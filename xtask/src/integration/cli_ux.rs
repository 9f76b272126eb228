//! The `dplay` command at first contact (issue #15): an `fs join` that cannot join gives up
//! with a reason, host names resolve, and SIGTERM ends a session the way leaving does.

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use super::{Proc, Suite, WAIT, event_with, free_addr, host, is};

/// How soon a member must learn that a host stopped on SIGTERM (a SIGKILLed host takes the
/// keepalive and retry timers: a minute with the spec's values).
const TOLD_WITHIN: Duration = Duration::from_secs(5);

/// `fs join` against nothing and against a plain `dplay host`: exit 1 within the timeout.
pub(super) fn fs_join_fails(s: &Suite) -> anyhow::Result<()> {
    let nothing = free_addr()?;
    #[allow(clippy::disallowed_methods)] // the case's own clock: the timeout is the behaviour
    let started = Instant::now();
    let mut join =
        s.start("fs join", &["fs", "join", &nothing, "--player", "--timeout", "2", "--duration", "30"])?;
    ensure!(s.exit_code(&mut join, WAIT)? == Some(1), "fs join with no host did not exit 1");
    ensure!(started.elapsed() < Duration::from_secs(6), "fs join took {:?} to give up", started.elapsed());

    let addr = free_addr()?;
    let _host = host(s, &addr, &[])?;
    let mut join = s.start("fs join", &["fs", "join", &addr, "--observer", "--json", "--timeout", "2"])?;
    s.expect(&join, "the DirectPlay 8 join", WAIT, is("joined"))?;
    ensure!(s.exit_code(&mut join, WAIT)? == Some(1), "fs join to a plain host did not exit 1");
    Ok(())
}

/// `localhost` works wherever an address goes: enum, join and fs.
pub(super) fn host_names(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let port = addr.rsplit_once(':').map(|(_, p)| p).context("a port")?;
    let by_name = format!("localhost:{port}");
    let host = host(s, &addr, &[])?;
    let mut en = s.start("enum", &["enum", &by_name, "--json", "--timeout", "2"])?;
    let found = s.expect(&en, "a session", WAIT, is("session"))?;
    ensure!(found["host"] == addr.as_str(), "enum localhost reported {found}");
    ensure!(s.exit_code(&mut en, WAIT)? == Some(0), "enum localhost did not exit 0");
    let mut bob = s.start("bob", &["join", &by_name, "--json", "--name", "bob", "--duration", "1"])?;
    s.expect(&bob, "the name table", WAIT, is("name_table"))?;
    s.expect(&host, "bob joining", WAIT, event_with("player_joined", "name", "bob"))?;
    ensure!(s.exit_code(&mut bob, WAIT)? == Some(0), "join localhost did not exit 0");
    Ok(())
}

/// SIGTERM to a DirectPlay 8 host with a member: with migration (the default) the member
/// becomes host; with `--no-migration` it hears TERMINATE_SESSION. Either way within seconds.
pub(super) fn sigterm_dp8(s: &Suite) -> anyhow::Result<()> {
    for (extra, told) in [(&[][..], "host_migrated"), (&["--no-migration"][..], "session_ended")] {
        let addr = free_addr()?;
        let mut host = host(s, &addr, extra)?;
        let member = s.start("member", &["join", &addr, "--json", "--name", "member", "--duration", "60"])?;
        s.expect(&member, "the name table", WAIT, is("name_table"))?;
        s.expect(&host, "the member joining", WAIT, event_with("player_joined", "name", "member"))?;
        terminate(&host)?;
        let event = s.expect(&member, told, TOLD_WITHIN, is(told))?;
        if told == "session_ended" {
            ensure!(event["reason"] == "terminated by the host", "the member saw {event}");
        }
        s.expect(&host, "stopped on SIGTERM", WAIT, event_with("stopped", "why", "interrupted"))?;
        ensure!(s.exit_code(&mut host, WAIT)? == Some(0), "the host did not exit 0 on SIGTERM");
    }
    Ok(())
}

/// SIGTERM to a DirectPlay 4 host with a member: the member hears the host's player leave.
pub(super) fn sigterm_dp4(s: &Suite) -> anyhow::Result<()> {
    let enum_port = super::dp4::free_udp_port()?;
    let (mut host, _) = super::dp4::host(s, &enum_port, &[])?;
    let alice = super::dp4::join_alice(s, &enum_port, "hello", "60")?;
    s.expect(&alice, "its player", WAIT, is("player_created"))?;
    s.expect(&alice, "the host's player", WAIT, event_with("player_joined", "name", "host"))?;
    terminate(&host)?;
    s.expect(&alice, "the host leaving", TOLD_WITHIN, |v| {
        (v["event"] == "player_left" && v["name"] == "host") || v["event"] == "session_ended"
    })?;
    ensure!(s.exit_code(&mut host, WAIT)? == Some(0), "the DirectPlay 4 host did not exit 0 on SIGTERM");
    Ok(())
}

/// Sends SIGTERM to `p` (as `kill` or a service manager does).
fn terminate(p: &Proc) -> anyhow::Result<()> {
    let status = Command::new("kill").args(["-TERM", &p.child.id().to_string()]).status()?;
    ensure!(status.success(), "kill -TERM {} failed", p.name);
    Ok(())
}
