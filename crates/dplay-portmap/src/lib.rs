//! A host's own router: maps the host's ports with UPnP IGD (through `igd-next`), renews the
//! mappings at half their lease, removes them when stopped, and reports the public address
//! players should join at.
//!
//! [`PortMapper::start`] does all of it on a thread of its own (the router's HTTP and SSDP
//! exchanges block), beside the host's protocol loop; [`PortMapper::stop`] (or dropping it)
//! removes the mappings, bounded in time. What happens is reported as [`PortmapEvent`]s. Failure
//! is an event, never a panic or an exit: the host goes on without the mappings.
#![deny(missing_docs)]

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};
use igd_next::{AddPortError, Gateway, PortMappingProtocol, SearchOptions};

/// The lease asked for each mapping; renewed at half of it.
pub const LEASE: Duration = Duration::from_secs(3600);

/// How long the search for a router lasts at most.
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(3);

/// The description the mappings carry on the router.
const DESCRIPTION: &str = "dplay host";

/// A transport protocol of a mapped port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Transport {
    /// UDP (DirectPlay 8; DirectPlay 4's enumeration and game datagrams).
    Udp,
    /// TCP (DirectPlay 4's stream).
    Tcp,
}

impl fmt::Display for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Udp => "UDP",
            Self::Tcp => "TCP",
        })
    }
}

impl From<Transport> for PortMappingProtocol {
    fn from(t: Transport) -> Self {
        match t {
            Transport::Udp => Self::UDP,
            Transport::Tcp => Self::TCP,
        }
    }
}

/// One local port to map; the router is asked for the same external port, else any.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Port {
    /// UDP or TCP.
    pub transport: Transport,
    /// The host's port.
    pub port: u16,
}

/// One mapping the router made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mapping {
    /// The local port it forwards to.
    pub local: Port,
    /// The public address and port it forwards from.
    pub public: SocketAddrV4,
}

/// What the mapper did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PortmapEvent {
    /// Every port is mapped, in the order asked; the first one's public address is where
    /// players join.
    Mapped {
        /// The router that mapped them (its SSDP address).
        router: SocketAddr,
        /// The mappings.
        mappings: Vec<Mapping>,
    },
    /// The mappings were renewed.
    Renewed,
    /// Mapping failed: why, in one line. The host goes on unmapped.
    Failed(String),
    /// The mappings were removed (`failed` of them could not be).
    Removed {
        /// Removals the router refused or did not answer.
        failed: usize,
    },
}

/// The mapper's thread; stopping or dropping it removes the mappings.
#[derive(Debug)]
pub struct PortMapper {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl PortMapper {
    /// Finds the router and maps `ports` on a thread of its own, reporting to `events`.
    pub fn start(ports: Vec<Port>, events: Sender<PortmapEvent>) -> Self {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(1);
        let thread = std::thread::Builder::new().name("dplay-portmap".into()).spawn(move || {
            let report = |e| {
                let _ = events.send(e);
            };
            let (gateway, mappings) = match map(&ports) {
                Ok(done) => done,
                Err(why) => return report(PortmapEvent::Failed(why)),
            };
            report(PortmapEvent::Mapped { router: gateway.addr, mappings: mappings.clone() });
            loop {
                match stopped.recv_timeout(LEASE / 2) {
                    Err(RecvTimeoutError::Timeout) => match renew(&gateway, &mappings) {
                        Ok(()) => report(PortmapEvent::Renewed),
                        Err(why) => report(PortmapEvent::Failed(why)),
                    },
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            let failed = mappings
                .iter()
                .filter(|m| gateway.remove_port(m.local.transport.into(), m.public.port()).is_err())
                .count();
            report(PortmapEvent::Removed { failed });
        });
        match thread {
            Ok(thread) => Self { stop: Some(stop), thread: Some(thread) },
            Err(e) => {
                tracing::warn!("cannot start the port mapper: {e}");
                Self { stop: None, thread: None }
            }
        }
    }

    /// Removes the mappings and waits for the router's answers (a few seconds at most).
    pub fn stop(mut self) {
        self.finish();
    }

    fn finish(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.try_send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for PortMapper {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Finds the router and maps every port; on a failure, removes those already mapped.
fn map(ports: &[Port]) -> Result<(Gateway, Vec<Mapping>), String> {
    let mut options = SearchOptions::default();
    options.timeout = Some(SEARCH_TIMEOUT);
    let gateway = igd_next::search_gateway(options)
        .map_err(|e| format!("no UPnP router answered within {} s ({e})", SEARCH_TIMEOUT.as_secs()))?;
    let local = local_ip(gateway.addr).map_err(|e| format!("no local address toward the router: {e}"))?;
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
        let to = SocketAddr::from((local_ip(gateway.addr).map_err(|e| e.to_string())?, m.local.port));
        gateway
            .add_port(m.local.transport.into(), m.public.port(), to, lease, DESCRIPTION)
            .map_err(|e| format!("renewing {} {} failed ({e})", m.local.transport, m.public.port()))?;
    }
    Ok(())
}

/// The local address the system routes toward `router` from (a connected UDP socket sends
/// nothing).
fn local_ip(router: SocketAddr) -> std::io::Result<Ipv4Addr> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    socket.connect(router)?;
    match socket.local_addr()?.ip() {
        IpAddr::V4(ip) => Ok(ip),
        IpAddr::V6(ip) => Err(std::io::Error::other(format!("{ip} is not IPv4"))),
    }
}
