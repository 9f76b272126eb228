//! `--relay` behind real Linux NAT (issue 23; docs/relay.md): private network namespaces this
//! case makes and removes itself. A "public" namespace holds the relaying host on a bridge;
//! three NAT routers (nftables masquerade: two port-restricted cone, one `fully-random`, a
//! symmetric NAT) each front a pilot on the same private subnet, 192.168.1.0/24; a stranger
//! sits on the public side. No traffic leaves the namespaces: every link is a veth pair
//! between them. Needs root, `ip` and `nft` (skipped, with a line, without them).

use std::process::Command;
use std::time::Duration;

use anyhow::{bail, ensure};

use super::netns::Net;
use super::{Proc, Suite, WAIT, event_with, is};
use crate::util::have;

/// The host's public address.
pub(super) const HOST_IP: &str = "203.0.113.1";

impl Net {
    /// The public side, three NAT routers with a pilot each, and a stranger.
    pub(super) fn build() -> anyhow::Result<Self> {
        let mut net = Net::new("dprelay");
        for name in ["pub", "r1", "r2", "r3", "p1", "p2", "p3", "x"] {
            net.add(name)?;
        }
        net.public_side(&[
            ("r1", "203.0.113.11"),
            ("r2", "203.0.113.12"),
            ("r3", "203.0.113.13"),
            ("x", "203.0.113.99"),
        ])?;
        for (k, symmetric) in [("1", false), ("2", false), ("3", true)] {
            let (router, pilot) = (format!("r{k}"), format!("p{k}"));
            // The same private subnet behind every router.
            net.link(&router, "lan", Some("192.168.1.1/24"), &pilot, "eth0", Some("192.168.1.2/24"))?;
            net.exec(&pilot, &["ip", "route", "add", "default", "via", "192.168.1.1"])?;
            net.masquerade(&router, symmetric)?;
        }
        Ok(net)
    }

    /// The public side: namespace `pub` with the host's address on a bridge, and each of
    /// `wan` (a namespace and its address) on it, as interface `wan`.
    pub(super) fn public_side(&self, wan: &[(&str, &str)]) -> anyhow::Result<()> {
        self.exec("pub", &["ip", "link", "add", "br0", "type", "bridge"])?;
        self.exec("pub", &["ip", "addr", "add", &format!("{HOST_IP}/24"), "dev", "br0"])?;
        self.exec("pub", &["ip", "link", "set", "br0", "up"])?;
        for (k, (ns, addr)) in wan.iter().enumerate() {
            let port = format!("b{k}");
            self.link("pub", &port, None, ns, "wan", Some(&format!("{addr}/24")))?;
            self.exec("pub", &["ip", "link", "set", &port, "master", "br0"])?;
        }
        Ok(())
    }

