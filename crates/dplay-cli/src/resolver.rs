//! `dplay nat-resolver --bind ADDR`: a NAT resolver server (MC-DPLNAT 3.2) that tells hosts
//! which public address their queries come from, within the caps of docs/limits.md.

use std::net::SocketAddr;
use std::time::Instant;

use clap::Args;
use dplay_runtime::{NatResolverCommand, NatResolverEvent, NatResolverProtocol};
use dplay_session::nat_resolver::{ResolverLimits, ResolverStats, UserString};
use serde::Serialize;

use crate::internet::parse_resolver;
use crate::live::{self, NetArgs, Output};

/// `dplay nat-resolver` options.
#[derive(Args)]
pub(crate) struct ResolverArgs {
    /// The address to answer on [default port: 2506, the server's in MC-DPLNAT 4.1].
    #[arg(long, value_name = "ADDR[:PORT]", value_parser = parse_resolver)]
    bind: SocketAddr,
    /// Answer only queries whose UserData is this string (UTF-8 or UTF-16LE, a terminating NUL
    /// allowed); others are ignored (MC-DPLNAT 3.2.5).
    #[arg(long, value_name = "TEXT")]
    user_string: Option<String>,
    /// Answers to one source address per second at most.
    #[arg(long, value_name = "N", default_value_t = ResolverLimits::default().per_source_per_second)]
    per_source: u32,
    /// Answers per second in total at most.
    #[arg(long, value_name = "N", default_value_t = ResolverLimits::default().total_per_second)]
    per_second: u32,
    /// Print the counts this often too (seconds or a unit, such as 1m); always at exit and on
    /// SIGUSR1.
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    stats_every: Option<std::time::Duration>,
    #[command(flatten)]
    net: NetArgs,
}

/// The JSON events of `dplay nat-resolver` (docs/json-events.md).
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
enum ResolverEvent {
    /// Answering on `addr`.
    Resolving { addr: String },
    /// What it did so far.
    ResolverStats {
        answered: u64,
        malformed: u64,
        refused_user_data: u64,
        rate_limited: u64,
        unanswerable: u64,
    },
}

/// Runs `dplay nat-resolver` until the duration passes or Ctrl-C.
pub(crate) fn run(args: ResolverArgs) -> anyhow::Result<bool> {
    #[allow(clippy::disallowed_methods)] // the command's start, for event times
    let start = Instant::now();
    let interrupt = live::ctrl_c()?;
    let limits = ResolverLimits {
        per_source_per_second: args.per_source,
        total_per_second: args.per_second,
        ..ResolverLimits::default()
    };
    let user_string = args.user_string.clone().map(UserString::new);
    let runtime = live::spawn(args.bind, args.net.pcap.as_ref(), |_| {
        NatResolverProtocol::new(user_string, limits, start)
    })?;
    let out = Output::new(args.net.json, start);
    let addr = runtime.local_addr();
    let check = match &args.user_string {
        Some(s) => format!(", queries must carry the user string {s:?}"),
        None => String::new(),
    };
    out.event(
        &ResolverEvent::Resolving { addr: addr.to_string() },
        format!("NAT resolver answering on {addr}{check}"),
    );
    let print = |e: NatResolverEvent| {
        let NatResolverEvent::Stats(s) = e else { return true };
        out.event(&stats_event(s), stats_text(s));
        true
    };
    let stats = || Ok(runtime.command(NatResolverCommand::Stats)?);
    let stop =
        live::serve(runtime.events(), &interrupt, args.net.deadline(start), args.stats_every, print, stats)?;
    if runtime.command(NatResolverCommand::Stats).is_ok() {
        #[allow(clippy::disallowed_methods)]
        let until = Instant::now() + std::time::Duration::from_secs(1);
        live::wait(runtime.events(), &crossbeam_channel::never(), Some(until), |e| {
            let NatResolverEvent::Stats(s) = e else { return true };
            out.event(&stats_event(s), stats_text(s));
            false
        });
    }
    // It has no goodbyes to wait for.
    if let Err(e) = runtime.shutdown() {
        tracing::warn!("{e}");
    }
    out.stopped(stop);
    Ok(true)
}

fn stats_event(s: ResolverStats) -> ResolverEvent {
    ResolverEvent::ResolverStats {
        answered: s.answered,
        malformed: s.malformed,
        refused_user_data: s.refused_user_data,
        rate_limited: s.rate_limited,
        unanswerable: s.unanswerable,
    }
}

fn stats_text(s: ResolverStats) -> String {
    format!(
        "answered {}; ignored: {} malformed, {} wrong user string, {} over the rate limit, {} unanswerable",
        s.answered, s.malformed, s.refused_user_data, s.rate_limited, s.unanswerable
    )
}
