//! `dplay host --upnp` against a real UPnP IGD: Debian's miniupnpd in a router namespace between
//! a home namespace and a "public" one, all made and removed here (root only; no traffic leaves
//! them). The router's external address is a documentation range (198.51.100.0/24), which
//! miniupnpd refuses to map on unless STUN says it is reachable (`ext_perform_stun`): our STUN
//! responder (`cargo xtask stun-responder`) answers on the public side.
//!
//! ```text
//! home 192.168.77.2 --- 192.168.77.1 router 198.51.100.1 --- 198.51.100.2 public
//!      dplay host --upnp              miniupnpd, NAT               STUN, dplay join
//! ```

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail, ensure};

use super::{Suite, WAIT, is};
use crate::util::have;

/// The case's name.
pub(crate) const CASE: &str = "--upnp through miniupnpd in a router namespace (UPnP, then PCP): the public address printed, joined from outside, unmapped at exit; --relay members given the public endpoints";

/// As root, installs what the case needs when missing; without root the case is skipped.
pub(crate) fn prepare() -> anyhow::Result<()> {
    if is_root() { install() } else { Ok(()) }
}

/// The router's public address and the host's port.
const PUBLIC: &str = "198.51.100.1";
const PORT: &str = "6073";

/// The router's nftables: forwarding and NAT chains with the miniupnpd chains hooked in, and
/// masquerade for the home network (Debian's nft_init.sh layout, in one table).
const RULESET: &str = "
table inet filter {
    chain forward {
        type filter hook forward priority 0; policy accept;
        jump miniupnpd
    }
    chain miniupnpd {
    }
    chain prerouting {
        type nat hook prerouting priority -100; policy accept;
        jump prerouting_miniupnpd
    }
    chain postrouting {
        type nat hook postrouting priority 100; policy accept;
        jump postrouting_miniupnpd
        oifname \"wan0\" ip saddr 192.168.77.0/24 masquerade
    }
    chain prerouting_miniupnpd {
    }
    chain postrouting_miniupnpd {
    }
}
";

/// The case: the host maps its port through miniupnpd (UPnP IGD, then PCP) and prints the
/// public address, a player on the public side joins there, and after Ctrl-C the mapping is
/// gone.
pub(crate) fn mapped_host(s: &Suite) -> anyhow::Result<()> {
    if !is_root() {
        println!("    skipped: needs root for network namespaces and miniupnpd");
        return Ok(());
    }
    install()?; // done by `prepare` before the suite's clock started; a no-op here
    let net = Namespaces::build()?;
    let _stun = net.spawn_daemon(
        &net.public,
        Command::new(std::env::current_exe()?).args(["stun-responder", "198.51.100.2:3478", "60"]),
    )?;
    // UPnP IGD first; then, with UPnP off, the same through PCP (or NAT-PMP).
    for (upnp, method) in [("yes", "UPnP"), ("no", "PCP")] {
        let conf = net.dir.join("miniupnpd.conf");
        std::fs::write(&conf, MINIUPNPD_CONF.replace("enable_upnp=yes", &format!("enable_upnp={upnp}")))?;
        let pid = net.dir.join("miniupnpd.pid");
        let igd = net.spawn_daemon(
            &net.router,
            Command::new("miniupnpd").arg("-d").arg("-f").arg(&conf).arg("-P").arg(&pid),
        )?;
        net.wait_for_igd(s)?;
        mapped_and_joined(s, &net, method).with_context(|| format!("through {method}"))?;
        if method == "UPnP" {
            relay_mapped(s, &net).context("--relay through UPnP")?;
        }
        dp4_mapped(s, &net, method).with_context(|| format!("DirectPlay 4 through {method}"))?;
        drop(igd);
    }
    Ok(())
}

