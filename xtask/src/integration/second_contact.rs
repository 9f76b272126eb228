//! The `dplay` command at second contact (issue 25), where addresses and ports matter: two
//! private network namespaces, "a" and "b", joined by a veth pair (10.9.0.1/24 and
//! 10.9.0.2/24, each with its broadcast address) and no default route, as on a LAN without a
//! router. Both namespaces are made and removed by the case; nothing leaves them.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

use super::netns::Net;
use super::{Suite, WAIT, is};
use crate::util::have;

/// The host's address, in namespace "a".
const HOST: &str = "10.9.0.1";

/// The LAN, or `None` (with a line) without root and `ip`.
fn lan(tag: &str) -> anyhow::Result<Option<Net>> {
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
fn run_in(s: &Suite, net: &Net, ns: &str, args: &[&str]) -> anyhow::Result<Output> {
    Command::new("ip")
        .args(["netns", "exec", &net.ns(ns)])
        .arg(&s.bin)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run dplay {}", args.join(" ")))
}

/// Its exit code and standard error, for messages.
fn ended(out: &Output) -> (Option<i32>, String) {
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
