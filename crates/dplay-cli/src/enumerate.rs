//! `dplay enum`: lists the DirectPlay 8 sessions that answer EnumQuery at an address.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use clap::Args;
use dplay_runtime::{Dp8Command, Dp8Event, Dp8Protocol};
use dplay_session::Event;
use dplay_wire::WideString;
use serde_json::json;
use uuid::Uuid;

use crate::live::{self, Output};

/// `dplay enum` options.
#[derive(Args)]
pub(crate) struct EnumArgs {
    /// The host (or broadcast) address to ask.
    #[arg(value_name = "ADDR:PORT", value_parser = live::parse_addr)]
    target: SocketAddr,
    /// The local address (default: loopback for a loopback target, else any, port 0).
    #[arg(long, value_name = "ADDR:PORT", value_parser = live::parse_addr)]
    bind: Option<SocketAddr>,
    /// Only sessions of this application GUID answer.
    #[arg(long, value_name = "GUID")]
    app_guid: Option<Uuid>,
    /// How long to listen for answers, in seconds.
    #[arg(long, default_value_t = 3.0)]
    timeout: f64,
    /// Print each session as a JSON line.
    #[arg(long)]
    json: bool,
    /// Record every datagram in this pcap file.
    #[arg(long, value_name = "FILE")]
    pcap: Option<std::path::PathBuf>,
}

/// Runs `dplay enum`; true when at least one session answered.
pub(crate) fn run(args: EnumArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let bind = args.bind.unwrap_or_else(|| live::bind_for(args.target));
    let runtime = live::spawn(bind, args.pcap.as_ref(), |local| {
        let mut c = dplay_session::SessionConfig::new(Uuid::nil(), local, "enum");
        c.rng_seed = live::fresh_seed();
        c.enum_retry = Duration::from_millis(500);
        Dp8Protocol::new(c, start)
    })?;
    runtime.command(Dp8Command::EnumHosts { target: args.target, application_guid: args.app_guid })?;
    let out = Output::new(args.json, start);
    let mut seen = BTreeSet::new();
    let deadline = start + Duration::from_secs_f64(args.timeout.max(0.1));
    live::wait(runtime.events(), &interrupt, Some(deadline), |e| {
        if let Dp8Event::Session(Event::HostFound { from, response: r }) = e
            && seen.insert((from, r.application_instance_guid))
        {
            let name = r.session_name.as_ref().map(WideString::to_string_lossy).unwrap_or_default();
            let flags = format!("{:?}", r.application_desc_flags);
            let data = r.application_data.as_ref().map(|d| dplay_wire::hexdump::hex(d));
            out.emit(
                "session",
                json!({
                    "from": from.to_string(),
                    "name": name,
                    "instance": r.application_instance_guid.to_string(),
                    "application": r.application_guid.to_string(),
                    "players": r.current_players,
                    "max_players": r.max_players,
                    "flags": flags,
                    "application_data": data,
                }),
                format!(
                    "{from}: \"{name}\"  players {}/{}  flags {flags}\n    instance {}  application {}",
                    r.current_players,
                    if r.max_players == 0 { "unlimited".to_owned() } else { r.max_players.to_string() },
                    r.application_instance_guid,
                    r.application_guid,
                ),
            );
        }
        true
    });
    // Enumeration opens no connection: nothing to wait for.
    drop(runtime);
    if seen.is_empty() {
        anyhow::bail!(
            "no session answered at {}: check that a host runs there and that the address and port are right",
            args.target
        );
    }
    Ok(true)
}
