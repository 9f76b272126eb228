//! A private network namespace for one bench thread and the threads it starts (Linux, root),
//! made and removed with iproute2's `ip netns`, whose loopback hands every datagram it
//! receives to one core to process (Receive Packet Steering): a sender on another core then
//! pays for putting the datagram on the wire and not for the receiver's side, as on a real
//! network. Nothing leaves the namespace; the machine's own loopback is not touched.

use std::fs::File;
use std::os::fd::AsFd;
use std::process::Command;

use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};

use crate::pin;

/// A namespace the calling thread moved into; dropping it removes its name (the namespace
/// itself goes with the last thread and socket in it).
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// Makes a namespace whose loopback is up and processes what it receives on `core`, and
    /// moves the calling thread into it: threads it spawns from then on start there too.
    pub fn enter_receiving_on(core: usize) -> Result<Self, String> {
        let name = format!("dplay-bench-{}", std::process::id());
        pin::run(Command::new("ip").args(["netns", "add", &name]))?;
        let ns = Self { name };
        let mask = format!("{:x}", 1u64 << core);
        let setup = format!("ip link set lo up && echo {mask} > /sys/class/net/lo/queues/rx-0/rps_cpus");
        pin::run(Command::new("ip").args(["netns", "exec", &ns.name, "sh", "-c", &setup]))?;
        let file = File::open(format!("/run/netns/{}", ns.name)).map_err(|e| format!("{}: {e}", ns.name))?;
        move_into_link_name_space(file.as_fd(), Some(LinkNameSpaceType::Network))
            .map_err(|e| format!("setns {}: {e}", ns.name))?;
        Ok(ns)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = pin::run(Command::new("ip").args(["netns", "del", &self.name]));
    }
}
