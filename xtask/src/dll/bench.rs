//! `cargo xtask dll-bench`: messages per second and round trip through our `dpnet.dll` under
//! 32-bit Wine against a native `dplay host --echo` (windows/tests/bench.c), printed as a table
//! with the machine's load and written to `target/bench/dll.json` (docs/PERFORMANCE.md). Not
//! part of CI: a measurement, not a check.

use std::sync::Arc;
use std::time::Duration;

use anyhow::ensure;
use serde_json::{Map, Value, json};

use super::chroot::{BUILD, Session};
use super::wine::{self, Ctx, Prefix};
use crate::integration::{Suite, free_addr};
use crate::util::root;

/// Builds the DLL and the C programs, runs `bench.exe PORT N SIZE` against `dplay host --echo`.
pub(crate) fn run(session: &Session<'_>, n: u32, size: u32) -> anyhow::Result<()> {
    let dll = super::build(session)?;
    wine::compile(session)?;
    let dll_inside = format!("{BUILD}/dpnet.dll");
    std::fs::copy(&dll, session.chroot().host_path(&dll_inside))?;
    wine::make_prefix(session, Prefix::Win32, Some(&dll_inside))?;
    let ctx = Ctx { session, suite: Suite::build(Duration::from_secs(600))? };
    let load_before = load();
    let addr = free_addr()?;
    let _host = wine::native_host(&ctx, &addr, &["--echo"])?;
    let (n, size) = (n.to_string(), size.to_string());
    let bench = ctx.wine(Prefix::Win32, "bench", &[wine::port(&addr), &n, &size])?;
    let lines = Arc::clone(&bench.lines);
    let result = bench.success();
    wine::kill_wine(session);
    result?;
    let mut rows = Map::new();
    for line in lines.lock().map_err(|_| anyhow::anyhow!("the output's lock is poisoned"))?.iter() {
        let Some(rest) = line.strip_prefix("result: ") else { continue };
        let mut words = rest.split_whitespace();
        if let (Some(name), Some(value)) = (words.next(), words.next()) {
            let unit: Vec<&str> = words.collect();
            rows.insert(name.to_owned(), json!({ "value": value.parse::<f64>()?, "unit": unit.join(" ") }));
        }
    }
    ensure!(!rows.is_empty(), "bench.exe printed no result");
    let load_after = load();
    println!(
        "dll-bench: {n} messages of {size} bytes per figure; load average {load_before} before, {load_after} after"
    );
    for (name, row) in &rows {
        let value = row["value"].as_f64().unwrap_or(f64::NAN);
        println!("{name:<28} {value:>10.1} {}", row["unit"].as_str().unwrap_or(""));
    }
    rows.insert("load_average".into(), json!({ "before": load_before, "after": load_after }));
    let out = root().join("target").join("bench");
    std::fs::create_dir_all(&out)?;
    let file = out.join("dll.json");
    std::fs::write(&file, serde_json::to_string_pretty(&Value::Object(rows))?)?;
    println!("rows written to {}", file.display());
    Ok(())
}

/// The 1-minute load average (`/proc/loadavg`), as the figures are only as good as the machine.
fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "unknown".into())
}
