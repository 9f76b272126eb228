//! A private network namespace for a Wine test that needs a fixed port (UDP 6073): only its own
//! loopback, so nothing else on this machine answers there or is disturbed. Removed when dropped.

use std::process::{Command, Stdio};

use anyhow::{Context, ensure};

/// A network namespace with its loopback up (`ip netns add`), deleted on drop.
pub(super) struct Netns {
    name: String,
}

impl Netns {
    /// `dpwine<pid>-<what>`.
    pub(super) fn new(what: &str) -> anyhow::Result<Self> {
        let name = format!("dpwine{}-{what}", std::process::id());
        ip(&["netns", "add", &name]).context("a private network namespace needs root and iproute2's ip")?;
        let ns = Netns { name };
        ip(&["netns", "exec", &ns.name, "ip", "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// Its name, for `ip netns exec`.
    pub(super) fn name(&self) -> &str {
        &self.name
    }

    /// `command` run inside (`ip netns exec`).
    pub(super) fn wrap(&self, command: &Command) -> Command {
        let mut wrapped = Command::new("ip");
        wrapped.args(["netns", "exec", &self.name]).arg(command.get_program()).args(command.get_args());
        wrapped
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = ip(&["netns", "del", &self.name]);
    }
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("ip").args(args).stdout(Stdio::null()).status().context("running ip")?;
    ensure!(status.success(), "ip {} failed ({status})", args.join(" "));
    Ok(())
}
