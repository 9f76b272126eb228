//! The rows every bench writes to `target/bench/<bench>.json`, merged by `cargo xtask bench`
//! into `target/bench/summary.json`.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// One row: our figure, the baseline's from the same run, and the ratio (greater is better
/// for us).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Row {
    /// Our figure.
    pub ours: f64,
    /// The baseline's figure.
    pub baseline: f64,
    /// `ours / baseline` for rates, `baseline / ours` for times.
    pub ratio: f64,
    /// The unit of `ours` and `baseline`.
    pub unit: String,
}

impl Row {
    /// A rate (greater is better): the ratio is ours over the baseline's.
    pub fn rate(ours: f64, baseline: f64, unit: &str) -> Self {
        Self { ours, baseline, ratio: ratio(ours, baseline), unit: unit.into() }
    }

    /// A time or a cost (smaller is better): the ratio is the baseline's over ours.
    pub fn time(ours: f64, baseline: f64, unit: &str) -> Self {
        Self { ours, baseline, ratio: ratio(baseline, ours), unit: unit.into() }
    }
}

fn ratio(num: f64, den: f64) -> f64 {
    if den > 0.0 { num / den } else { 0.0 }
}

/// Rows by name, in name order.
pub type Rows = BTreeMap<String, Row>;

/// True when `DPLAY_BENCH_QUICK` is set (by `cargo xtask bench --quick`).
pub fn quick() -> bool {
    std::env::var_os("DPLAY_BENCH_QUICK").is_some_and(|v| !v.is_empty() && v != "0")
}

/// `target/bench` of the workspace, or `DPLAY_BENCH_OUT` when set.
pub fn out_dir() -> PathBuf {
    match std::env::var_os("DPLAY_BENCH_OUT") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/bench"),
    }
}

/// Writes `rows` to `<out_dir>/<bench>.json`.
pub fn write(bench: &str, rows: &Rows) -> std::io::Result<()> {
    let dir = out_dir();
    std::fs::create_dir_all(&dir)?;
    let json = serde_json::to_string_pretty(rows).map_err(std::io::Error::other)?;
    std::fs::write(dir.join(format!("{bench}.json")), json)
}

/// Reads the rows another bench wrote, or none.
pub fn read(bench: &str) -> Rows {
    std::fs::read_to_string(out_dir().join(format!("{bench}.json")))
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_favour_us_when_greater() {
        assert_eq!(Row::rate(200.0, 100.0, "MB/s").ratio, 2.0);
        assert_eq!(Row::time(50.0, 100.0, "us").ratio, 2.0);
        assert_eq!(Row::time(0.0, 100.0, "us").ratio, 0.0);
    }
}