    /// `router` forwards and masquerades what leaves by `wan`: a port-restricted cone NAT,
    /// or, `symmetric`, one that maps every destination to its own port (`fully-random`).
    pub(super) fn masquerade(&self, router: &str, symmetric: bool) -> anyhow::Result<()> {
        self.exec(router, &["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])?;
        self.exec(router, &["nft", "add table ip nat"])?;
        self.exec(router, &["nft", "add chain ip nat post { type nat hook postrouting priority 100 ; }"])?;
        let masquerade = if symmetric { "masquerade fully-random" } else { "masquerade" };
        self.exec(router, &["nft", &format!("add rule ip nat post oifname \"wan\" {masquerade}")])
    }
}

/// Root and `ip` are needed; `nft` is installed (Debian's nftables) when missing, so CI, root
/// on a fresh machine, never skips these cases.
pub(super) fn ready() -> anyhow::Result<bool> {
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !(root && have("ip")) {
        println!("    skipped: needs root and ip");
        return Ok(false);
    }
    if !have("nft") {
        println!(
            "==> nft is missing: installing Debian's nftables package (needed by the NAT and pulled-cable cases)"
        );
        let script = "export DEBIAN_FRONTEND=noninteractive; \
            apt-get update -qq && apt-get install -y -qq --no-install-recommends nftables";
        crate::util::step("install nftables", Command::new("sh").args(["-c", script]))?;
        ensure!(have("nft"), "nft is still missing after apt-get; install Debian's nftables and run again");
    }
    Ok(true)
}

/// `dplay fs host --relay` on the public side; three FS2004 pilots behind three NATs (one
/// symmetric), each given only the host's address: every pilot sees every other pilot's
/// positions, through the relay; a stranger's datagrams at the relay endpoints are dropped
/// and counted.
pub(super) fn fs2004_behind_nat(s: &Suite) -> anyhow::Result<()> {
    if !ready()? {
        return Ok(());
    }
    let net = Net::build()?;
    let host_addr = format!("{HOST_IP}:23456");
    let host = s.start_in(
        &net.ns("pub"),
        "relay host",
        &["fs", "host", "--sim", "fs2004", "--relay", "--json", "--bind", &host_addr, "--duration", "40"],
    )?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    let pilots = start_pilots(s, &net, "fs2004", &host_addr)?;
    std::thread::sleep(Duration::from_secs(3));
    each_sees_the_others(s, &pilots)?;
    // A stranger on the public side sends a CONNECT to each of the first relay ports.
    let stranger = (23457..23461)
        .map(|port| format!("printf '\\x88\\x01\\0\\0\\0\\0\\0\\0\\0\\0\\0\\0' > /dev/udp/{HOST_IP}/{port}"))
        .collect::<Vec<_>>()
        .join("; ");
    net.exec("x", &["bash", "-c", &stranger])?;
    drop(pilots);
    let relay = s.expect(&host, "the relay's line", Duration::from_secs(45), is("relay"))?;
    ensure!(relay["datagrams"].as_u64().is_some_and(|n| n > 100), "too little relayed: {relay}");
    ensure!(relay["strangers"].as_u64().is_some_and(|n| n >= 4), "the stranger was not counted: {relay}");
    if relay["over_budget"].as_u64() != Some(0) {
        bail!("relay over budget: {relay}");
    }
    Ok(())
}

/// `dplay host --relay` on the public side; three members behind three NATs (one symmetric)
/// join one after another, each sending a message at once: every member already there gets
/// it, through the relay, from the moment the sender is joined.
pub(super) fn dp8_behind_nat(s: &Suite) -> anyhow::Result<()> {
    if !ready()? {
        return Ok(());
    }
    let net = Net::build()?;
    let host_addr = format!("{HOST_IP}:6073");
    let host = s.start_in(
        &net.ns("pub"),
        "relay host",
        &["host", "--relay", "--json", "--bind", &host_addr, "--duration", "30"],
    )?;
    s.expect(&host, "joined", WAIT, is("joined"))?;
    let names = ["m1", "m2", "m3"];
    let mut members = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let text = format!("hello from {name}");
        let args = ["join", &host_addr, "--json", "--name", name, "--send", &text, "--duration", "20"];
        let p = s.start_in(&net.ns(&format!("p{}", k + 1)), name, &args)?;
        s.expect(&p, "the name table", WAIT, is("name_table"))?;
        members.push(p);
    }
    each_hears_the_later(s, &members, &names)?;
    drop(members);
    let relay = s.expect(&host, "the relay's line", Duration::from_secs(35), is("relay"))?;
    ensure!(relay["datagrams"].as_u64().is_some_and(|n| n > 0), "nothing relayed: {relay}");
    Ok(())
}

/// `dplay host --dp4 --relay` on the public side; three `dplay join --dp4` members behind three
/// NATs (one symmetric), given only the host's address, join one after another, each sending
/// a guaranteed message once it has its player: every member already there gets it, through
/// the relay (TCP back on the connection each member opened to the host); a stranger's
/// datagrams at the relay endpoints are dropped and counted (docs/relay.md, "DirectPlay 4").
pub(super) fn dp4_behind_nat(s: &Suite) -> anyhow::Result<()> {
    if !ready()? {
        return Ok(());
    }
    let net = Net::build()?;
    let host_addr = format!("{HOST_IP}:2300");
    let host = s.start_in(
        &net.ns("pub"),
        "relay host",
        &["host", "--dp4", "--relay", "--json", "--bind", &host_addr, "--duration", "30"],
    )?;
    s.expect(&host, "hosting", WAIT, is("hosting"))?;
    let names = ["m1", "m2", "m3"];
    let mut members = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let text = format!("hello from {name}");
        let args =
            ["join", "--dp4", &host_addr, "--json", "--name", name, "--send", &text, "--duration", "20"];
        let p = s.start_in(&net.ns(&format!("p{}", k + 1)), name, &args)?;
        s.expect(&p, "its message sent", WAIT, is("sent"))?;
        members.push(p);
    }
    each_hears_the_later(s, &members, &names)?;
    // A stranger on the public side sends a datagram to each of the first relay endpoints.
    let stranger = (2401..2405)
        .map(|port| format!("printf 'stranger' > /dev/udp/{HOST_IP}/{port}"))
        .collect::<Vec<_>>()
        .join("; ");
    net.exec("x", &["bash", "-c", &stranger])?;
    drop(members);
    let relay = s.expect(&host, "the relay's line", Duration::from_secs(35), is("relay"))?;
    ensure!(relay["datagrams"].as_u64().is_some_and(|n| n >= 3), "too little relayed: {relay}");
    ensure!(relay["strangers"].as_u64().is_some_and(|n| n >= 4), "the stranger was not counted: {relay}");
    Ok(())
}

