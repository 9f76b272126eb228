//! Players that go (issue 25 items 4, 5 and 6): a client that says goodbye leaves a
//! client/server host's table at once; a peer that crashes is reported as a lost connection,
//! and a joiner that waits for it is told the host is checking it, and gets in with the default
//! `--timeout`.

use std::time::{Duration, Instant};

use anyhow::ensure;

use super::second_contact::{ended, run_here};
use super::{Suite, WAIT, event_with, free_addr, host, is};

/// How soon after its process ends a client that said goodbye is gone from the host's table
/// (before the fix: 14.4 s, our own END_STREAM's retries).
const GONE_WITHIN: Duration = Duration::from_secs(3);

/// Item 5: a client of a client/server host that ends its run (a graceful disconnect) is
/// removed, as `left`, within [`GONE_WITHIN`] of its exit.
pub(super) fn departed_client(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &["--client-server"])?;
    let mut client = s.start("client", &["join", &addr, "--json", "--name", "client", "--duration", "1"])?;
    s.expect(&host, "the client joining", WAIT, event_with("player_joined", "name", "client"))?;
    ensure!(s.exit_code(&mut client, WAIT)? == Some(0), "the client did not exit 0");
    let left =
        s.expect(&host, "the client leaving", GONE_WITHIN, event_with("player_left", "name", "client"))?;
    ensure!(left["reason"] == "left", "the client's leave: {left}");
    Ok(())
}

/// Items 4 and 6 with the default timers: after alice is killed (SIGKILL), carol, whose
/// `--timeout` is too short, is told that the host is checking alice (not to check the
/// network), and says no line twice; bob, with the default `--timeout`, gets in once the host
/// removes alice; the host reports alice's end as `connection lost`.
#[allow(clippy::disallowed_methods)] // the case's own clock: a join's wait is the behaviour
pub(super) fn crashed_peer(s: &Suite) -> anyhow::Result<()> {
    let addr = free_addr()?;
    let host = host(s, &addr, &[])?;
    let mut alice = s.start("alice", &["join", &addr, "--json", "--name", "alice", "--duration", "60"])?;
    s.expect(&alice, "the name table", WAIT, is("name_table"))?;
    alice.child.kill()?;
    let _ = alice.child.wait();
    let killed = Instant::now();

    let carol = run_here(s, &["join", &addr, "--name", "carol", "--timeout", "4"])?;
    let (code, err) = ended(&carol);
    ensure!(
        code == Some(1) && err.contains("alice") && err.contains("which the host is checking"),
        "carol, waiting for alice: exit {code:?}: {err}"
    );
    // Each line says something new (the "host answered; waiting" line came three times).
    let lines: Vec<&str> =
        std::str::from_utf8(&carol.stdout)?.lines().map(|l| l.get(12..).unwrap_or(l)).collect();
    let mut unique = lines.clone();
    unique.sort_unstable();
    unique.dedup();
    ensure!(unique.len() == lines.len(), "carol said a line twice: {lines:#?}");
    let bob = run_here(s, &["join", &addr, "--json", "--name", "bob", "--duration", "1"])?;
    ensure!(bob.status.success(), "bob, with the default --timeout: {:?}", ended(&bob));
    let left = s.expect(&host, "alice removed", WAIT, event_with("player_left", "name", "alice"))?;
    ensure!(left["reason"] == "connection lost", "alice's end: {left}");
    println!("    bob joined {:.1} s after alice was killed", killed.elapsed().as_secs_f64());
    Ok(())
}
