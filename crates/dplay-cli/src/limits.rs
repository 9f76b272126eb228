//! `dplay host` options for what a DirectPlay 8 host holds for others (docs/limits.md), and
//! the operator's view of every drop and refusal.

use std::time::Duration;

use clap::Args;
use dplay_session::{Refusals, SessionConfig};
use serde_json::{Map, Value, json};

use crate::events::JsonEvent;
use crate::live::Output;

/// The limits on names and data, the same options for DirectPlay 8 and 4 (the DirectPlay 4
/// spellings `--dp4-max-name` and `--dp4-max-player-data` are kept as hidden aliases).
#[derive(Args, Clone, Default)]
pub(crate) struct NameLimitArgs {
    /// The longest player name, password or session name accepted, in UTF-16 units (default
    /// 256); longer ones are refused (DPNERR_INVALIDPARAM, DPERR_INVALIDPARAMS), logged and
    /// counted.
    #[arg(long, value_name = "UNITS", alias = "dp4-max-name")]
    pub(crate) max_name: Option<usize>,
    /// The largest player data (and DirectPlay 8 connect data) accepted, in bytes (default 8192
    /// for DirectPlay 8, 16384 for DirectPlay 4).
    #[arg(long, value_name = "BYTES", alias = "dp4-max-player-data")]
    pub(crate) max_player_data: Option<usize>,
}

impl NameLimitArgs {
    /// Applies the options given to a DirectPlay 8 session's limits (a joiner's matter once
    /// host migration makes it the host).
    pub(crate) fn apply_dp8(&self, l: &mut dplay_session::Limits) {
        if let Some(n) = self.max_name {
            l.max_name_units = n;
        }
        if let Some(n) = self.max_player_data {
            l.max_player_data = n;
            l.max_app_data = n;
        }
    }

    /// Applies the options given to a DirectPlay 4 endpoint's limits.
    pub(crate) fn apply_dp4(&self, l: &mut dplay_session::dp4::Dp4Limits) {
        if let Some(n) = self.max_name {
            (l.max_player_name, l.max_session_name) = (n, n);
        }
        if let Some(n) = self.max_player_data {
            l.max_player_data = n;
        }
    }
}

/// Limits of a host; each defaults to the value docs/limits.md gives.
#[derive(Args, Clone, Default)]
pub(crate) struct LimitArgs {
    #[command(flatten)]
    pub(crate) names: NameLimitArgs,
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
    /// DirectPlay 8 and 4: the one memory budget for what the host holds for others
    /// (reassembly, stream buffers, half-open connections, early data, the name table), in
    /// bytes or with a unit (64MiB, 1GiB; default 256MiB). Past it frames wait, the oldest
    /// half-open connections and reassemblies go first, and joins are refused.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub(crate) memory_budget: Option<usize>,
    /// Print the drops and refusals so far this often (they are always printed at exit, and
    /// when the host is sent SIGUSR1).
    #[arg(long, value_name = "TIME", value_parser = crate::duration::parse_period)]
    pub(crate) stats_every: Option<Duration>,
}

impl LimitArgs {
    /// Applies the options given to `c`.
    pub(crate) fn apply(&self, c: &mut SessionConfig) {
        self.names.apply_dp8(&mut c.limits);
        let l = &mut c.limits;
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
        if let Some(n) = self.memory_budget {
            c.limits.memory_budget = n;
        }
    }

    /// Applies the options that DirectPlay 4 shares to `c`.
    pub(crate) fn apply_dp4(&self, c: &mut dplay_session::dp4::Dp4Config) {
        self.names.apply_dp4(&mut c.limits);
        if let Some(n) = self.memory_budget {
            c.limits.memory_budget = n;
        }
    }

    /// Our own session and player names must be within `--max-name` too: a clear error
    /// before starting, rather than a host that does not start.
    pub(crate) fn check_names(&self, names: &[(&str, &str)]) -> anyhow::Result<()> {
        let max = self.names.max_name.unwrap_or(dplay_session::Limits::default().max_name_units);
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
            lingering: r.lingering,
            half_open: r.half_open,
            joining: r.joining,
            bytes_held: r.bytes_held,
            bytes_peak: r.bytes_peak,
            memory_budget: r.memory_budget,
        };
        self.event(&event, r);
    }
}

/// Parses a size: bytes (`1048576`) or a number with a unit, `K`/`KiB`, `M`/`MiB`, `G`/`GiB`
/// (powers of 1024; `KB`, `MB` and `GB` too).
pub(crate) fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize =
        digits.parse().map_err(|_| format!("`{text}` is not a size: give bytes or a unit, such as 64MiB"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        other => return Err(format!("`{other}` is not a size unit: use KiB, MiB or GiB")),
    };
    n.checked_mul(1 << shift).ok_or_else(|| format!("`{text}` is too large"))
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_with_and_without_units() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("2 GiB"), Ok(2 << 30));
        assert_eq!(parse_size("16k"), Ok(16 << 10));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 TiB").is_err());
    }
}
