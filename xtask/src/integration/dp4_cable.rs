//! Issue 27 item 10, the pulled cable: a `dplay join --dp4` member whose link goes silent (no
//! FIN, no RST, no ICMP reaches anyone) is removed by the host with all its players within the
//! documented deadline, two Ping periods (MC-DPL4CS 3.1.2.5, 3.2.6.2; docs/decisions.md, "A
//! silent peer"); the other member is told about each player; the cut member reports the
//! session lost within the same deadline; once the link is back the same machine rejoins at
//! once from the same port.
//!
//! Three private namespaces the case makes and removes: "h" (the host and erin, 10.9.0.1), a
//! router "r", and "d" (dave, 10.9.1.2). The cable is an nftables rule in the router that drops
//! everything it would forward, silently. Needs root, `ip` and `nft` (installed when missing).

use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use super::netns::Net;
use super::{Proc, Suite, WAIT, event_with, is};

/// The Ping timer period the three processes run with (`--keepalive`), so that the case takes
/// seconds, not minutes; the deadline scales with it. The default (35 s, so 70 s) is proven by
/// the session's tests (crates/dplay-session/src/dp4/tests/silent.rs).
pub(super) const PERIOD_SECS: u64 = 3;
/// [`PERIOD_SECS`] as the option's text.
pub(super) const PERIOD: &str = "3";

/// The documented deadline: two Ping periods after the member's last message. KEEPALIVE's own
/// rule (8 silent periods, 3.2.6.2) could not meet it, so the case proves the new rule.
pub(super) const DEADLINE: Duration = Duration::from_secs(2 * PERIOD_SECS);

/// Slack for process scheduling on a busy machine, on top of the deadline.
pub(super) const SLACK: Duration = Duration::from_secs(2);

/// The host's address, in namespace "h".
const HOST_IP: &str = "10.9.0.1";

/// Dave's `--bind`, in namespace "d", used again by his rejoin.
const DAVE_BIND: &str = "10.9.1.2:2450";

/// The router between "h" and "d", or `None` (with a line) without root and `ip`.
fn network() -> anyhow::Result<Option<Net>> {
    if !super::relay_nat::ready()? {
        return Ok(None);
    }
    let mut net = Net::new("dpcable");
    for ns in ["h", "r", "d"] {
        net.add(ns)?;
    }
    net.link("h", "eth0", Some(&format!("{HOST_IP}/24")), "r", "h0", Some("10.9.0.254/24"))?;
    net.link("d", "eth0", Some("10.9.1.2/24"), "r", "d0", Some("10.9.1.254/24"))?;
    net.exec("h", &["ip", "route", "add", "default", "via", "10.9.0.254"])?;
    net.exec("d", &["ip", "route", "add", "default", "via", "10.9.1.254"])?;
    net.exec("r", &["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])?;
    Ok(Some(net))
}

/// The cable out: `router` drops everything it forwards, both ways (no ICMP, no reset).
pub(super) fn pull(net: &Net, router: &str) -> anyhow::Result<()> {
    net.exec(router, &["nft", "add table inet cable"])?;
    net.exec(
        router,
        &["nft", "add chain inet cable pulled { type filter hook forward priority 0 ; policy drop ; }"],
    )
}

/// The cable back in.
pub(super) fn plug(net: &Net, router: &str) -> anyhow::Result<()> {
    net.exec(router, &["nft", "delete table inet cable"])
}

/// `dplay args...` in namespace `ns` with its log (`RUST_LOG=info`) written to `log`.
fn start_logged_in(
    s: &Suite,
    net: &Net,
    ns: &str,
    name: &str,
    args: &[&str],
    log: &std::path::Path,
) -> anyhow::Result<Proc> {
    let file = std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let mut command = Command::new("ip");
    command.args(["netns", "exec", &net.ns(ns)]).arg(&s.bin).env("RUST_LOG", "info").stderr(file);
    s.start_with(name, args, &mut command)
}

/// `join --dp4` of `name` to `host` with the case's Ping period, `extra` added.
fn join_args<'a>(host: &'a str, name: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args =
        vec!["join", "--dp4", host, "--json", "--name", name, "--keepalive", PERIOD, "--duration", "60"];
    args.extend_from_slice(extra);
    args
}

/// The `id` of `p`'s first event named `event`.
fn id_of(s: &Suite, p: &Proc, event: &str) -> anyhow::Result<String> {
    let e = s.expect(p, event, WAIT, is(event))?;
    Ok(e["id"].as_str().context("an id")?.to_owned())
}

/// The case (see the module's comment).
#[allow(clippy::disallowed_methods)] // the suite's own clock: the deadline is the behaviour
pub(super) fn pulled_cable(s: &Suite) -> anyhow::Result<()> {
    let Some(net) = network()? else { return Ok(()) };
    let log = std::env::temp_dir().join(format!("dplay-cable-host-{}.log", std::process::id()));
    let args = ["host", "--dp4", "--json", "--bind", HOST_IP, "--session", "cable4", "--keepalive", PERIOD];
    let host = start_logged_in(s, &net, "h", "dp4 host", &[&args[..], &["--duration", "60"]].concat(), &log)?;
    let hosting = s.expect(&host, "hosting", WAIT, is("hosting"))?;
    let tcp = hosting["tcp"].as_str().context("no TCP address in the hosting event")?.to_owned();
    let erin = s.start_in(&net.ns("h"), "erin", &join_args(&tcp, "erin", &[]))?;
    s.expect(&erin, "erin's player", WAIT, is("player_created"))?;
    let dave_args = join_args(&tcp, "dave", &["--bind", DAVE_BIND]);
    let dave = s.start_in(&net.ns("d"), "dave", &dave_args)?;
    let (system, player) = (id_of(s, &dave, "joined")?, id_of(s, &dave, "player_created")?);
    s.expect(&erin, "dave joining", WAIT, event_with("player_joined", "name", "dave"))?;
    // Two ticks, so that dave has answered the host's PINGs and the host dave's.
    std::thread::sleep(Duration::from_secs(2 * PERIOD_SECS));

    pull(&net, "r")?;
    let pulled = Instant::now();
    for p in [&host, &erin] {
        for id in [&player, &system] {
            s.expect(p, &format!("{id} removed"), DEADLINE + SLACK, event_with("player_left", "id", id))?;
        }
    }
    let took = pulled.elapsed();
    s.expect(
        &dave,
        "the session lost",
        DEADLINE + SLACK,
        event_with("session_ended", "reason", "the host is gone"),
    )?;
    let dave_took = pulled.elapsed();
    println!(
        "    dave's players removed everywhere {:.1} s after the cable was pulled; dave said the host is gone after {:.1} s (deadline {:.0} s)",
        took.as_secs_f64(),
        dave_took.as_secs_f64(),
        DEADLINE.as_secs_f64()
    );
    ensure!(took < DEADLINE + SLACK, "removed after {took:?}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    ensure!(
        text.contains("DP4 peer dropped after unanswered PINGs"),
        "the host did not remove dave for unanswered PINGs (log {})",
        log.display()
    );
    drop(dave);

    plug(&net, "r")?;
    let again = s.start_in(&net.ns("d"), "dave again", &dave_args)?;
    let id = id_of(s, &again, "player_created")?;
    s.expect(&host, "dave back", WAIT, event_with("player_joined", "id", &id))?;
    s.expect(&erin, "dave back", WAIT, event_with("player_joined", "id", &id))?;
    let _ = std::fs::remove_file(&log);
    Ok(())
}
