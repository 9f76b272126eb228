//! The `dplay` command at second contact (issue 25), where addresses and ports matter: two
//! private network namespaces, "a" and "b", joined by a veth pair (10.9.0.1/24 and
//! 10.9.0.2/24, each with its broadcast address) and no default route, as on a LAN without a
//! router. Both namespaces are made and removed by the case; nothing leaves them.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use super::netns::Net;
use super::{Suite, WAIT, event_with, is};
use crate::util::have;

/// The host's address, in namespace "a".
const HOST: &str = "10.9.0.1";

/// The LAN, or `None` (with a line) without root and `ip`.
pub(super) fn lan(tag: &str) -> anyhow::Result<Option<Net>> {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !(root && have("ip")) {
        println!("    skipped: needs root and ip");
        return Ok(None);
    }
    let mut net = Net::new(tag);
    net.add("a")?;
    net.add("b")?;
    net.link("a", "eth0", Some(&format!("{HOST}/24")), "b", "eth0", Some("10.9.0.2/24"))?;
    Ok(Some(net))
}

/// Runs `dplay args...` inside `ns` to its end; its output.
pub(super) fn run_in(s: &Suite, net: &Net, ns: &str, args: &[&str]) -> anyhow::Result<Output> {
    Command::new("ip")
        .args(["netns", "exec", &net.ns(ns)])
        .arg(&s.bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run dplay {}", args.join(" ")))
}

/// Its exit code and standard error, for messages.
pub(super) fn ended(out: &Output) -> (Option<i32>, String) {
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Items 9 and 12: `enum --dp4` with no address finds a host across a LAN without a default
/// route (each interface's broadcast address, not 255.255.255.255); a DirectPlay 4 host
/// bound to loopback answers enumeration on loopback only.
pub(super) fn dp4_lan(s: &Suite) -> anyhow::Result<()> {
    let Some(net) = lan("dplan")? else { return Ok(()) };
    let args = ["host", "--dp4", "--json", "--session", "lan4", "--duration", "30"];
    let host = s.start_in(&net.ns("a"), "dp4 host", &args)?;
    s.expect(&host, "its player", WAIT, is("player_created"))?;
    let out = run_in(s, &net, "b", &["enum", "--dp4", "--json", "--timeout", "2"])?;
    let (code, err) = ended(&out);
    ensure!(code == Some(0), "enum --dp4 by broadcast without a default route: exit {code:?}: {err}");
    ensure!(String::from_utf8_lossy(&out.stdout).contains("\"lan4\""), "enum --dp4 did not list lan4");
    drop(host);

    let args = ["host", "--dp4", "--json", "--bind", "127.0.0.1", "--session", "local4", "--duration", "30"];
    let host = s.start_in(&net.ns("a"), "loopback dp4 host", &args)?;
    s.expect(&host, "its player", WAIT, is("player_created"))?;
    let out = run_in(s, &net, "b", &["enum", "--dp4", HOST, "--timeout", "1"])?;
    ensure!(out.status.code() == Some(1), "a loopback host answered enumeration from the LAN");
    let out = run_in(s, &net, "a", &["enum", "--dp4", "127.0.0.1", "--timeout", "2"])?;
    let (code, err) = ended(&out);
    ensure!(code == Some(0), "the loopback host did not answer on loopback: exit {code:?}: {err}");
    Ok(())
}

/// Item 10: a DirectPlay 8 `enum` and `join` aimed at a DirectPlay 4 host say "try --dp4"
/// (the join at once, not after its --timeout); `enum --dp4` and `join --dp4` aimed at a
/// DirectPlay 8 host say "drop --dp4".
pub(super) fn other_protocol(s: &Suite) -> anyhow::Result<()> {
    let Some(net) = lan("dpother")? else { return Ok(()) };
    let args = ["host", "--dp4", "--json", "--session", "four", "--duration", "30"];
    let host = s.start_in(&net.ns("a"), "dp4 host", &args)?;
    s.expect(&host, "its player", WAIT, is("player_created"))?;
    for args in [&["enum", HOST, "--timeout", "2"][..], &["join", HOST, "--json", "--timeout", "30"]] {
        #[allow(clippy::disallowed_methods)] // the join's wait is the behaviour, far from its bound
        let started = Instant::now();
        let out = run_in(s, &net, "b", args)?;
        let (code, err) = ended(&out);
        ensure!(
            code == Some(1) && err.contains("this looks like DirectPlay 4") && err.contains("try --dp4"),
            "{args:?}: exit {code:?}: {err}"
        );
        ensure!(started.elapsed() < Duration::from_secs(10), "{args:?} took {:?}", started.elapsed());
    }
    drop(host);

    let args = ["host", "--json", "--bind", HOST, "--session", "eight", "--duration", "30"];
    let host = s.start_in(&net.ns("a"), "dp8 host", &args)?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    for args in [&["enum", "--dp4", HOST, "--timeout", "2"][..], &["join", "--dp4", HOST, "--timeout", "2"]] {
        let out = run_in(s, &net, "b", args)?;
        let (code, err) = ended(&out);
        ensure!(
            code == Some(1) && err.contains("this looks like DirectPlay 8") && err.contains("drop --dp4"),
            "{args:?}: exit {code:?}: {err}"
        );
    }
    Ok(())
}

/// Items 12, 14, 15 and 18, on loopback ports the case opens: `--bind ADDR:0` hosts on a free
/// port; `--max-players` is DirectPlay's limit in `host`, `fs host` and `fs host --sim fs98`
/// alike (the host and observers count), advertised in enumeration and enforced; each host's
/// end-of-run summary counts the refusal; `fs host --sim fs98 --bind ADDR` takes no port.
pub(super) fn max_players(s: &Suite) -> anyhow::Result<()> {
    let args = ["host", "--json", "--bind", "127.0.0.1:0", "--max-players", "2", "--duration", "30"];
    let host = s.start("host", &args)?;
    let addr = hosting_addr(s, &host)?;
    ensure!(!addr.ends_with(":6073"), "--bind 127.0.0.1:0 hosted on {addr}");
    advertised(s, &["enum", &addr, "--json", "--timeout", "2"], 2)?;
    drop(host);

    let args = ["fs", "host", "--json", "--bind", "127.0.0.1:0", "--max-players", "2", "--duration", "6"];
    let mut host = s.start("fs host", &args)?;
    let addr = hosting_addr(s, &host)?;
    advertised(s, &["enum", &addr, "--json", "--timeout", "2"], 2)?;
    let observer = s.start("observer", &["fs", "join", &addr, "--observer", "--json", "--duration", "10"])?;
    s.expect(&observer, "addon_joined", WAIT, event_with("addon_joined", "role", "observer"))?;
    let mut player = s.start("player", &["fs", "join", &addr, "--player", "--json", "--timeout", "3"])?;
    ensure!(s.exit_code(&mut player, WAIT)? == Some(1), "a third player got into a session of 2");
    ensure!(s.exit_code(&mut host, WAIT)? == Some(0), "fs host did not exit 0");
    let summary = s.expect(&host, "its summary", WAIT, is("refusals"))?;
    ensure!(summary["counts"]["joins_refused"] == 1, "fs host's summary: {summary}");

    let enum_port = super::dp4::free_udp_port()?;
    let args = ["fs", "host", "--sim", "fs98", "--json", "--bind", "127.0.0.1", "--enum-port", &enum_port];
    let mut host = s.start("fs98 host", &[&args[..], &["--max-players", "1", "--duration", "5"]].concat())?;
    s.expect(&host, "hosting", WAIT, is("hosting"))?;
    advertised(s, &["enum", "--dp4", &format!("127.0.0.1:{enum_port}"), "--json", "--timeout", "2"], 1)?;
    let args = ["fs", "join", "--sim", "fs98", "127.0.0.1", "--host-enum-port", &enum_port, "--player"];
    let mut player = s.start("fs98 player", &[&args[..], &["--json", "--timeout", "3"]].concat())?;
    ensure!(s.exit_code(&mut player, WAIT)? == Some(1), "a second player got into an FS98 session of 1");
    ensure!(s.exit_code(&mut host, WAIT)? == Some(0), "fs host --sim fs98 did not exit 0");
    let summary = s.expect(&host, "its summary", WAIT, is("refusals"))?;
    ensure!(summary["counts"]["joins-refused"] == 1, "the FS98 host's summary: {summary}");
    Ok(())
}

/// The address a DirectPlay 8 host says it hosts on.
fn hosting_addr(s: &Suite, host: &super::Proc) -> anyhow::Result<String> {
    let hosting = s.expect(host, "hosting", WAIT, is("hosting"))?;
    hosting["addr"].as_str().map(str::to_owned).context("no addr in the hosting event")
}

/// `enum args...` finds one session advertising `max` players at most.
fn advertised(s: &Suite, args: &[&str], max: u64) -> anyhow::Result<()> {
    let mut en = s.start("enum", args)?;
    let found = s.expect(&en, "a session", WAIT, is("session"))?;
    ensure!(found["max_players"] == max, "{args:?} found {found}");
    ensure!(s.exit_code(&mut en, WAIT)? == Some(0), "{args:?} did not exit 0");
    Ok(())
}

/// Item 8, in namespace "a" (its own loopback, so the default ports are free): `fs join`,
/// `join` and `enum` reach IPv6 hosts (`fs host` on 23456, `host` on 6073), with `--bind [::1]`
/// (no port) or without, and print no Debug `Some(...)` and no address-family warning; a
/// `--bind` of the other family is refused at once.
pub(super) fn ipv6(s: &Suite) -> anyhow::Result<()> {
    let Some(net) = lan("dpsix")? else { return Ok(()) };
    let args = ["fs", "host", "--json", "--bind", "[::1]", "--duration", "30"];
    let fs_host = s.start_in(&net.ns("a"), "fs host", &args)?;
    s.expect(&fs_host, "joined", WAIT, is("joined"))?;
    let args = ["host", "--json", "--bind", "[::1]", "--duration", "30"];
    let host = s.start_in(&net.ns("a"), "host", &args)?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    for args in [
        &["fs", "join", "[::1]", "--bind", "[::1]", "--observer", "--duration", "1"][..],
        &["enum", "[::1]:23456", "--timeout", "2"],
        &["enum", "[::1]", "--json", "--timeout", "2"],
        &["join", "[::1]", "--name", "six", "--duration", "1"],
    ] {
        let out = run_in(s, &net, "a", args)?;
        let (code, err) = ended(&out);
        ensure!(
            code == Some(0) && !err.contains("Some(") && !err.contains("Address family"),
            "{args:?}: exit {code:?}: {err}"
        );
    }
    s.expect(&host, "six joining", WAIT, event_with("player_joined", "name", "six"))?;
    let out = run_in(s, &net, "a", &["join", "127.0.0.1:23456", "--bind", "[::1]", "--timeout", "5"])?;
    let (code, err) = ended(&out);
    ensure!(
        code == Some(1) && err.contains("cannot reach"),
        "an IPv6 --bind to an IPv4 host: exit {code:?}: {err}"
    );
    Ok(())
}

/// Items 16 and 18: a failed `fs join` says the time it waited (a `--duration` shorter than
/// `--timeout`); `demo --fly` out of range is refused, not clamped, and says it flies before
/// the flight.
pub(super) fn words(s: &Suite) -> anyhow::Result<()> {
    let nothing = super::free_addr()?;
    let args = ["fs", "join", &nothing, "--player", "--timeout", "3", "--duration", "1"];
    let out = run_here(s, &args)?;
    let (code, err) = ended(&out);
    ensure!(code == Some(1) && err.contains("within 1s"), "{args:?}: exit {code:?}: {err}");
    let out = run_here(s, &["demo", "--fly", "100"])?;
    ensure!(out.status.code() == Some(2), "demo --fly 100 was not refused");
    let out = run_here(s, &["demo", "--fly", "0.5"])?;
    let text = String::from_utf8_lossy(&out.stdout);
    ensure!(
        text.lines().next().is_some_and(|l| l.contains("flies")),
        "demo said nothing before flying: {text:.300}"
    );
    Ok(())
}

/// Runs `dplay args...` here to its end; its output.
pub(super) fn run_here(s: &Suite, args: &[&str]) -> anyhow::Result<Output> {
    Command::new(&s.bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run dplay {}", args.join(" ")))
}

/// Item 13: two quick kicks of one player: the first is queued, the second says the kick is
/// already queued (or the player gone) and exits 1; no log line has an empty name.
pub(super) fn kicks(s: &Suite) -> anyhow::Result<()> {
    let addr = super::free_addr()?;
    let web = super::free_addr()?;
    let args = ["host", "--json", "--bind", &addr, "--web", &web, "--web-token", "tok", "--duration", "30"];
    let host = s.start("host", &args)?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    let victim = s.start("victim", &["join", &addr, "--json", "--name", "victim", "--duration", "30"])?;
    s.expect(&victim, "the name table", WAIT, is("name_table"))?;
    let table = s.expect(&host, "victim joining", WAIT, event_with("player_joined", "name", "victim"))?;
    let id = table["id"].as_str().context("no id")?.to_owned();
    let kick = ["admin", &web, "--token", "tok", "kick", &id];
    let (first, second) = (run_here(s, &kick)?, run_here(s, &kick)?);
    ensure!(first.status.success(), "the first kick: {}", ended(&first).1);
    let (code, err) = ended(&second);
    ensure!(
        code == Some(1) && (err.contains("already queued") || err.contains("no such player")),
        "the second kick: exit {code:?}: {err}"
    );
    s.expect(&host, "victim removed", WAIT, event_with("player_left", "name", "victim"))?;
    Ok(())
}

/// Item 11, across the LAN: `join --bind 0.0.0.0 --pcap FILE` (on the default port 6073)
/// records the enumeration probe too, with concrete addresses (the joiner's 10.9.0.2, never the
/// bind address), and says that it replaces the file there; `--pcap -` is refused.
pub(super) fn join_capture(s: &Suite) -> anyhow::Result<()> {
    let out = run_here(s, &["join", "127.0.0.1", "--pcap", "-", "--timeout", "1"])?;
    let (code, err) = ended(&out);
    ensure!(code == Some(1) && err.contains("give a file name"), "--pcap -: exit {code:?}: {err}");
    let Some(net) = lan("dpcap")? else { return Ok(()) };
    let host = s.start_in(&net.ns("a"), "host", &["host", "--json", "--bind", HOST, "--duration", "30"])?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    let (pcap, file) = super::dp4::capture_file("join-capture");
    std::fs::write(&pcap, b"old").context("an old capture file")?;
    let args = ["join", HOST, "--bind", "0.0.0.0", "--pcap", &file, "--duration", "1"];
    let out = run_in(s, &net, "b", &args)?;
    let (code, err) = ended(&out);
    ensure!(code == Some(0) && err.contains("replacing"), "join --pcap: exit {code:?}: {err}");
    let decoded = run_here(s, &["decode", "--json", &file])?;
    let _ = std::fs::remove_file(&pcap);
    let messages: Vec<serde_json::Value> = String::from_utf8_lossy(&decoded.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    ensure!(messages.iter().any(|m| m["message"] == "EnumQuery"), "no probe in the capture");
    for m in &messages {
        for end in [&m["src"], &m["dst"]] {
            let addr = end.as_str().unwrap_or_default();
            ensure!(addr.starts_with("10.9.0."), "{addr} in the capture: {m}");
        }
    }
    Ok(())
}
