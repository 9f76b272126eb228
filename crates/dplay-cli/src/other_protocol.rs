//! A command of one DirectPlay version pointed at a host of the other (issue 25 item 10).
//!
//! A DirectPlay 4 host ignores DirectPlay 8's EnumQuery and a DirectPlay 8 host DirectPlay 4's
//! ENUMSESSIONS: neither answers, so "no answer" is all the wrong command could say. Beside its
//! own enumeration, a command therefore asks the same host once in the other protocol, at that
//! protocol's enumeration port (DirectPlay 4: UDP 47624, MC-DPL4CS 2.1; DirectPlay 8: 6073,
//! MS-DPDX 3.3.4). When only that one answers, the error names the protocol to use. One query
//! (DirectPlay 8 retries it every 500 ms), only to the host the user named, and not on
//! loopback: there the other protocol's ports belong to whatever else runs on this machine,
//! and whoever started the local host knows its protocol (docs/decisions.md).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;
use dplay_runtime::{
    Dp4Binding, Dp4Command, Dp4Event, Dp4Protocol, Dp8Command, Dp8Event, Dp8Protocol, Runtime,
};
use dplay_session::dp4::config::ENUM_PORT;
use dplay_session::dp4::{Dp4Config, Dp4Event as Dp4SessionEvent, EnumRequest};
use dplay_session::{Event, SessionConfig};
use dplay_wire::dp4::enumeration::EnumSessionsFlags;
use uuid::Uuid;

use crate::live;

/// How long a failed command waits for the other protocol's answer still on its way (a
/// DirectPlay 4 host answers over TCP, after connecting to us).
pub(crate) const OTHER_GRACE: Duration = Duration::from_millis(300);

/// The other protocol's enumeration, running beside a command's own.
pub(crate) enum OtherProbe {
    /// A DirectPlay 8 command asking in DirectPlay 4.
    Dp4(Runtime<Dp4Protocol>),
    /// A DirectPlay 4 command asking in DirectPlay 8.
    Dp8(Runtime<Dp8Protocol>),
    /// Nothing to ask (loopback, a broadcast, an IPv6 host for DirectPlay 4, no socket free).
    None,
}

impl OtherProbe {
    /// For a DirectPlay 8 command aimed at `target`: ENUMSESSIONS to its port 47624.
    pub(crate) fn dp4_at(target: SocketAddr) -> Self {
        let std::net::IpAddr::V4(ip) = target.ip() else { return Self::None };
        if ip.is_broadcast() || ip.is_multicast() || ip.is_unspecified() || ip.is_loopback() {
            return Self::None;
        }
        let bind = live::bind_for(target);
        let std::net::IpAddr::V4(bind_ip) = bind.ip() else { return Self::None };
        let Ok(runtime) =
            Dp4Protocol::spawn_wrapped(&Dp4Binding::client(bind_ip), Dp4Config::default(), None, |p| p)
        else {
            return Self::None;
        };
        let request = EnumRequest {
            application_guid: Uuid::nil(),
            password: None,
            flags: EnumSessionsFlags::ALL | EnumSessionsFlags::PASSWORD_REQUIRED,
        };
        let to = SocketAddr::new(target.ip(), ENUM_PORT);
        if runtime.command(Dp4Command::EnumSessions { target: Some(to), request }).is_err() {
            return Self::None;
        }
        Self::Dp4(runtime)
    }

    /// For a DirectPlay 4 command aimed at `target`: EnumQuery (any application) to its port
    /// 6073.
    pub(crate) fn dp8_at(target: SocketAddr) -> Self {
        let ip = target.ip();
        let broadcast = matches!(ip, std::net::IpAddr::V4(v4) if v4.is_broadcast());
        if broadcast || ip.is_multicast() || ip.is_unspecified() || ip.is_loopback() {
            return Self::None;
        }
        #[allow(clippy::disallowed_methods)] // the probe's own clock
        let start = Instant::now();
        let Ok(runtime) = live::spawn(live::bind_for(target), None, |local| {
            let mut c = SessionConfig::new(Uuid::nil(), local, "probe");
            c.set_enum_retry(Duration::from_millis(500));
            Dp8Protocol::new(c, start)
        }) else {
            return Self::None;
        };
        let to = SocketAddr::new(ip, live::DPLAY8_PORT);
        if runtime.command(Dp8Command::EnumHosts { target: to, application_guid: None }).is_err() {
            return Self::None;
        }
        Self::Dp8(runtime)
    }

    /// What to tell the user when the other protocol answered, waiting at most `grace` for
    /// an answer on its way.
    pub(crate) fn hint(&self, grace: Duration) -> Option<String> {
        match self {
            Self::Dp4(runtime) => {
                let from = first(runtime.events(), grace, |e| match e {
                    Dp4Event::Session(Dp4SessionEvent::SessionFound(f)) => Some(f.host.ip()),
                    _ => None,
                })?;
                Some(format!(
                    "this looks like DirectPlay 4: {from}:{ENUM_PORT} answered DirectPlay 4's ENUMSESSIONS: try --dp4"
                ))
            }
            Self::Dp8(runtime) => {
                let from = first(runtime.events(), grace, |e| match e {
                    Dp8Event::Session(Event::HostFound { from, .. }) => Some(from),
                    _ => None,
                })?;
                Some(format!(
                    "this looks like DirectPlay 8: {from} answered DirectPlay 8's EnumQuery: drop --dp4"
                ))
            }
            Self::None => None,
        }
    }
}

/// The first event `pick` takes, among those queued and those arriving within `grace`.
fn first<E, T>(events: &Receiver<E>, grace: Duration, pick: impl Fn(E) -> Option<T>) -> Option<T> {
    #[allow(clippy::disallowed_methods)] // the grace's own clock
    let until = Instant::now() + grace;
    loop {
        let event = match events.try_recv() {
            Ok(e) => e,
            Err(_) => events.recv_deadline(until).ok()?,
        };
        if let Some(t) = pick(event) {
            return Some(t);
        }
    }
}
