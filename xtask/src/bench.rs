//! `cargo xtask bench [--quick]`: the benchmarks of crates/dplay-bench (docs/PERFORMANCE.md),
//! each figure next to its baseline measured in the same run. Runs the `micro` (criterion)
//! and `net` benches, which write `target/bench/{micro,net}.json`, then prints one table and
//! writes the rows to `target/bench/summary.json` as
//! `{ "<row>": { "ours": x, "baseline": y, "ratio": r, "unit": "..." } }`.

use std::fmt::Write as _;

use anyhow::Context;
use serde_json::{Map, Value};

use crate::util::{cargo, root, step};

/// Row order of the table; rows not listed follow in name order.
const ORDER: &[&str] = &[
    "wire_parse_vs_memcpy",
    "wire_emit_vs_memcpy",
    "dframe_header_parse_vs_memcpy",
    "dframe_header_vs_udp_rate",
    "reassembly_dframe_vs_copy",
    "reassembly_dpsp_vs_copy",
    "goodput_vs_udp",
    "goodput_vs_enet",
    "latency_p50_vs_udp",
    "latency_p99_vs_udp",
    "latency_p50_vs_enet",
    "latency_p99_vs_enet",
    "lossy_vs_enet",
];

pub(crate) fn run(quick: bool) -> anyhow::Result<()> {
    let out = root().join("target").join("bench");
    std::fs::create_dir_all(&out)?;
    let mut rows = Map::new();
    for bench in ["micro", "net"] {
        let file = out.join(format!("{bench}.json"));
        let _ = std::fs::remove_file(&file);
        let mut cmd = cargo();
        cmd.args(["bench", "--quiet", "-p", "dplay-bench", "--bench", bench])
            .env("DPLAY_BENCH_OUT", &out)
            .env("DPLAY_BENCH_QUICK", if quick { "1" } else { "0" });
        step(&format!("bench {bench}"), &mut cmd)?;
        let text = std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let Value::Object(part) = serde_json::from_str(&text)? else {
            anyhow::bail!("{} is not a JSON object", file.display());
        };
        rows.extend(part);
    }
    let summary = out.join("summary.json");
    std::fs::write(&summary, serde_json::to_string_pretty(&rows)?)?;
    println!("{}", table(&rows));
    println!("rows written to {}", summary.display());
    Ok(())
}

fn table(rows: &Map<String, Value>) -> String {
    let mut names: Vec<&String> = rows.keys().collect();
    let rank = |n: &str| ORDER.iter().position(|o| *o == n).unwrap_or(ORDER.len());
    names.sort_by_key(|n| (rank(n), n.as_str()));
    let mut s = format!("{:<32} {:>14} {:>14} {:>9}  {}\n", "row", "ours", "baseline", "ratio", "unit");
    for name in names {
        let field =
            |k: &str| rows.get(name.as_str()).and_then(|r| r.get(k)).and_then(Value::as_f64).unwrap_or(0.0);
        let unit = rows.get(name.as_str()).and_then(|r| r.get("unit")).and_then(Value::as_str).unwrap_or("");
        let _ = writeln!(
            s,
            "{name:<32} {:>14} {:>14} {:>9.3}  {unit}",
            figure(field("ours")),
            figure(field("baseline")),
            field("ratio")
        );
    }
    s
}

/// Three significant figures at most, no exponent for the magnitudes in the table.
fn figure(x: f64) -> String {
    if x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_rows_in_order_with_their_ratio() {
        let rows: Map<String, Value> = serde_json::from_str(
            r#"{ "zz_extra": { "ours": 1.0, "baseline": 2.0, "ratio": 0.5, "unit": "B" },
                 "goodput_vs_udp": { "ours": 114.2, "baseline": 62.0, "ratio": 1.842, "unit": "MB/s" },
                 "wire_parse_vs_memcpy": { "ours": 928.4, "baseline": 23.15, "ratio": 0.025, "unit": "ns/msg" } }"#,
        )
        .unwrap();
        let t = table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[1].starts_with("wire_parse_vs_memcpy") && lines[1].contains("928"));
        assert!(lines[2].starts_with("goodput_vs_udp") && lines[2].contains("1.842"));
        assert!(lines[3].starts_with("zz_extra") && lines[3].contains("2.00") && lines[3].contains("0.500"));
    }
}
