//! A host's own router: maps the host's ports with UPnP IGD (through `igd-next`), else with PCP
//! or NAT-PMP (through `crab_nat`), renews the mappings at half their lease, removes them when
//! stopped, and reports the public address players should join at.
//!
//! [`PortMapper::start`] does all of it on a thread of its own (the router's HTTP, SSDP and
//! PCP exchanges block or wait), beside the host's protocol loop; [`PortMapper::stop`] (or
//! dropping it) removes the mappings, bounded in time. What happens is reported as
//! [`PortmapEvent`]s. Failure is an event, never a panic or an exit: the host goes on without
//! the mappings.
#![deny(missing_docs)]

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};
use igd_next::PortMappingProtocol;

mod pmp;
mod upnp;

/// The lease asked for each mapping; renewed at half of it.
pub const LEASE: Duration = Duration::from_secs(3600);

/// How long the search for a UPnP router lasts at most.
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
        /// How: `UPnP`, `PCP` or `NAT-PMP`.
        method: &'static str,
        /// The router that mapped them.
        router: SocketAddr,
        /// The mappings.
        mappings: Vec<Mapping>,
    },
    /// The mappings were renewed.
    Renewed,
    /// Mapping (or renewing) failed: why, in one line. The host goes on unmapped.
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

/// The router that mapped our ports, by the protocol it speaks.
enum Router {
    Igd(upnp::Igd),
    Pmp(pmp::Pmp),
}

impl Router {
    /// UPnP IGD first (what most home routers speak), then PCP and NAT-PMP at the default
    /// gateway.
    fn map(ports: &[Port]) -> Result<Self, String> {
        match upnp::start(ports) {
            Ok(igd) => Ok(Self::Igd(igd)),
            Err(upnp) => match pmp::start(ports) {
                Ok(pmp) => Ok(Self::Pmp(pmp)),
                Err(pmp) => Err(format!("{upnp}; {pmp}")),
            },
        }
    }

    fn mapped(&self) -> PortmapEvent {
        let (method, router, mappings) = match self {
            Self::Igd(igd) => ("UPnP", igd.router(), igd.mappings.clone()),
            Self::Pmp(pmp) => (pmp.method(), pmp.router(), pmp.mappings()),
        };
        PortmapEvent::Mapped { method, router, mappings }
    }

    fn renew(&mut self) -> Result<(), String> {
        match self {
            Self::Igd(igd) => igd.renew(),
            Self::Pmp(pmp) => pmp.renew(),
        }
    }

    fn remove(self) -> usize {
        match self {
            Self::Igd(igd) => igd.remove(),
            Self::Pmp(pmp) => pmp.remove(),
        }
    }
}

impl PortMapper {
    /// Finds the router and maps `ports` on a thread of its own, reporting to `events`.
    pub fn start(ports: Vec<Port>, events: Sender<PortmapEvent>) -> Self {
        let (stop, stopped) = crossbeam_channel::bounded::<()>(1);
        let thread = std::thread::Builder::new().name("dplay-portmap".into()).spawn(move || {
            let report = |e| {
                let _ = events.send(e);
            };
            let mut router = match Router::map(&ports) {
                Ok(router) => router,
                Err(why) => return report(PortmapEvent::Failed(why)),
            };
            report(router.mapped());
            // Renew at half the lease until told to stop (or the mapper is dropped).
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(LEASE / 2) {
                match router.renew() {
                    Ok(()) => report(PortmapEvent::Renewed),
                    Err(why) => report(PortmapEvent::Failed(why)),
                }
            }
            report(PortmapEvent::Removed { failed: router.remove() });
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

/// The local address the system routes toward `router` from (a connected UDP socket sends
/// nothing).
fn local_ip(router: IpAddr) -> std::io::Result<Ipv4Addr> {
    let socket = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    socket.connect((router, 9))?;
    match socket.local_addr()?.ip() {
        IpAddr::V4(ip) => Ok(ip),
        IpAddr::V6(ip) => Err(std::io::Error::other(format!("{ip} is not IPv4"))),
    }
}
