//! PCP (RFC 6887) and NAT-PMP (RFC 6886) at the default gateway, through `crab_nat`: PCP first,
//! NAT-PMP when the gateway asks for it. `crab_nat` is async; a current-thread tokio runtime
//! on the mapper's own thread drives it.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};
use std::num::NonZeroU16;
use std::time::Duration;

use crab_nat::{InternetProtocol, PortMapping, PortMappingOptions, PortMappingType, TimeoutConfig};

use crate::{LEASE, Mapping, Port, Transport, local_ip};

/// The port PCP and NAT-PMP servers listen on (RFC 6887 19.1).
const PCP_PORT: u16 = 5351;

/// Each request: 250 ms, doubled on each of 3 retries, 1 s at most (about 2.75 s in all).
const TIMEOUT: TimeoutConfig = TimeoutConfig {
    initial_timeout: Duration::from_millis(250),
    max_retries: 3,
    max_retry_timeout: Some(Duration::from_secs(1)),
};

/// A gateway that mapped our ports by PCP or NAT-PMP.
pub(crate) struct Pmp {
    runtime: tokio::runtime::Runtime,
    gateway: Ipv4Addr,
    public: Ipv4Addr,
    mappings: Vec<(Port, PortMapping)>,
}

impl Pmp {
    /// `PCP` or `NAT-PMP`.
    pub(crate) fn method(&self) -> &'static str {
        match self.mappings.first().map(|(_, m)| m.mapping_type()) {
            Some(PortMappingType::NatPmp) => "NAT-PMP",
            _ => "PCP",
        }
    }

    /// The gateway's PCP address.
    pub(crate) fn router(&self) -> SocketAddr {
        SocketAddr::from((self.gateway, PCP_PORT))
    }

    /// What the gateway mapped.
    pub(crate) fn mappings(&self) -> Vec<Mapping> {
        let public = |m: &PortMapping| SocketAddrV4::new(self.public, m.external_port().get());
        self.mappings.iter().map(|(local, m)| Mapping { local: *local, public: public(m) }).collect()
    }

    /// Renews every mapping for another lease.
    pub(crate) fn renew(&mut self) -> Result<(), String> {
        for (local, m) in &mut self.mappings {
            self.runtime
                .block_on(m.renew())
                .map_err(|e| format!("renewing {} {} failed ({e})", local.transport, local.port))?;
        }
        Ok(())
    }

    /// Removes the mappings; how many the gateway refused.
    pub(crate) fn remove(self) -> usize {
        let runtime = self.runtime;
        self.mappings.into_iter().filter(|(_, m)| runtime.block_on(m.clone().try_drop()).is_err()).count()
    }
}

/// Maps `ports` at the default gateway.
pub(crate) fn start(ports: &[Port]) -> Result<Pmp, String> {
    let gateway = default_gateway().ok_or("no default gateway to ask by PCP or NAT-PMP")?;
    let local = local_ip(gateway.into()).map_err(|e| format!("no local address toward {gateway}: {e}"))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the PCP client: {e}"))?;
    let mut pmp = Pmp { runtime, gateway, public: Ipv4Addr::UNSPECIFIED, mappings: Vec::new() };
    for port in ports {
        let internal = NonZeroU16::new(port.port).ok_or("port 0 cannot be mapped")?;
        let options = PortMappingOptions {
            external_port: Some(internal),
            lifetime_seconds: u32::try_from(LEASE.as_secs()).ok(),
            timeout_config: Some(TIMEOUT),
        };
        let protocol = match port.transport {
            Transport::Udp => InternetProtocol::Udp,
            Transport::Tcp => InternetProtocol::Tcp,
        };
        let mapped =
            pmp.runtime.block_on(PortMapping::new(gateway.into(), local.into(), protocol, internal, options));
        match mapped {
            Ok(m) => pmp.mappings.push((*port, m)),
            Err(e) => {
                pmp.remove();
                return Err(format!(
                    "PCP and NAT-PMP at {gateway}: {} {} not mapped ({e})",
                    port.transport, port.port
                ));
            }
        }
    }
    pmp.public = match pmp.mappings.first().map(|(_, m)| m.mapping_type()) {
        Some(PortMappingType::Pcp { external_ip: IpAddr::V4(ip), .. }) => ip,
        _ => match pmp.runtime.block_on(crab_nat::natpmp::external_address(gateway.into(), Some(TIMEOUT))) {
            Ok(ip) => ip,
            Err(e) => {
                pmp.remove();
                return Err(format!("NAT-PMP at {gateway} gave no public address ({e})"));
            }
        },
    };
    Ok(pmp)
}

/// The IPv4 default gateway from the kernel's routing table (Linux: /proc/net/route, whose
/// addresses are the kernel's in-memory words in hexadecimal); `None` elsewhere or without one.
fn default_gateway() -> Option<Ipv4Addr> {
    /// RTF_UP | RTF_GATEWAY.
    const UP_GATEWAY: u32 = 0x1 | 0x2;
    let table = std::fs::read_to_string("/proc/net/route").ok()?;
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (destination, gateway, flags) = (fields.get(1)?, fields.get(2)?, fields.get(3)?);
        let flags = u32::from_str_radix(flags, 16).ok()?;
        if *destination != "00000000" || flags & UP_GATEWAY != UP_GATEWAY {
            return None;
        }
        Some(Ipv4Addr::from(u32::from_str_radix(gateway, 16).ok()?.to_ne_bytes()))
    })
}
