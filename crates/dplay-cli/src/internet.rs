//! Hosting on the internet: `--upnp` maps the host's ports on the home router
//! (`dplay-portmap`), `--nat-resolver ADDR` asks a NAT resolver which public address the
//! host's port is seen at (MC-DPLNAT 3.3). Either prints the address players join at as
//! `IP:PORT` and shows it on the dashboard; a failure is one line, and the host goes on.

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::Instant;

use clap::Args;
use crossbeam_channel::{Receiver, select};
use dplay_portmap::{Mapping, PortMapper, PortmapEvent};
use dplay_runtime::{Dp4Binding, NatQuery, Protocol, Runtime, SharedRelay};
use dplay_session::nat_resolver::{ResolverClient, ResolverOutcome};
use dplay_web::{PublicAddress, ServerSide};
use serde::Serialize;

pub(crate) use dplay_portmap::{Port, Transport};

use crate::live::Output;

/// The port `--nat-resolver` and `dplay nat-resolver --bind` take when none is given: the
/// server's in MC-DPLNAT 4.1 (docs/decisions.md, "NAT resolver").
pub(crate) const RESOLVER_PORT: u16 = 2506;

/// `--upnp` and `--nat-resolver`, for `dplay host` and `dplay fs host`.
#[derive(Args, Clone, Default)]
pub(crate) struct InternetArgs {
    /// Map the host's ports on the home router (UPnP IGD, else PCP or NAT-PMP), renew them while hosting and remove
    /// them at exit; prints the public IP:PORT players join at. DirectPlay 8: the session's UDP
    /// port; DirectPlay 4: the TCP and UDP game ports and UDP enumeration.
    #[arg(long)]
    pub(crate) upnp: bool,
    /// DirectPlay 8: ask this NAT resolver (such as `dplay nat-resolver`; MC-DPLNAT 3.3) which
    /// public IP:PORT the host's port is seen at, and print it [default port: 2506].
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = parse_resolver, conflicts_with = "dp4")]
    pub(crate) nat_resolver: Option<SocketAddr>,
    /// The user string the NAT resolver asks for, sent as the query's UserData (UTF-8).
    #[arg(long, value_name = "TEXT", requires = "nat_resolver")]
    pub(crate) nat_resolver_string: Option<String>,
}

/// A resolver's address, with [`RESOLVER_PORT`] when none is given.
pub(crate) fn parse_resolver(text: &str) -> Result<SocketAddr, String> {
    crate::address::parse_host(text).map(|a| crate::live::or_port(a, RESOLVER_PORT))
}

/// What `--upnp` maps for a DirectPlay 8 host bound to `local`: its UDP ports, the session's
/// first, then the relay's endpoints under `--relay`.
pub(crate) fn dp8_ports(local: &[SocketAddr]) -> Vec<Port> {
    local.iter().map(|a| Port { transport: Transport::Udp, port: a.port() }).collect()
}

/// What `--upnp` maps for a DirectPlay 4 host: the TCP listener players join at first, then
/// the UDP game and enumeration sockets (MC-DPL4CS 2.1).
pub(crate) fn dp4_ports<P: Protocol>(runtime: &Runtime<P>) -> Vec<Port> {
    [
        (Transport::Tcp, Dp4Binding::LISTENER),
        (Transport::Udp, Dp4Binding::GAME_SOCKET),
        (Transport::Udp, Dp4Binding::ENUM_SOCKET),
    ]
    .into_iter()
    .filter_map(|(transport, id)| Some(Port { transport, port: runtime.socket_addr(id)?.port() }))
    .collect()
}

/// What the options ask for, before the host runs.
pub(crate) struct Internet {
    args: InternetArgs,
    outcome: Option<(SocketAddr, Receiver<ResolverOutcome>)>,
    json: bool,
    /// `--relay`: its endpoints are advertised at their mapped public addresses once known.
    relay: Option<SharedRelay>,
}

impl Internet {
    /// From the options; events print as JSON lines when `json`.
    pub(crate) fn new(args: &InternetArgs, json: bool) -> Self {
        Self { args: args.clone(), outcome: None, json, relay: None }
    }

