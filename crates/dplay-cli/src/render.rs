//! Output: one line per message, a readable tree, or one JSON object per message.
//!
//! All come from the same JSON value of the parsed message (`serde_json::to_value`), so every
//! field the wire types serialize is shown, in declaration order. Blobs arrive as hex strings.
//! Add-on packets found in a message follow it, in human units ([`crate::addon_view`]).

use std::fmt::Write;

use dplay_wire::datagram::classify;
use dplay_wire::hexdump;
use serde_json::{Map, Value, json};

use crate::decode::Record;
use crate::message::Message;
use crate::reassembly;

/// How a message relates to multi-frame reassembly, for the line and the tree: the frames a
/// whole one came in, or where a piece stands.
fn framing_note(record: &Record) -> Option<String> {
    if let (Some(first), Some(last)) = (record.reassembled.iter().min(), record.reassembled.iter().max()) {
        let n = record.reassembled.len();
        return Some(format!("reassembled from {n} frames ({first}-{last})"));
    }
    let f = record.result.as_ref().ok().and_then(reassembly::fragment)?;
    Some(format!("piece ({}, seq {})", f.position(), f.seq))
}

/// How many fields the one-line summary shows.
const LINE_FIELDS: usize = 4;

/// The family when a message could not be parsed: what its lead bytes suggest.
fn malformed_family(record: &Record) -> Option<dplay_wire::Family> {
    match record.origin.map(|o| o.transport) {
        Some(crate::net::Transport::Tcp) => Some(dplay_wire::Family::Dp4),
        _ => classify(&record.bytes).family(),
    }
}

/// The re-emitted bytes as hex, or why they could not be written.
fn reemitted(m: &Message) -> String {
    m.reemit().map_or_else(|e| format!("cannot re-emit: {e}"), |b| hexdump::hex(&b))
}

/// The JSON object of one message: where it was seen, `family`, `message` (spec name),
/// `alias` (MS-DPDX name, when different) and `fields`; or `error` for a malformed one.
/// With `reemit`, also `reemitted`: the bytes our encoder writes for the parsed value.
pub(crate) fn json(record: &Record, reemit: bool) -> Value {
    let mut obj = Map::new();
    if let Some(o) = &record.origin {
        obj.insert("frame".into(), json!(o.frame));
        obj.insert("time".into(), json!(o.time));
        obj.insert("src".into(), json!(o.src.to_string()));
        obj.insert("dst".into(), json!(o.dst.to_string()));
        obj.insert("transport".into(), json!(o.transport.name()));
    }
    obj.insert("length".into(), json!(record.bytes.len()));
    if !record.reassembled.is_empty() {
        obj.insert("reassembled_from".into(), json!(record.reassembled));
    }
    if let Some(f) = record.result.as_ref().ok().and_then(reassembly::fragment) {
        obj.insert("piece".into(), json!({ "seq": f.seq, "position": f.position() }));
    }
    if !record.trailing.is_empty() {
        obj.insert("trailing".into(), json!(hexdump::hex(&record.trailing)));
    }
    match &record.result {
        Ok(m) => {
            obj.insert("family".into(), json!(m.family().name()));
            obj.insert("family_short".into(), json!(m.family().short()));
            obj.insert("message".into(), json!(m.name()));
            if let Some(alias) = m.alias() {
                obj.insert("alias".into(), json!(alias));
            }
            let fields = m.fields().unwrap_or_else(|e| json!({ "serialize_error": e.to_string() }));
            obj.insert("fields".into(), fields);
            if !record.addon.is_empty() {
                obj.insert("addon".into(), record.addon.iter().map(|a| a.json()).collect());
            }
            if reemit {
                obj.insert("bytes".into(), json!(hexdump::hex(&record.bytes)));
                obj.insert("reemitted".into(), json!(reemitted(m)));
            }
        }
        Err(e) => {
            let family = malformed_family(record);
            obj.insert("family".into(), json!(family.map(|f| f.name())));
            obj.insert("family_short".into(), json!(family.map(|f| f.short())));
            obj.insert("message".into(), Value::Null);
            obj.insert("error".into(), json!(e.to_string()));
            obj.insert("wire_error".into(), serde_json::to_value(e).unwrap_or(Value::Null));
            obj.insert("bytes".into(), json!(hexdump::hex(&record.bytes)));
        }
    }
    Value::Object(obj)
}

/// One line: time, source and destination, transport, family, message, and its key fields
/// (the add-on packets when it carries some).
pub(crate) fn line(record: &Record) -> String {
    let mut out = String::new();
    if let Some(o) = &record.origin {
        let _ = write!(out, "{:>11.6}  {} -> {}  {}  ", o.time, o.src, o.dst, o.transport.name());
    }
    match &record.result {
        Ok(m) => {
            let _ = write!(out, "{} {}", m.family().short(), m.name());
            if let Some(signature) = m.signature() {
                let _ = write!(out, " signed 0x{signature:016X}");
            }
            if let Some(note) = framing_note(record) {
                let _ = write!(out, " {note}");
            }
            let key = addon_summary(record).unwrap_or_else(|| key_fields(m));
            if !key.is_empty() {
                let _ = write!(out, "  {key}");
            }
        }
        Err(e) => {
            let family = malformed_family(record).map_or("?", |f| f.short());
            let _ = write!(out, "{family} MALFORMED  {e}");
        }
    }
    out
}