/// `dplay fs host --sim fs98 --relay` on the public side; three FS98 pilots behind three NATs
/// (one symmetric), given only the host's address: every pilot sees every other pilot's
/// positions, through the relay (DirectPlay 4 over TCP and UDP).
pub(super) fn fs98_behind_nat(s: &Suite) -> anyhow::Result<()> {
    if !ready()? {
        return Ok(());
    }
    let net = Net::build()?;
    let host_addr = format!("{HOST_IP}:2300");
    let host = s.start_in(
        &net.ns("pub"),
        "relay host",
        &["fs", "host", "--sim", "fs98", "--relay", "--json", "--bind", &host_addr, "--duration", "40"],
    )?;
    s.expect(&host, "hosting", WAIT, is("hosting"))?;
    let pilots = start_pilots(s, &net, "fs98", &host_addr)?;
    each_sees_the_others(s, &pilots)?;
    // The positions keep coming through the relay (several a second from each pilot).
    std::thread::sleep(Duration::from_secs(5));
    drop(pilots);
    let relay = s.expect(&host, "the relay's line", Duration::from_secs(45), is("relay"))?;
    ensure!(relay["datagrams"].as_u64().is_some_and(|n| n > 60), "too little relayed: {relay}");
    if relay["over_budget"].as_u64() != Some(0) {
        bail!("relay over budget: {relay}");
    }
    Ok(())
}

/// Members joined in the order of `names`, each sending "hello from NAME" once in: every
/// member has the message of each member that joined after it.
pub(super) fn each_hears_the_later(s: &Suite, members: &[Proc], names: &[&str]) -> anyhow::Result<()> {
    for (k, p) in members.iter().enumerate() {
        for later in names.iter().skip(k + 1) {
            let text = format!("hello from {later}");
            s.expect(p, &format!("{later}'s message"), WAIT, event_with("message", "text", &text))?;
        }
    }
    Ok(())
}

/// The pilots of the FS cases, one behind each NAT (namespaces `p1` to `p3`).
pub(super) const PILOTS: [&str; 3] = ["alpha", "bravo", "charlie"];

/// Starts one `dplay fs join --sim SIM` pilot behind each NAT (namespaces `p1` to `p3`), given
/// only `host_addr`, and waits until each has joined as a player.
fn start_pilots(s: &Suite, net: &Net, sim: &str, host_addr: &str) -> anyhow::Result<Vec<Proc>> {
    start_pilots_in(s, net, sim, host_addr, &["p1", "p2", "p3"], &[])
}

/// Starts pilot `k` of [`PILOTS`] in namespace `at[k]`, with the options `more`, as
/// [`start_pilots`].
pub(super) fn start_pilots_in(
    s: &Suite,
    net: &Net,
    sim: &str,
    host_addr: &str,
    at: &[&str],
    more: &[&str],
) -> anyhow::Result<Vec<Proc>> {
    let more = [&["--duration", "30"], more].concat();
    at.iter().zip(PILOTS).map(|(ns, name)| start_pilot(s, net, ns, name, sim, host_addr, &more)).collect()
}

/// Starts the `dplay fs join --sim SIM` pilot `name` in namespace `ns`, given only
/// `host_addr`, with the options `more` (its `--duration` among them), and waits until it has
/// joined as a player.
pub(super) fn start_pilot(
    s: &Suite,
    net: &Net,
    ns: &str,
    name: &str,
    sim: &str,
    host_addr: &str,
    more: &[&str],
) -> anyhow::Result<Proc> {
    let mut args = vec!["fs", "join", "--sim", sim, host_addr, "--player", "--name", name, "--json"];
    args.extend_from_slice(more);
    let p = s.start_in(&net.ns(ns), name, &args)?;
    s.expect(&p, "addon_joined", WAIT, event_with("addon_joined", "role", "player"))?;
    Ok(p)
}

/// Every pilot sees every other pilot's position, through the relay.
pub(super) fn each_sees_the_others(s: &Suite, pilots: &[Proc]) -> anyhow::Result<()> {
    for (p, me) in pilots.iter().zip(PILOTS) {
        for other in PILOTS.iter().filter(|n| **n != me) {
            s.expect(p, &format!("{other}'s position"), WAIT, |v| {
                v["event"] == "position" && v["name"] == *other
            })?;
        }
    }
    Ok(())
}
