//! Private network namespaces for the cases where addresses or ports matter: made with `ip
//! netns`, linked by veth pairs, removed when dropped. No traffic leaves them.

use std::process::{Command, Stdio};

use anyhow::{Context, ensure};

/// The namespaces of one run, removed when dropped.
pub(super) struct Net {
    prefix: String,
    names: Vec<String>,
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("ip").args(args).stdout(Stdio::null()).status().context("running ip")?;
    ensure!(status.success(), "ip {} failed", args.join(" "));
    Ok(())
}

impl Net {
    /// No namespace yet; theirs will be named `PREFIX<pid>-NAME`.
    pub(super) fn new(prefix: &str) -> Self {
        Net { prefix: format!("{prefix}{}-", std::process::id()), names: Vec::new() }
    }

    /// The full name of the namespace `name`.
    pub(super) fn ns(&self, name: &str) -> String {
        format!("{}{name}", self.prefix)
    }

    /// Runs `args` inside `ns`.
    pub(super) fn exec(&self, ns: &str, args: &[&str]) -> anyhow::Result<()> {
        let ns = self.ns(ns);
        let mut all = vec!["netns", "exec", ns.as_str()];
        all.extend_from_slice(args);
        ip(&all)
    }

    /// Runs `args` inside `ns`; its standard output.
    pub(super) fn output(&self, ns: &str, args: &[&str]) -> anyhow::Result<String> {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.ns(ns)])
            .args(args)
            .output()
            .context("running ip netns exec")?;
        ensure!(
            out.status.success(),
            "{} in {ns} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        );
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// A new namespace, its loopback up.
    pub(super) fn add(&mut self, name: &str) -> anyhow::Result<()> {
        let ns = self.ns(name);
        ip(&["netns", "add", &ns])?;
        self.names.push(ns);
        self.exec(name, &["ip", "link", "set", "lo", "up"])
    }

    /// A veth pair between `a` (named `a_if`, address `a_addr`) and `b`; each address with its
    /// broadcast address, as DHCP gives it.
    pub(super) fn link(
        &self,
        a: &str,
        a_if: &str,
        a_addr: Option<&str>,
        b: &str,
        b_if: &str,
        b_addr: Option<&str>,
    ) -> anyhow::Result<()> {
        let (na, nb) = (self.ns(a), self.ns(b));
        ip(&["link", "add", a_if, "netns", &na, "type", "veth", "peer", "name", b_if, "netns", &nb])?;
        for (ns, ifname, addr) in [(a, a_if, a_addr), (b, b_if, b_addr)] {
            if let Some(addr) = addr {
                self.exec(ns, &["ip", "addr", "add", addr, "brd", "+", "dev", ifname])?;
            }
            self.exec(ns, &["ip", "link", "set", ifname, "up"])?;
        }
        Ok(())
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for ns in self.names.iter().rev() {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
    }
}