/// `dplay host --dp4 --upnp` maps its TCP listener first (where players join), then its UDP game
/// and enumeration ports, and removes all three at exit.
fn dp4_mapped(s: &Suite, net: &Namespaces, method: &str) -> anyhow::Result<()> {
    let host =
        s.start_in(&net.home, "dp4 host", &["host", "--dp4", "--json", "--upnp", "--duration", "60"])?;
    let mapped = s.expect(&host, "public_address", WAIT, is("public_address"))?;
    let hosting = s.expect(&host, "hosting", WAIT, is("hosting"))?;
    let port = |key: &str| hosting[key].as_str().and_then(|a| a.rsplit_once(':')).map(|(_, p)| p.to_owned());
    let (tcp, udp) = (port("tcp").context("no TCP port")?, port("udp").context("no UDP port")?);
    let want = [
        format!("TCP {tcp} -> {PUBLIC}:{tcp}"),
        format!("UDP {udp} -> {PUBLIC}:{udp}"),
        format!("UDP 47624 -> {PUBLIC}:47624"),
    ];
    ensure!(
        mapped["mappings"] == serde_json::json!(want)
            && mapped["addr"] == format!("{PUBLIC}:{tcp}")
            && mapped["method"] == method,
        "the DirectPlay 4 host printed {mapped} (wanted {want:?})"
    );
    ensure!(mapped_ports(net)?.contains("47624"), "miniupnpd shows no mapping of port 47624");
    let status = Command::new("kill").args(["-INT", &host.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -INT dp4 host failed");
    let mut host = host;
    s.exit_code(&mut host, WAIT)?;
    ensure!(
        !mapped_ports(net)?.contains("47624"),
        "the DirectPlay 4 mappings are still there after the host left"
    );
    Ok(())
}

/// `dplay host --upnp` at home prints the public address (mapped by `method`), a player on the
/// public side joins there, and the mapping is gone once the host left on Ctrl-C.
fn mapped_and_joined(s: &Suite, net: &Namespaces, method: &str) -> anyhow::Result<()> {
    let host = s.start_in(
        &net.home,
        "host",
        &["host", "--json", "--upnp", "--bind", "0.0.0.0:6073", "--session", "upnp", "--duration", "60"],
    )?;
    let public = format!("{PUBLIC}:{PORT}");
    let mapped = s.expect(&host, "public_address", WAIT, is("public_address"))?;
    ensure!(
        mapped["addr"] == public.as_str() && mapped["method"] == method,
        "the host printed {mapped} (wanted {public} by {method})"
    );
    ensure!(mapped_ports(net)?.contains(PORT), "miniupnpd shows no mapping of port {PORT}");
    let player = s.start_in(
        &net.public,
        "player",
        &["join", &public, "--json", "--name", "outside", "--duration", "3"],
    )?;
    s.expect(&player, "joined", WAIT, is("joined"))?;
    s.expect(&host, "player_joined", WAIT, super::event_with("player_joined", "name", "outside"))?;
    let status = Command::new("kill").args(["-INT", &host.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -INT host failed");
    let mut host = host;
    s.exit_code(&mut host, WAIT)?;
    ensure!(
        !mapped_ports(net)?.contains(PORT),
        "the mapping of port {PORT} is still there after the host left"
    );
    Ok(())
}

/// `dplay host --relay --upnp` at home maps its relay endpoints too and, once mapped, gives
/// members their public addresses: two players on the public side join at the public address
/// and get each other's messages through the relay (the bound address, 192.168.77.2, is out
/// of their reach).
fn relay_mapped(s: &Suite, net: &Namespaces) -> anyhow::Result<()> {
    let args = [
        "host",
        "--json",
        "--upnp",
        "--relay",
        "--max-players",
        "3",
        "--bind",
        "0.0.0.0:6073",
        "--session",
        "relayed",
        "--duration",
        "60",
    ];
    let host = s.start_in(&net.home, "relay host", &args)?;
    let mapped = s.expect(&host, "public_address", WAIT, is("public_address"))?;
    ensure!(mapped["relay_endpoints"] == 2, "the relay's two endpoints were not advertised: {mapped}");
    let public = format!("{PUBLIC}:{PORT}");
    let join = |name: &str| {
        let text = format!("hello from {name}");
        let args = ["join", &public, "--json", "--name", name, "--send", &text, "--duration", "20"];
        s.start_in(&net.public, name, &args)
    };
    let first = join("first")?;
    s.expect(&first, "the name table", WAIT, is("name_table"))?;
    let second = join("second")?;
    s.expect(&second, "the name table", WAIT, is("name_table"))?;
    s.expect(&first, "second's message", WAIT, super::event_with("message", "text", "hello from second"))?;
    let status = Command::new("kill").args(["-USR1", &host.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -USR1 relay host failed");
    let relay = s.expect(&host, "the relay's line", WAIT, is("relay"))?;
    let members = relay["members"].as_array().context("no members in the relay's line")?;
    ensure!(
        members.len() == 2
            && members
                .iter()
                .all(|m| m["endpoint"].as_str().is_some_and(|e| e.starts_with(&format!("{PUBLIC}:")))),
        "members were not given the relay's public addresses: {relay}"
    );
    let status = Command::new("kill").args(["-INT", &host.pid().to_string()]).status()?;
    ensure!(status.success(), "kill -INT relay host failed");
    let mut host = host;
    s.exit_code(&mut host, WAIT)?;
    Ok(())
}

/// The ports miniupnpd redirects now (its nftables chain).
fn mapped_ports(net: &Namespaces) -> anyhow::Result<String> {
    let out = net
        .exec(&net.router, &["nft", "list", "chain", "inet", "filter", "prerouting_miniupnpd"])
        .output()?;
    ensure!(out.status.success(), "nft list failed: {}", String::from_utf8_lossy(&out.stderr));
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// miniupnpd's configuration: UPnP and NAT-PMP on the home side, STUN to learn that the
/// router's documentation-range address is reachable, our table and chain names, and mappings
/// only for the home network.
const MINIUPNPD_CONF: &str = "ext_ifname=wan0\nlistening_ip=lan0\nhttp_port=0\nenable_upnp=yes\nenable_natpmp=yes\n\
         secure_mode=yes\nsystem_uptime=yes\nuuid=6b2ad2c5-6b56-4c1e-9a43-0e0c5d1f7a01\n\
         ext_perform_stun=yes\next_stun_host=198.51.100.2\next_stun_port=3478\n\
         upnp_table_name=filter\nupnp_nat_table_name=filter\n\
         upnp_forward_chain=miniupnpd\nupnp_nat_chain=prerouting_miniupnpd\n\
         upnp_nat_postrouting_chain=postrouting_miniupnpd\n\
         allow 1024-65535 192.168.77.0/24 1024-65535\ndeny 0-65535 0.0.0.0/0 0-65535\n";

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0"))
}

/// Debian's miniupnpd (nftables build) and nft, installed when missing, reused when present.
fn install() -> anyhow::Result<()> {
    if have("miniupnpd") && have("nft") && have("ip") {
        return Ok(());
    }
    let script = "export DEBIAN_FRONTEND=noninteractive; \
        apt-get update -qq && apt-get install -y -qq --no-install-recommends miniupnpd-nftables miniupnpd nftables iproute2";
    let status = Command::new("sh").args(["-c", script]).status().context("cannot run apt-get")?;
    ensure!(status.success() && have("miniupnpd") && have("nft"), "installing miniupnpd and nftables failed");
    Ok(())
}

/// Three namespaces and their links; removed (with every process started in them) when
/// dropped.
struct Namespaces {
    home: String,
    router: String,
    public: String,
    dir: PathBuf,
}

impl Namespaces {
    fn build() -> anyhow::Result<Self> {
        let id = std::process::id();
        let dir = std::env::temp_dir().join(format!("dplay-upnp-{id}"));
        std::fs::create_dir_all(&dir)?;
        let net = Namespaces {
            home: format!("dpu-home-{id}"),
            router: format!("dpu-rtr-{id}"),
            public: format!("dpu-pub-{id}"),
            dir,
        };
        for ns in [&net.home, &net.router, &net.public] {
            run(Command::new("ip").args(["netns", "add", ns]))?;
            run(&mut net.exec(ns, &["ip", "link", "set", "lo", "up"]))?;
        }
        let (home, router, public) = (&net.home, &net.router, &net.public);
        run(Command::new("ip").args([
            "link", "add", "lan0", "netns", router, "type", "veth", "peer", "name", "eth0", "netns", home,
        ]))?;
        run(Command::new("ip").args([
            "link", "add", "wan0", "netns", router, "type", "veth", "peer", "name", "eth0", "netns", public,
        ]))?;
        for (ns, dev, addr) in [
            (home, "eth0", "192.168.77.2/24"),
            (router, "lan0", "192.168.77.1/24"),
            (router, "wan0", "198.51.100.1/24"),
            (public, "eth0", "198.51.100.2/24"),
        ] {
            run(&mut net.exec(ns, &["ip", "addr", "add", addr, "dev", dev]))?;
            run(&mut net.exec(ns, &["ip", "link", "set", dev, "up"]))?;
        }
        run(&mut net.exec(home, &["ip", "route", "add", "default", "via", "192.168.77.1"]))?;
        run(&mut net.exec(router, &["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]))?;
        let rules = net.dir.join("router.nft");
        std::fs::write(&rules, RULESET)?;
        run(&mut net.exec(router, &["nft", "-f", &rules.to_string_lossy()]))?;
        Ok(net)
    }

    /// Waits until miniupnpd listens for NAT-PMP, which it does once STUN said its address is
    /// reachable (a few seconds at most: 3 s per unanswered STUN round).
    #[allow(clippy::disallowed_methods)] // the case's own clock
    fn wait_for_igd(&self, s: &Suite) -> anyhow::Result<()> {
        let until = (std::time::Instant::now() + WAIT).min(s.deadline);
        while std::time::Instant::now() < until {
            let out = self.exec(&self.router, &["ss", "-Hlun", "sport", "=", ":5351"]).output()?;
            if !out.stdout.is_empty() {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        bail!("miniupnpd did not start answering within {} s", WAIT.as_secs())
    }

    /// `argv` run inside `ns`.
    fn exec(&self, ns: &str, argv: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns]).args(argv);
        c
    }

    /// Starts `command` inside `ns`, its output discarded (`DPLAY_UPNP_LOG=1` shows it); killed
    /// with the namespaces.
    fn spawn_daemon(&self, ns: &str, command: &mut Command) -> anyhow::Result<Daemon> {
        let program = command.get_program().to_owned();
        let args: Vec<_> = command.get_args().map(ToOwned::to_owned).collect();
        let shown = std::env::var_os("DPLAY_UPNP_LOG").is_some();
        let out = || if shown { Stdio::inherit() } else { Stdio::null() };
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .arg(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out())
            .stderr(out())
            .spawn()
            .context("cannot start a daemon in the namespaces")?;
        Ok(Daemon(child))
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in [&self.home, &self.router, &self.public] {
            let _ = Command::new("ip").args(["netns", "pids", ns]).output().map(|o| {
                for pid in String::from_utf8_lossy(&o.stdout).split_whitespace() {
                    let _ = Command::new("kill").args(["-KILL", pid]).status();
                }
            });
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A process in the namespaces, killed when dropped.
struct Daemon(Child);

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(command: &mut Command) -> anyhow::Result<()> {
    let out = command.output().with_context(|| format!("cannot run {command:?}"))?;
    if !out.status.success() {
        bail!("{command:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim());
    }
    Ok(())
}