/// The add-on packets a message carries, in human units (`POSITION_VELOCITY #3 47.46700
/// -122.30900 3281 ft ...`), or `None` when it carries none. Shared by the one-line summary and
/// the demo timeline.
pub(crate) fn addon_summary(record: &Record) -> Option<String> {
    (!record.addon.is_empty())
        .then(|| record.addon.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))
}

/// Fields the one-line summary leaves out: the message name again, framing and flags.
const LINE_SKIP: &[&str] = &[
    "frame",
    "message",
    "form",
    "token",
    "sock_addr",
    "command",
    "control",
    "family",
    "version",
    "poll",
    "masks",
    "signature",
    "header_flags",
    "size",
];
/// Fields that hold bytes (hex strings): the summary shows their length.
const LINE_BLOBS: &[&str] =
    &["payload", "data", "Data", "application_payload", "application_data", "reply_data"];

/// The first few fields that say something about this message, depth first, as `key=value`.
fn key_fields(m: &Message) -> String {
    fn walk(v: &Value, out: &mut Vec<String>) {
        let Value::Object(map) = v else { return };
        for (key, item) in map {
            if out.len() >= LINE_FIELDS {
                return;
            }
            match item {
                _ if LINE_SKIP.contains(&key.as_str()) => {}
                Value::Null => {}
                Value::Object(_) => walk(item, out),
                Value::String(hex) if LINE_BLOBS.contains(&key.as_str()) => {
                    // A payload variant without bytes (`Empty`) says nothing here.
                    if let Ok(bytes) = dplay_wire::hexdump::parse_hex(hex) {
                        out.push(format!("{key}={} bytes", bytes.len()));
                    }
                }
                Value::Array(a) => out.push(format!("{key}=[{}]", a.len())),
                Value::Number(n) if n.as_u64().is_some_and(|u| u > 0xFFFF) => {
                    out.push(format!("{key}=0x{:X}", n.as_u64().unwrap_or_default()));
                }
                _ => out.push(format!("{key}={}", scalar(item).unwrap_or_default())),
            }
        }
    }
    let mut out = Vec::new();
    if let Ok(v) = m.fields() {
        walk(&v, &mut out);
    }
    out.join(" ")
}

/// The tree view of one message: a heading line per origin and message, then the fields, then
/// the add-on packets. With `reemit`, also the bytes our encoder writes for the parsed value.
pub(crate) fn tree(record: &Record, reemit: bool) -> String {
    let mut out = String::new();
    if let Some(o) = &record.origin {
        let _ = writeln!(
            out,
            "frame {}  {:.6} s  {} -> {}  {}  {} bytes",
            o.frame,
            o.time,
            o.src,
            o.dst,
            o.transport.name(),
            record.bytes.len()
        );
    }
    match &record.result {
        Ok(m) => {
            let alias = m.alias().map(|a| format!("  (MS-DPDX: {a})")).unwrap_or_default();
            let note = framing_note(record).map(|n| format!("  [{n}]")).unwrap_or_default();
            let _ = writeln!(out, "{} {}{alias}{note}", m.family().name(), m.name());
            match m.fields() {
                Ok(v) => value(&mut out, 1, &v),
                Err(e) => {
                    let _ = writeln!(out, "  (cannot show fields: {e})");
                }
            }
            for addon in &record.addon {
                let _ = writeln!(out, "  add-on {} {}", addon.dialect_name(), addon.name());
                value(&mut out, 2, &serde_json::to_value(addon.view()).unwrap_or(Value::Null));
            }
            if reemit {
                let _ = writeln!(out, "  reemitted: {}", reemitted(m));
            }
            if !record.trailing.is_empty() {
                let _ = writeln!(
                    out,
                    "  trailing: {} bytes after the message's dwSize: {}",
                    record.trailing.len(),
                    hexdump::hex(&record.trailing)
                );
            }
        }
        Err(e) => {
            let family = malformed_family(record).map_or("DirectPlay?", |f| f.name());
            let _ = writeln!(out, "{family} MALFORMED: {e}");
            for line in hexdump::dump(&record.bytes).lines() {
                let _ = writeln!(out, "  {line}");
            }
        }
    }
    out
}

fn scalar(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => "none".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_u64() {
            Some(u) if u >= 10 => format!("{u} (0x{u:X})"),
            _ => n.to_string(),
        },
        Value::String(s) if s.is_empty() => "\"\"".into(),
        Value::String(s) => crate::escape::escaped(s).into_owned(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(o) if o.is_empty() => "{}".into(),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

fn value(out: &mut String, depth: usize, v: &Value) {
    let pad = "  ".repeat(depth);
    match v {
        Value::Object(map) => {
            for (key, item) in map {
                match scalar(item) {
                    Some(s) => {
                        let _ = writeln!(out, "{pad}{key}: {s}");
                    }
                    None => {
                        let _ = writeln!(out, "{pad}{key}:");
                        value(out, depth + 1, item);
                    }
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                match scalar(item) {
                    Some(s) => {
                        let _ = writeln!(out, "{pad}[{i}] {s}");
                    }
                    None => {
                        let _ = writeln!(out, "{pad}[{i}]");
                        value(out, depth + 1, item);
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other).unwrap_or_default());
        }
    }
}
