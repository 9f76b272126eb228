//! `cargo xtask interop`: real Microsoft bytes (`../shared/interop`, beside the project, or
//! `$DPLAY_INTEROP_DIR`) through `dplay decode`, as that folder's README expects:
//!
//! * every scored item of `corpus.json` decodes, from its bytes alone, as its
//!   `expected_message` (our `--json` `message`), and re-emits byte for byte;
//! * every unscored item (a DirectPlay 4 player message in its UDP form, which only session
//!   state identifies) re-emits byte for byte when decoded as DirectPlay 4 UDP (`--dp4`);
//! * every capture in `pcaps/` decodes with 0 malformed messages, no DirectPlay 8 over TCP,
//!   every message re-emitted byte for byte, and the messages its README row names.
//!
//! The files are read where they are; nothing is copied into the project.
// serde_json's `value["key"]` gives Null for a missing key; it never panics.
#![allow(clippy::indexing_slicing)]

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::util::{build_dplay, root};

/// The environment variable naming the interop folder.
const DIR_VAR: &str = "DPLAY_INTEROP_DIR";

/// The interop folder: `$DPLAY_INTEROP_DIR`, or `../shared/interop` from the repository root.
fn dir() -> PathBuf {
    std::env::var_os(DIR_VAR).map(PathBuf::from).unwrap_or_else(|| root().join("../shared/interop"))
}

/// `cargo xtask ci`'s step: runs the suite when the folder is there, says it skipped otherwise.
pub(crate) fn run_if_present() -> anyhow::Result<()> {
    let dir = dir();
    if dir.join("corpus.json").is_file() {
        return run();
    }
    println!("==> interop: skipped: no corpus at {} (set {DIR_VAR} to run it)", dir.display());
    Ok(())
}

/// Runs every check and prints one line per failure and the totals.
pub(crate) fn run() -> anyhow::Result<()> {
    let dir = dir();
    let corpus = dir.join("corpus.json");
    let text = std::fs::read_to_string(&corpus)
        .with_context(|| format!("cannot read {} (set {DIR_VAR} to the interop folder)", corpus.display()))?;
    let items: Vec<Value> =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", corpus.display()))?;
    let bin = build_dplay()?;
    let (mut scored, mut unscored, mut captures) = (Tally::default(), Tally::default(), Tally::default());
    println!("==> interop: {} corpus items from {}", items.len(), corpus.display());
    for item in &items {
        let tally = if item["scored"] == true { &mut scored } else { &mut unscored };
        tally.count(item["id"].as_str().unwrap_or("?"), check_item(&bin, item));
    }
    let pcaps = dir.join("pcaps");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&pcaps)
        .with_context(|| format!("cannot list {}", pcaps.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "pcap" || e == "pcapng"))
        .collect();
    paths.sort();
    for path in &paths {
        let name =
            path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
        captures.count(&name, check_capture(&bin, path));
    }
    println!(
        "==> interop: {} scored corpus items decode as expected and re-emit byte for byte; \
         {} unscored items re-emit byte for byte (read as DirectPlay 4 UDP); {} captures clean",
        scored.ratio(),
        unscored.ratio(),
        captures.ratio()
    );
    let passed = scored.passed + captures.passed;
    let total = passed + scored.failed + captures.failed;
    println!("==> interop: {passed}/{total} checks passed (scored items and captures)");
    let failed = scored.failed + unscored.failed + captures.failed;
    if failed > 0 {
        bail!("interop: {failed} checks failed");
    }
    Ok(())
}

/// Passed and failed checks of one kind.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
}

impl Tally {
    /// Counts one check, printing a failure (and a passed check's detail, when it has one).
    fn count(&mut self, name: &str, result: anyhow::Result<String>) {
        match result {
            Ok(detail) => {
                self.passed += 1;
                if !detail.is_empty() {
                    println!("    ok    {name}: {detail}");
                }
            }
            Err(e) => {
                self.failed += 1;
                println!("    FAIL  {name}: {e:#}");
            }
        }
    }

    /// `passed/total`.
    fn ratio(&self) -> String {
        format!("{}/{}", self.passed, self.passed + self.failed)
    }
}

