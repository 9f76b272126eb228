//! `dplay host` options for what a DirectPlay 8 host holds for others (docs/limits.md), and
//! the operator's view of every drop and refusal.

use std::time::Duration;

use clap::Args;
use dplay_session::{Refusals, SessionConfig};
use serde_json::{Map, Value, json};

use crate::events::JsonEvent;
use crate::live::Output;

/// Limits of a DirectPlay 8 host; each defaults to the value docs/limits.md gives.
#[derive(Args, Clone, Default)]
pub(crate) struct LimitArgs {
    /// DirectPlay 8: the longest player name, password or session name accepted, in UTF-16
    /// units (default 256).
    #[arg(long, value_name = "UNITS")]
    max_name: Option<usize>,
    /// DirectPlay 8: the largest player data and connect data accepted, in bytes (default 8192).
    #[arg(long, value_name = "BYTES")]
    max_player_data: Option<usize>,
    /// DirectPlay 8: how long a joiner has, once connected, to become a member (default 30s).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    join_timeout: Option<Duration>,
    /// DirectPlay 8: remove a member once joiners from this many addresses could not reach it
    /// (default 2; 0 never removes).
    #[arg(long, value_name = "N")]
    evict_after_failed_joins: Option<u32>,
    /// DirectPlay 8: unconfirmed inbound connections held at most (default 1024); the oldest
    /// goes first.
    #[arg(long, value_name = "N")]
    max_half_open: Option<usize>,
    /// DirectPlay 8: unconfirmed inbound connections held at most from one IP address (default
    /// 16); its oldest goes first.
    #[arg(long, value_name = "N")]
    max_half_open_per_ip: Option<usize>,
    /// DirectPlay 8: print the drops and refusals so far this often (they are always printed
    /// at exit).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse)]
    pub(crate) stats_every: Option<Duration>,
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
        if let Some(d) = self.join_timeout {
            l.join_timeout = d.max(Duration::from_millis(100));
        }
        if let Some(n) = self.evict_after_failed_joins {
            l.evict_after_failed_joins = n;
        }
        if let Some(n) = self.max_half_open {
            c.transport.set_max_half_open(n);
        }
        if let Some(n) = self.max_half_open_per_ip {
            c.transport.set_max_half_open_per_ip(n);
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
        self.stats_every.map(|d| d.max(Duration::from_millis(100)))
    }
}

impl Output {
    /// Prints the drops and refusals: one line, or a `refusals` event.
    pub(crate) fn refusals(&self, r: &Refusals) {
        let counts: Map<String, Value> = r.counts.iter().map(|(k, n)| ((*k).to_owned(), json!(n))).collect();
        let event = JsonEvent::Refusals {
            counts,
            connections: r.connections,
            half_open: r.half_open,
            joining: r.joining,
        };
        self.event(&event, r);
    }
}
