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

/// Items 4 and 6 with the default timers, for `join` and `fs join` side by side: after alice
/// is killed (SIGKILL), carol, whose `--timeout` is too short, is told that the host is
/// checking alice (not to check the network or whether a host runs there), and says no line
/// twice; bob, with the default `--timeout`, gets in once the host removes alice; the host
/// reports alice's end as `connection lost`.
#[allow(clippy::disallowed_methods)] // the case's own clock: a join's wait is the behaviour
pub(super) fn crashed_peer(s: &Suite) -> anyhow::Result<()> {
    let (addr, fs_addr) = (free_addr()?, free_addr()?);
    let host = host(s, &addr, &[])?;
    let fs_host = s.start("fs host", &["fs", "host", "--json", "--bind", &fs_addr, "--duration", "60"])?;
    s.expect(&fs_host, "joined", WAIT, is("joined"))?;
    let alice = s.start("alice", &["join", &addr, "--json", "--name", "alice", "--duration", "60"])?;
    let fs_alice = s.start("fs alice", &["fs", "join", &fs_addr, "--player", "--name", "alice", "--json"])?;
    s.expect(&alice, "the name table", WAIT, is("name_table"))?;
    s.expect(&fs_alice, "addon_joined", WAIT, is("addon_joined"))?;
    for mut p in [alice, fs_alice] {
        p.child.kill()?;
        let _ = p.child.wait();
    }
    let killed = Instant::now();

    let fs_carol =
        ["fs", "join", &fs_addr, "--player", "--name", "carol", "--timeout", "4", "--duration", "30"];
    let (carol, fs_carol) = std::thread::scope(|t| {
        let fs = t.spawn(|| run_here(s, &fs_carol));
        (run_here(s, &["join", &addr, "--name", "carol", "--timeout", "4"]), fs.join())
    });
    let fs_carol = fs_carol.map_err(|_| anyhow::anyhow!("fs carol's thread panicked"))??;
    for (who, out) in [("carol", &carol?), ("fs carol", &fs_carol)] {
        let (code, err) = ended(out);
        ensure!(
            code == Some(1) && err.contains("alice") && err.contains("which the host is checking"),
            "{who}, waiting for alice: exit {code:?}: {err}"
        );
        // Each line says something new (the "host answered; waiting" line came three times).
        let lines: Vec<&str> =
            std::str::from_utf8(&out.stdout)?.lines().map(|l| l.get(12..).unwrap_or(l)).collect();
        let mut unique = lines.clone();
        unique.sort_unstable();
        unique.dedup();
        ensure!(unique.len() == lines.len(), "{who} said a line twice: {lines:#?}");
        // Each thing once: the host's answer once (not again when its DN_INSTRUCT_CONNECT
        // came), alice named in that line only (no `player joined` line before we are in).
        let answered = lines.iter().filter(|l| l.contains("the host answered")).count();
        let alice = lines.iter().filter(|l| l.contains("alice (0x")).count();
        ensure!((answered, alice) == (1, 1), "{who} repeated the host's answer or alice: {lines:#?}");
    }
    let fs_bob = s.start(
        "fs bob",
        &["fs", "join", &fs_addr, "--player", "--name", "bob", "--json", "--duration", "30"],
    )?;
    let bob = run_here(s, &["join", &addr, "--json", "--name", "bob", "--duration", "1"])?;
    ensure!(bob.status.success(), "bob, with the default --timeout: {:?}", ended(&bob));
    s.expect(&fs_bob, "fs bob in, with the default --timeout", WAIT, is("addon_joined"))?;
    println!("    bob joined {:.1} s after alice was killed", killed.elapsed().as_secs_f64());
    for h in [&host, &fs_host] {
        let left = s.expect(h, "alice removed", WAIT, event_with("player_left", "name", "alice"))?;
        ensure!(left["reason"] == "connection lost", "alice's end at the {}: {left}", h.name());
    }
    Ok(())
}