/// Runs `dplay decode --json --reemit args...` and returns its JSON lines.
fn decode(bin: &Path, args: &[&str]) -> anyhow::Result<Vec<Value>> {
    let out = Command::new(bin)
        .args(["decode", "--json", "--reemit"])
        .args(args)
        .output()
        .with_context(|| format!("cannot run {}", bin.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout.lines().map(|l| serde_json::from_str(l).with_context(|| format!("not JSON: {l}"))).collect()
}

/// Hex without spaces, lower case.
fn compact(hex: &str) -> String {
    hex.chars().filter(|c| !c.is_whitespace()).collect::<String>().to_ascii_lowercase()
}

/// Whether a decoded message re-emitted its own bytes.
fn reemits(line: &Value) -> bool {
    line["bytes"].as_str().map(compact).is_some_and(|b| Some(b) == line["reemitted"].as_str().map(compact))
}

/// One corpus item: a scored one decodes from its bytes alone as `expected_message`; any item
/// re-emits byte for byte (unscored DirectPlay 4 ones read as DirectPlay 4 UDP).
fn check_item(bin: &Path, item: &Value) -> anyhow::Result<String> {
    let hex = item["hex"].as_str().context("no hex")?;
    let scored = item["scored"] == true;
    let mut args = vec!["--hex", hex];
    if !scored && item["family"] == "dp4" {
        args.push("--dp4");
    }
    let lines = decode(bin, &args)?;
    let [line] = lines.as_slice() else { bail!("{} messages decoded, not 1", lines.len()) };
    if let Some(e) = line["error"].as_str() {
        bail!("malformed: {e}");
    }
    if scored && line["message"] != item["expected_message"] {
        bail!("decoded as {}, expected {}", line["message"], item["expected_message"]);
    }
    // Bytes the item holds after the message's own size are shown apart as `trailing`.
    let reemitted = compact(line["reemitted"].as_str().unwrap_or_default());
    let trailing = compact(line["trailing"].as_str().unwrap_or_default());
    if reemitted + &trailing != compact(hex) {
        bail!("re-emits as {}", line["reemitted"]);
    }
    Ok(if trailing.is_empty() {
        String::new()
    } else {
        format!("{} bytes after its dwSize", trailing.len() / 2)
    })
}

/// What the interop README says each family of captures holds, by file-name prefix: messages
/// that must be found (with their transport).
const EXPECTED: &[(&str, &[(&str, &str)])] = &[
    (
        "torrente-",
        &[
            ("udp", "CONNECT"),
            ("udp", "DN_INTERNAL_MESSAGE_PLAYER_CONNECT_INFO_EX"),
            ("udp", "DN_SEND_CONNECT_INFO"),
            ("udp", "DN_ACK_CONNECT_INFO"),
        ],
    ),
    ("lotr2-", &[("tcp", "DPSP_MSG_PLAYERMESSAGE"), ("tcp", "DPSP_MSG_CREATEPLAYER")]),
    ("kevincar-", &[("tcp", "DPSP_MSG_REQUESTPLAYERID"), ("udp", "DPSP_MSG_ENUMSESSIONS")]),
];

/// One capture: 0 malformed, no DirectPlay 8 over TCP, every message re-emitted byte for byte,
/// and the messages its README row promises.
fn check_capture(bin: &Path, path: &Path) -> anyhow::Result<String> {
    let lines = decode(bin, &[path.to_str().context("a capture path that is not UTF-8")?])?;
    let malformed = lines.iter().filter(|l| l.get("error").is_some()).count();
    let dp8_tcp = lines.iter().filter(|l| l["transport"] == "tcp" && l["family_short"] == "dp8").count();
    let differ = lines.iter().filter(|l| l.get("error").is_none() && !reemits(l)).count();
    let detail = format!(
        "{} messages, {malformed} malformed, {dp8_tcp} DirectPlay 8 over TCP, {differ} not re-emitted byte for byte",
        lines.len()
    );
    if lines.is_empty() || malformed > 0 || dp8_tcp > 0 || differ > 0 {
        bail!("{detail}");
    }
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let wanted = EXPECTED.iter().filter(|(prefix, _)| name.starts_with(prefix)).flat_map(|(_, w)| w.iter());
    for (transport, message) in wanted {
        if !lines.iter().any(|l| l["transport"] == *transport && l["message"] == *message) {
            bail!("{detail}; no {message} over {transport}");
        }
    }
    Ok(detail)
}
