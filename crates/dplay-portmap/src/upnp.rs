//! UPnP IGD (through `igd-next`): find the router by SSDP, map, renew, remove.

use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4};

use igd_next::{AddPortError, Gateway, SearchOptions};

use crate::{DESCRIPTION, LEASE, Mapping, Port, SEARCH_TIMEOUT, local_ip};

/// A router that mapped our ports by UPnP IGD.
pub(crate) struct Igd {
    gateway: Gateway,
    pub(crate) mappings: Vec<Mapping>,
}

impl Igd {
    /// The router's address.
    pub(crate) fn router(&self) -> SocketAddr {
        self.gateway.addr
    }

    /// Maps every port again for another lease.
    pub(crate) fn renew(&self) -> Result<(), String> {
        renew(&self.gateway, &self.mappings)
    }

    /// Removes the mappings; how many the router refused.
    pub(crate) fn remove(&self) -> usize {
        self.mappings
            .iter()
            .filter(|m| self.gateway.remove_port(m.local.transport.into(), m.public.port()).is_err())
            .count()
    }
}

/// Finds the router and maps `ports`.
pub(crate) fn start(ports: &[Port]) -> Result<Igd, String> {
    map(ports).map(|(gateway, mappings)| Igd { gateway, mappings })
}

/// Finds the router and maps every port; on a failure, removes those already mapped.
fn map(ports: &[Port]) -> Result<(Gateway, Vec<Mapping>), String> {
    let mut options = SearchOptions::default();
    options.timeout = Some(SEARCH_TIMEOUT);
    let gateway = igd_next::search_gateway(options)
        .map_err(|e| format!("no UPnP router answered within {} s ({e})", SEARCH_TIMEOUT.as_secs()))?;
    let local =
        local_ip(gateway.addr.ip()).map_err(|e| format!("no local address toward the router: {e}"))?;
    let public = match gateway.get_external_ip() {
        Ok(IpAddr::V4(ip)) if !ip.is_unspecified() => ip,
        Ok(ip) => {
            return Err(format!("the router at {} reports no usable public address ({ip})", gateway.addr));
        }
        Err(e) => return Err(format!("the router at {} gave no public address ({e})", gateway.addr)),
    };
    let mut mappings = Vec::new();
    for port in ports {
        match add(&gateway, local, *port) {
            Ok(external) => {
                mappings.push(Mapping { local: *port, public: SocketAddrV4::new(public, external) })
            }
            Err(e) => {
                for m in &mappings {
                    let _ = gateway.remove_port(m.local.transport.into(), m.public.port());
                }
                return Err(format!(
                    "the router at {} refused {} {} ({e})",
                    gateway.addr, port.transport, port.port
                ));
            }
        }
    }
    Ok((gateway, mappings))
}

/// Maps `port` at the same external port, else at any the router picks; returns the external
/// port.
fn add(gateway: &Gateway, local: Ipv4Addr, port: Port) -> Result<u16, String> {
    let to = SocketAddr::from((local, port.port));
    let lease = u32::try_from(LEASE.as_secs()).unwrap_or(u32::MAX);
    let same = match gateway.add_port(port.transport.into(), port.port, to, lease, DESCRIPTION) {
        // Some routers take no lease but forever: the mapping is removed at exit all the same.
        Err(AddPortError::OnlyPermanentLeasesSupported) => {
            gateway.add_port(port.transport.into(), port.port, to, 0, DESCRIPTION)
        }
        other => other,
    };
    match same {
        Ok(()) => Ok(port.port),
        Err(AddPortError::PortInUse) => {
            gateway.add_any_port(port.transport.into(), to, lease, DESCRIPTION).map_err(|e| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Maps every port again for another lease.
fn renew(gateway: &Gateway, mappings: &[Mapping]) -> Result<(), String> {
    let lease = u32::try_from(LEASE.as_secs()).unwrap_or(u32::MAX);
    for m in mappings {
        let to = SocketAddr::from((local_ip(gateway.addr.ip()).map_err(|e| e.to_string())?, m.local.port));
        gateway
            .add_port(m.local.transport.into(), m.public.port(), to, lease, DESCRIPTION)
            .map_err(|e| format!("renewing {} {} failed ({e})", m.local.transport, m.public.port()))?;
    }
    Ok(())
}