    /// With `--relay`: once `--upnp` mapped the relay's endpoints, members admitted from then
    /// on are given their public addresses (docs/decisions.md, "Relay").
    pub(crate) fn relaying(mut self, relay: Option<&SharedRelay>) -> Self {
        self.relay = relay.cloned();
        self
    }

    /// The host's protocol, with the NAT resolver query beside it when asked (DirectPlay 8),
    /// starting at `start`.
    pub(crate) fn wrap<P>(&mut self, inner: P, start: Instant) -> NatQuery<P> {
        let Some(resolver) = self.args.nat_resolver else { return NatQuery::new(inner, None) };
        let (tx, rx) = crossbeam_channel::bounded(1);
        let user_data = self.args.nat_resolver_string.clone().unwrap_or_default().into_bytes();
        let ids = getrandom::u64().unwrap_or(0);
        #[allow(clippy::cast_possible_truncation)] // two random IDs from one number
        let client = ResolverClient::new(resolver, user_data, ids as u16, (ids >> 32) as u32, start);
        self.outcome = Some((resolver, rx));
        NatQuery::new(inner, Some((client, tx)))
    }

    /// Runs `serve` (the host) with the UPnP mappings of `ports` (the one players join at
    /// first) when asked, and removes them when it returns; events are timed from `start`.
    pub(crate) fn around<R>(
        self,
        start: Instant,
        ports: Vec<Port>,
        dashboard: Option<ServerSide>,
        serve: impl FnOnce() -> R,
    ) -> R {
        let reach = self.start(start, ports, dashboard);
        let result = serve();
        reach.finish();
        result
    }

    /// Starts the UPnP mappings of `ports` (the one players join at first) when asked, and
    /// the thread that prints what happens and shows it on `dashboard`.
    fn start(self, start: Instant, ports: Vec<Port>, dashboard: Option<ServerSide>) -> Reach {
        let (tx, rx) = crossbeam_channel::unbounded();
        let mapper = self.args.upnp.then(|| PortMapper::start(ports, tx));
        let mapped = mapper.is_some().then_some(rx);
        if mapped.is_none() && self.outcome.is_none() {
            return Reach { mapper: None, printer: None };
        }
        let printer = Printer { out: Output::new(self.json, start), dashboard, relay: self.relay };
        let outcome = self.outcome;
        let thread = std::thread::Builder::new()
            .name("dplay-reach".into())
            .spawn(move || printer.run(mapped, outcome));
        Reach { mapper, printer: thread.ok() }
    }
}

/// The mappings and the printer while hosting.
struct Reach {
    mapper: Option<PortMapper>,
    printer: Option<JoinHandle<()>>,
}

impl Reach {
    /// At exit, after the runtime stopped: removes the mappings (Ctrl-C and SIGTERM come here
    /// too) and waits for the printer.
    fn finish(self) {
        if let Some(mapper) = self.mapper {
            mapper.stop();
        }
        if let Some(printer) = self.printer {
            let _ = printer.join();
        }
    }
}

