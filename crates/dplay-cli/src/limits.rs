//! `dplay host` options for what a DirectPlay 8 host holds for others (docs/limits.md), and
//! the operator's view of every drop and refusal.

use std::time::Duration;

use clap::Args;
use dplay_session::{Refusals, SessionConfig};
use serde_json::{Map, Value, json};

use crate::live::Output;

/// Limits of a DirectPlay 8 host; each defaults to the value docs/limits.md gives.
#[derive(Args, Clone, Default)]
pub(crate) struct LimitArgs {
    /// Longest player name, password or session name accepted, in UTF-16 units (default 256).
    #[arg(long, value_name = "UNITS")]
    max_name: Option<usize>,
    /// Largest player data and connect data accepted, in bytes (default 8192).
    #[arg(long, value_name = "BYTES")]
    max_player_data: Option<usize>,
    /// Seconds a joiner has, once connected, to become a member (default 30).
    #[arg(long, value_name = "SECS")]
    join_timeout: Option<f64>,
    /// Remove a member once joiners from this many addresses could not reach it (default 2;
    /// 0 never removes).
    #[arg(long, value_name = "N")]
    evict_after_failed_joins: Option<u32>,
    /// Unconfirmed inbound connections held at most (default 1024), and from one IP address
    /// (--max-half-open-per-ip, default 16); the oldest goes first.
    #[arg(long, value_name = "N")]
    max_half_open: Option<usize>,
    /// Unconfirmed inbound connections held at most from one IP address (default 16).
    #[arg(long, value_name = "N")]
    max_half_open_per_ip: Option<usize>,
    /// Print the drops and refusals so far every this many seconds (they are always printed
    /// at exit).
    #[arg(long, value_name = "SECS")]
    pub(crate) stats_every: Option<f64>,
}

impl LimitArgs {
    /// Applies the options given to `c`.
    pub(crate) fn apply(&self, c: &mut SessionConfig) {
        let l = &mut c.limits;
        if let Some(n) = self.max_name {
            l.max_name_units = n;
        }
        if let Some(n) = self.max_player_data {
            l.max_player_data = n;
            l.max_app_data = n;
        }
        if let Some(secs) = self.join_timeout {
            l.join_timeout = Duration::from_secs_f64(secs.max(0.1));
        }
        if let Some(n) = self.evict_after_failed_joins {
            l.evict_after_failed_joins = n;
        }
        if let Some(n) = self.max_half_open {
            c.transport.max_half_open = n.max(1);
        }
        if let Some(n) = self.max_half_open_per_ip {
            c.transport.max_half_open_per_ip = n.max(1);
        }
    }

    /// Our own session and player names must be within `--max-name` too: a clear error
    /// before starting, rather than a host that does not start.
    pub(crate) fn check_names(&self, names: &[(&str, &str)]) -> anyhow::Result<()> {
        let max = self.max_name.unwrap_or(dplay_session::Limits::default().max_name_units);
        for (what, name) in names {
            let units = name.encode_utf16().count();
            if units > max {
                anyhow::bail!(
                    "the {what} is {units} UTF-16 units long, over the limit of {max} (DPNERR_INVALIDPARAM): shorten it or raise --max-name"
                );
            }
        }
        Ok(())
    }

    /// The period of the drops-and-refusals line, if any.
    pub(crate) fn stats_period(&self) -> Option<Duration> {
        self.stats_every.map(|s| Duration::from_secs_f64(s.max(0.1)))
    }
}

impl Output {
    /// Prints the drops and refusals: one line, or a `refusals` event.
    pub(crate) fn refusals(&self, r: &Refusals) {
        let counts: Map<String, Value> = r.counts.iter().map(|(k, n)| ((*k).to_owned(), json!(n))).collect();
        self.emit(
            "refusals",
            json!({"counts": counts, "connections": r.connections, "half_open": r.half_open, "joining": r.joining}),
            r,
        );
    }
}
