//! Options of a joiner: the memory budget for what it holds (`dplay join` and `dplay fs
//! join`) and the player data it sends (`dplay join`), docs/limits.md.

use std::path::Path;

use clap::Args;

/// A joiner's memory budget (`dplay join`, `dplay fs join`).
#[derive(Args, Clone, Default)]
pub(crate) struct JoinBudgetArgs {
    /// DirectPlay 8 and 4: the memory budget for what we hold for others (the host's name
    /// table, reassembly, queued sends), in bytes or with a unit (64MiB, 1GiB; default 256MiB).
    /// A DirectPlay 8 member whose host's name table does not fit leaves with
    /// DPNERR_OUTOFMEMORY.
    #[arg(long, value_name = "SIZE", value_parser = crate::limits::parse_size)]
    pub(crate) memory_budget: Option<usize>,
}

impl JoinBudgetArgs {
    /// Applies the budget to a DirectPlay 8 session's limits.
    pub(crate) fn apply_dp8(&self, l: &mut dplay_session::Limits) {
        if let Some(n) = self.memory_budget {
            l.memory_budget = n;
        }
    }

    /// Applies the budget to a DirectPlay 4 endpoint's limits.
    pub(crate) fn apply_dp4(&self, l: &mut dplay_session::dp4::Dp4Limits) {
        if let Some(n) = self.memory_budget {
            l.memory_budget = n;
        }
    }
}

/// The bytes of `--player-data` (a type of its own: clap takes a `Vec` as many values).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlayerData(pub(crate) Vec<u8>);

/// Parses `--player-data`: hex bytes (spaces and colons allowed between pairs, as `dplay decode
/// --hex` takes them), or `@FILE` for a file's bytes. One line saying what is wrong otherwise.
pub(crate) fn parse_player_data(text: &str) -> Result<PlayerData, String> {
    hex_or_file(text).map(PlayerData)
}

fn hex_or_file(text: &str) -> Result<Vec<u8>, String> {
    if let Some(path) = text.strip_prefix('@') {
        return std::fs::read(Path::new(path))
            .map_err(|e| format!("cannot read the player data file {path}: {e}"));
    }
    let digits: Vec<char> = text.chars().filter(|c| !c.is_whitespace() && *c != ':').collect();
    if let Some(bad) = digits.iter().find(|c| !c.is_ascii_hexdigit()) {
        return Err(format!(
            "`{bad}` is not a hex digit: give the player data as hex bytes (01 ab ...) or @FILE"
        ));
    }
    if !digits.len().is_multiple_of(2) {
        return Err(format!("{} hex digits: give whole bytes, two digits each", digits.len()));
    }
    digits
        .chunks(2)
        .map(|pair| {
            let byte: String = pair.iter().collect();
            u8::from_str_radix(&byte, 16).map_err(|e| format!("`{byte}` is not a byte: {e}"))
        })
        .collect()
}

/// Our player data must be within `--max-player-data` (`max`, the host's default when not
/// given): a clear error before joining rather than the host's DPNERR_INVALIDPARAM.
pub(crate) fn check_player_data(data: &[u8], max: usize, code: &str) -> anyhow::Result<()> {
    if data.len() > max {
        anyhow::bail!(
            "the player data is {} bytes, over the limit of {max} ({code}), which hosts enforce with --max-player-data: shorten it (or, if the host allows more, raise --max-player-data)",
            data.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn player_data_as_hex_or_file() {
        assert_eq!(parse_player_data("01 ab:CD"), Ok(PlayerData(vec![0x01, 0xab, 0xcd])));
        assert_eq!(parse_player_data(""), Ok(PlayerData(Vec::new())));
        assert!(parse_player_data("0g").is_err_and(|e| e.contains("`g` is not a hex digit")));
        assert!(parse_player_data("abc").is_err_and(|e| e.contains("3 hex digits")));
        let missing = parse_player_data("@/nonexistent/dplay-player-data");
        assert!(missing.is_err_and(|e| e.starts_with("cannot read the player data file /nonexistent")));
    }

    #[test]
    fn player_data_over_the_limit_names_the_option() {
        assert!(check_player_data(&[0; 4], 4, "DPNERR_INVALIDPARAM").is_ok());
        let err = check_player_data(&[0; 5], 4, "DPNERR_INVALIDPARAM").map_err(|e| e.to_string());
        let text = err.err().unwrap_or_default();
        assert!(text.contains("5 bytes, over the limit of 4 (DPNERR_INVALIDPARAM)"), "{text}");
        assert!(text.contains("--max-player-data"), "{text}");
    }
}
