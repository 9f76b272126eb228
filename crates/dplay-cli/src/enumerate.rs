//! `dplay enum`: lists the DirectPlay 8 sessions that answer EnumQuery at an address (or, with
//! `--dp4`, the DirectPlay 4 sessions that answer ENUMSESSIONS).

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol};
use dplay_session::Event;
use dplay_wire::WideString;
use uuid::Uuid;

use crate::events::{JsonEvent, flag_names, flags_text};
use crate::live::{self, Output};
use crate::other_protocol::{OTHER_GRACE, OtherProbe};

/// `dplay enum` options.
#[derive(Args)]
pub(crate) struct EnumArgs {
    /// Look for DirectPlay 4 sessions (ENUMSESSIONS to UDP port 47624; with no address, to
    /// every interface's broadcast address).
    #[arg(long)]
    pub(crate) dp4: bool,
    /// The host (or broadcast) address to ask (default port: 6073; DirectPlay 4: 47624).
    #[arg(value_name = "ADDR[:PORT]", value_parser = crate::address::parse_target, required_unless_present = "dp4")]
    pub(crate) target: Option<SocketAddr>,
    /// The local address (default: loopback for a loopback target, else any; DirectPlay 8 port
    /// 0, DirectPlay 4 the first free ports of 2300-2400).
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = live::parse_host)]
    pub(crate) bind: Option<SocketAddr>,
    /// Only sessions of this application GUID answer.
    #[arg(long, value_name = "GUID")]
    pub(crate) app_guid: Option<Uuid>,
    /// Ask with no application GUID (EnumQuery QueryType 0x02, MC-DPLHP 2.2.1): every DirectPlay
    /// 8 host answers, with its application GUID (how to learn an FS2002 host's). The default
    /// when --app-guid is absent. DirectPlay 4 has no such query (MC-DPL4CS 3.2.5.3).
    #[arg(long, conflicts_with_all = ["app_guid", "dp4"])]
    pub(crate) any_app: bool,
    /// How long to listen for answers (seconds, or a unit such as 500ms).
    #[arg(long, value_name = "TIME", default_value = "3", value_parser = crate::duration::parse)]
    pub(crate) timeout: Duration,
    /// Print each session as a JSON line.
    #[arg(long)]
    pub(crate) json: bool,
    /// Record every datagram and TCP segment in this pcap file.
    #[arg(long, value_name = "FILE")]
    pub(crate) pcap: Option<std::path::PathBuf>,
}

/// Runs `dplay enum`; true when at least one session answered.
pub(crate) fn run(args: EnumArgs) -> anyhow::Result<bool> {
    if args.dp4 {
        return crate::dp4::enumerate(&args);
    }
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let target = live::or_port(
        args.target.context("give the host's address, such as 192.168.1.10 (or --dp4 to broadcast)")?,
        live::DPLAY8_PORT,
    );
    let bind = live::bind_towards(args.bind, target)?;
    let runtime = live::spawn_broadcast(bind, args.pcap.as_ref(), |local| {
        let mut c = dplay_session::SessionConfig::new(Uuid::nil(), local, "enum");
        c.set_enum_retry(Duration::from_millis(500));
        Dp8Protocol::new(c, start)
    })?;
    let application_guid = args.app_guid.filter(|_| !args.any_app);
    runtime.command(Dp8Command::EnumHosts { target, application_guid })?;
    let out = Output::new(args.json, start);
    let mut seen = BTreeSet::new();
    let deadline = start + args.timeout.max(live::MIN_TIMEOUT);
    // One host answers at a unicast address: done at its answer (issue 25 item 16); a
    // broadcast is listened to for the whole --timeout.
    let unicast = !is_broadcast(target.ip());
    let other = if unicast { OtherProbe::dp4_at(target) } else { OtherProbe::None };
    live::wait(runtime.events(), &interrupt, Some(deadline), |e| {
        if let Dp8Event::Session(Event::HostFound { from, response: r }) = e
            && seen.insert((from, r.application_instance_guid))
        {
            let name = r.session_name.as_ref().map(WideString::to_string_lossy).unwrap_or_default();
            let flags = flag_names(&r.application_desc_flags);
            let data = r.application_data.as_ref().map(|d| dplay_wire::hexdump::hex(d));
            out.event_rows(
                &JsonEvent::Session {
                    host: from.to_string(),
                    name: name.clone(),
                    instance: r.application_instance_guid.to_string(),
                    application: r.application_guid.to_string(),
                    players: r.current_players,
                    max_players: r.max_players,
                    flags: flags.clone(),
                    application_data: data,
                },
                format!(
                    "{from}: \"{name}\"  players {}/{}  flags {}",
                    r.current_players,
                    if r.max_players == 0 { "unlimited".to_owned() } else { r.max_players.to_string() },
                    flags_text(&flags),
                ),
                &[format!("instance {}  application {}", r.application_instance_guid, r.application_guid)],
            );
            return !(unicast && from == target);
        }
        true
    });
    // Enumeration opens no connection: nothing to wait for.
    drop(runtime);
    if seen.is_empty() {
        if let Some(hint) = other.hint(OTHER_GRACE) {
            anyhow::bail!("no DirectPlay 8 session answered at {target}; {hint}");
        }
        anyhow::bail!(
            "no session answered at {}: check that a host runs there and that the address and port are right",
            target
        );
    }
    Ok(true)
}

/// Whether `ip` reaches several hosts: the limited broadcast, a multicast group, or the
/// broadcast address of one of our interfaces (a directed broadcast such as 192.168.1.255).
fn is_broadcast(ip: std::net::IpAddr) -> bool {
    let std::net::IpAddr::V4(v4) = ip else { return ip.is_multicast() };
    v4.is_broadcast()
        || v4.is_multicast()
        || if_addrs::get_if_addrs().unwrap_or_default().iter().any(|i| match &i.addr {
            if_addrs::IfAddr::V4(a) => a.broadcast == Some(v4),
            if_addrs::IfAddr::V6(_) => false,
        })
}
