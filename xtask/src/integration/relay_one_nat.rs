//! `--relay` with two DirectPlay 4 members behind one NAT on the same private port (issue 23:
//! "several members can sit behind one NAT, and every home network may use the same private
//! subnet"; docs/relay.md, "DirectPlay 4"). Private namespaces this case makes and removes
//! itself: the relaying host on the public side; router `r1` (port-restricted cone) fronts
//! `a1` and `a2` on one LAN, `r2` (cone) fronts `b1`, `r3` (symmetric, `fully-random`)
//! fronts `c1` and `c2` on one LAN; every LAN is 192.168.1.0/24 and every member listens on
//! port 2400. No traffic leaves the namespaces. Needs root, `ip` and `nft`.

use std::time::Duration;

use anyhow::ensure;

use super::netns::Net;
use super::relay_nat::{HOST_IP, each_hears_the_later, each_sees_the_others, ready, start_pilots_in};
use super::{Proc, Suite, WAIT, is};

/// The members' listener and game port, the same behind every NAT.
const BIND: &str = "0.0.0.0:2400";

/// The public side, and three routers with their LANs.
fn build() -> anyhow::Result<Net> {
    let mut net = Net::new("dp1nat");
    for name in ["pub", "r1", "r2", "r3", "a1", "a2", "b1", "c1", "c2"] {
        net.add(name)?;
    }
    net.public_side(&[("r1", "203.0.113.11"), ("r2", "203.0.113.12"), ("r3", "203.0.113.13")])?;
    for (router, hosts, symmetric) in
        [("r1", &["a1", "a2"][..], false), ("r2", &["b1"], false), ("r3", &["c1", "c2"], true)]
    {
        net.exec(router, &["ip", "link", "add", "lan", "type", "bridge"])?;
        net.exec(router, &["ip", "addr", "add", "192.168.1.1/24", "dev", "lan"])?;
        net.exec(router, &["ip", "link", "set", "lan", "up"])?;
        for (k, host) in hosts.iter().enumerate() {
            let port = format!("l{k}");
            let addr = format!("192.168.1.{}/24", k + 2);
            net.link(router, &port, None, host, "eth0", Some(&addr))?;
            net.exec(router, &["ip", "link", "set", &port, "master", "lan"])?;
            net.exec(host, &["ip", "route", "add", "default", "via", "192.168.1.1"])?;
        }
        net.masquerade(router, symmetric)?;
    }
    Ok(net)
}

/// `dplay host --dp4 --relay`; `dplay join --dp4` members in namespaces `at`, each on port
/// 2400, join one after another, each sending a guaranteed message once it has its player:
/// every member already there gets it, through the relay. Then `dplay fs host --sim fs98
/// --relay` and three FS98 pilots there: every pilot sees every other pilot's positions (not
/// guaranteed, over UDP through the relay endpoints) and name (its CREATEPLAYER, guaranteed).
fn members_at(s: &Suite, at: [&str; 3]) -> anyhow::Result<()> {
    if !ready()? {
        return Ok(());
    }
    let net = build()?;
    let host_addr = format!("{HOST_IP}:2300");
    let host = s.start_in(
        &net.ns("pub"),
        "relay host",
        &["host", "--dp4", "--relay", "--json", "--bind", &host_addr, "--duration", "25"],
    )?;
    s.expect(&host, "hosting", WAIT, is("hosting"))?;
    let names = ["m1", "m2", "m3"];
    let mut members: Vec<Proc> = Vec::new();
    for (ns, name) in at.iter().zip(names) {
        let text = format!("hello from {name}");
        let args = [
            "join",
            "--dp4",
            &host_addr,
            "--bind",
            BIND,
            "--json",
            "--name",
            name,
            "--send",
            &text,
            "--duration",
            "15",
        ];
        let p = s.start_in(&net.ns(ns), name, &args)?;
        s.expect(&p, "its message sent", WAIT, is("sent"))?;
        members.push(p);
    }
    each_hears_the_later(s, &members, &names)?;
    drop(members);
    let relay = s.expect(&host, "the relay's line", Duration::from_secs(30), is("relay"))?;
    ensure!(relay["datagrams"].as_u64().is_some_and(|n| n >= 3), "too little relayed: {relay}");
    ensure!(relay["strangers"].as_u64() == Some(0), "a member was taken for a stranger: {relay}");
    drop(host);
    let host = s.start_in(
        &net.ns("pub"),
        "FS98 relay host",
        &["fs", "host", "--sim", "fs98", "--relay", "--json", "--bind", &host_addr, "--duration", "40"],
    )?;
    s.expect(&host, "hosting", WAIT, is("hosting"))?;
    let pilots = start_pilots_in(s, &net, "fs98", &host_addr, &at, &["--bind", BIND])?;
    each_sees_the_others(s, &pilots)?;
    Ok(())
}

/// Two members behind one port-restricted cone NAT on the same private port, a third behind
/// another NAT.
pub(super) fn dp4_behind_one_cone_nat(s: &Suite) -> anyhow::Result<()> {
    members_at(s, ["a1", "a2", "b1"])
}

/// Two members behind one symmetric NAT on the same private port (every destination its own
/// public port, their player datagrams headerless), a third behind another NAT.
pub(super) fn dp4_behind_one_symmetric_nat(s: &Suite) -> anyhow::Result<()> {
    members_at(s, ["c1", "c2", "b1"])
}
