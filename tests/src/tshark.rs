//! Running Wireshark's dissectors over our encodings: one tshark run per test, JSON out.
//!
//! `dpnet` (DirectPlay 8) is registered on UDP 6073 only, so frames on the game ports are
//! decoded as dpnet with `-d udp.port==2302,dpnet`. `dplay` (DirectPlay 4) is a heuristic
//! dissector on UDP and TCP (`dplay_udp`, `dplay_tcp`), enabled explicitly.

use std::process::Command;

use serde_json::Value;

use crate::pcap::{Packet, write_pcap};

/// True when tshark can run. When it cannot: fails under `CI=true` (the conformance tests
/// must never skip on CI; `cargo xtask ci` installs tshark), else prints a loud skip notice.
pub fn available(test: &str) -> bool {
    let ok = Command::new("tshark").arg("-v").output().is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: tshark is not installed and CI=true: the conformance tests must not skip"
        );
        eprintln!("\n!!!!!! SKIPPED {test}: tshark is not installed (apt-get install tshark) !!!!!!\n");
    }
    ok
}

/// A GUID as tshark 4.0 shows it where it reads the 16 bytes as if big-endian (every GUID of
/// `dplay`, the ApplicationGUID of a `dpnet` EnumQuery), while the wire holds the Windows layout
/// (INDEX §0; docs/decisions.md, tools): the GUID whose big-endian bytes are our wire bytes.
pub fn guid(g: &dplay_wire::Uuid) -> String {
    dplay_wire::Uuid::from_bytes(g.to_bytes_le()).to_string()
}

/// One frame as tshark dissected it: every field, flattened, in tshark's order.
#[derive(Debug, Clone)]
pub struct Frame {
    /// `(field name, value as tshark shows it)`.
    pub fields: Vec<(String, String)>,
}

impl Frame {
    /// Every value of `name`, in order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.fields.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }

    /// The first value of `name`; panics naming the frame's fields when it is absent.
    #[track_caller]
    pub fn str(&self, name: &str) -> &str {
        self.all(name).first().copied().unwrap_or_else(|| {
            let names: Vec<_> = self.fields.iter().map(|(k, _)| k.as_str()).collect();
            panic!("tshark shows no {name}; it shows {names:?}")
        })
    }

    /// The first value of `name` as a number (tshark writes decimal or `0x` hex).
    #[track_caller]
    pub fn num(&self, name: &str) -> u64 {
        let text = self.str(name);
        let parsed = match text.strip_prefix("0x") {
            Some(hex) => u64::from_str_radix(hex, 16),
            None => text.parse(),
        };
        parsed.unwrap_or_else(|e| panic!("{name} = {text:?} is not a number: {e}"))
    }

    /// True when tshark shows `name` at all.
    pub fn has(&self, name: &str) -> bool {
        self.fields.iter().any(|(k, _)| k == name)
    }

    /// Fails if tshark flagged the frame malformed or raised an expert error or warning.
    #[track_caller]
    pub fn assert_clean(&self, what: &str) {
        let problems: Vec<_> = self
            .fields
            .iter()
            .filter(|(k, v)| {
                k.starts_with("_ws.malformed")
                    || (k == "_ws.expert.severity" && v.parse::<u64>().is_ok_and(|s| s >= 0x0060_0000))
            })
            .collect();
        let messages = self.all("_ws.expert.message");
        assert!(problems.is_empty(), "{what}: tshark reports {problems:?} {messages:?}\n{:#?}", self.fields);
    }
}

fn flatten(value: &Value, key: &str, out: &mut Vec<(String, String)>) {
    match value {
        Value::String(s) => out.push((key.to_string(), s.clone())),
        Value::Array(items) => items.iter().for_each(|v| flatten(v, key, out)),
        Value::Object(map) => {
            // An object under a field name is that field's subtree; keep the field too.
            if !key.is_empty() && key.contains('.') && !key.ends_with("_tree") {
                out.push((key.to_string(), String::new()));
            }
            map.iter().for_each(|(k, v)| flatten(v, k, out));
        }
        _ => {}
    }
}

/// Writes `packets` to a pcap named after `test` and dissects them all in one tshark run.
#[track_caller]
pub fn dissect(test: &str, packets: &[Packet]) -> Vec<Frame> {
    // Kept after the run, so a failure can be opened in Wireshark.
    let path = std::env::temp_dir().join(format!("dplay-tshark-{test}.pcap"));
    write_pcap(&path, packets);
    let out = Command::new("tshark")
        .args(["-r"])
        .arg(&path)
        .args(["-T", "json", "--no-duplicate-keys"])
        .args(["--enable-heuristic", "dplay_udp", "--enable-heuristic", "dplay_tcp"])
        .args(["-d", "udp.port==2302,dpnet"])
        .output()
        .expect("run tshark");
    assert!(out.status.success(), "tshark failed: {}", String::from_utf8_lossy(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).expect("tshark JSON");
    let frames: Vec<Frame> = json
        .as_array()
        .expect("tshark JSON is an array of frames")
        .iter()
        .map(|f| {
            let mut fields = Vec::new();
            flatten(&f["_source"]["layers"], "", &mut fields);
            Frame { fields }
        })
        .collect();
    assert_eq!(frames.len(), packets.len(), "tshark read {} frames of {}", frames.len(), packets.len());
    frames
}