/// The JSON events of this module (docs/json-events.md).
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum ReachEvent {
    /// Players outside the host's network join at `addr`.
    PublicAddress {
        addr: String,
        via: &'static str,
        /// `upnp`: how the router was asked (`UPnP`, `PCP` or `NAT-PMP`).
        #[serde(skip_serializing_if = "Option::is_none")]
        method: Option<&'static str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        router: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        resolver: Option<String>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        mappings: Vec<String>,
        /// `--relay`: relay endpoints now advertised at their public addresses.
        #[serde(skip_serializing_if = "Option::is_none")]
        relay_endpoints: Option<usize>,
    },
    /// The host could not learn or open its public address; it goes on.
    PublicAddressFailed { via: &'static str, error: String },
}

struct Printer {
    out: Output,
    dashboard: Option<ServerSide>,
    relay: Option<SharedRelay>,
}

impl Printer {
    fn run(
        self,
        mut mapped: Option<Receiver<PortmapEvent>>,
        mut resolved: Option<(SocketAddr, Receiver<ResolverOutcome>)>,
    ) {
        let (no_mapping, no_outcome) = (crossbeam_channel::never(), crossbeam_channel::never());
        while mapped.is_some() || resolved.is_some() {
            let resolver = resolved.as_ref().map(|(at, _)| *at);
            select! {
                recv(mapped.as_ref().unwrap_or(&no_mapping)) -> e => match e {
                    Ok(e) => self.mapping(e),
                    Err(_) => mapped = None,
                },
                recv(resolved.as_ref().map_or(&no_outcome, |(_, rx)| rx)) -> o => {
                    if let (Ok(o), Some(at)) = (o, resolver) {
                        self.resolved(at, o);
                    }
                    resolved = None;
                },
            }
        }
    }

    fn mapping(&self, event: PortmapEvent) {
        match event {
            PortmapEvent::Mapped { method, router, mappings } => {
                let Some(first) = mappings.first() else { return };
                let addr = first.public.to_string();
                let list: Vec<String> = mappings.iter().map(mapping_text).collect();
                let relay_endpoints = self.relay.as_ref().map(|r| {
                    r.advertise_mapped(|port| {
                        let udp = |m: &&Mapping| m.local.transport == Transport::Udp && m.local.port == port;
                        mappings.iter().find(udp).map(|m| SocketAddr::V4(m.public))
                    })
                });
                let relayed = relay_endpoints
                    .map(|n| format!("; {n} relay endpoints are given to members at their public addresses"))
                    .unwrap_or_default();
                let text = format!(
                    "{method}: players can join at {addr} (the router at {} maps {}; renewed while hosting, removed at exit{relayed})",
                    router.ip(),
                    list.join(", ")
                );
                self.show(&addr, "upnp");
                let event = ReachEvent::PublicAddress {
                    addr,
                    via: "upnp",
                    method: Some(method),
                    router: Some(router.to_string()),
                    resolver: None,
                    mappings: list,
                    relay_endpoints,
                };
                self.out.event(&event, text);
            }
            PortmapEvent::Failed(error) => self.failed("upnp", "--upnp", error),
            PortmapEvent::Renewed => tracing::debug!("--upnp: mappings renewed"),
            PortmapEvent::Removed { failed: 0 } => tracing::info!("--upnp: mappings removed"),
            PortmapEvent::Removed { failed } => {
                tracing::warn!(
                    "UPnP: {failed} mappings could not be removed; the router drops them when their lease ends"
                );
            }
            _ => {}
        }
    }

    fn resolved(&self, resolver: SocketAddr, outcome: ResolverOutcome) {
        match outcome {
            ResolverOutcome::Resolved(public) => {
                let addr = public.to_string();
                self.show(&addr, "nat-resolver");
                let text = format!("NAT resolver {resolver}: players can join at {addr}");
                let event = ReachEvent::PublicAddress {
                    addr,
                    via: "nat-resolver",
                    method: None,
                    router: None,
                    resolver: Some(resolver.to_string()),
                    mappings: Vec::new(),
                    relay_endpoints: None,
                };
                self.out.event(&event, text);
            }
            ResolverOutcome::GaveUp => {
                let why = format!("no answer from {resolver} to 4 queries (MC-DPLNAT 3.3.6)");
                self.failed("nat-resolver", "NAT resolver", why);
            }
        }
    }

    fn failed(&self, via: &'static str, what: &str, error: String) {
        let text = format!(
            "{what}: no public address: {error}; hosting goes on, reachable where the host's ports are open"
        );
        self.out.event(&ReachEvent::PublicAddressFailed { via, error }, text);
    }

    fn show(&self, addr: &str, via: &'static str) {
        if let Some(link) = &self.dashboard {
            link.set_public_address(Some(PublicAddress { addr: addr.to_owned(), via }));
        }
    }
}

/// `UDP 6073 -> 198.51.100.1:6073`.
fn mapping_text(m: &Mapping) -> String {
    format!("{} {} -> {}", m.local.transport, m.local.port, m.public)
}
