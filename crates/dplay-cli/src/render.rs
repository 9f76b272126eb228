//! Output: a readable tree, or one JSON object per message.
//!
//! Both come from the same JSON value of the parsed message (`serde_json::to_value`), so every
//! field the wire types serialize is shown, in declaration order. Blobs arrive as hex strings.

use std::fmt::Write;

use dplay_wire::datagram::classify;
use dplay_wire::hexdump;
use serde_json::{Map, Value, json};

use crate::decode::Record;

/// The JSON object of one message: where it was seen, `family`, `message` (spec name),
/// `alias` (MS-DPDX name, when different) and `fields`; or `error` for a malformed one.
pub(crate) fn json(record: &Record) -> Value {
    let mut obj = Map::new();
    if let Some(o) = &record.origin {
        obj.insert("frame".into(), json!(o.frame));
        obj.insert("time".into(), json!(o.time));
        obj.insert("src".into(), json!(o.src.to_string()));
        obj.insert("dst".into(), json!(o.dst.to_string()));
        obj.insert("transport".into(), json!(o.transport.name()));
    }
    obj.insert("length".into(), json!(record.bytes.len()));
    match &record.result {
        Ok(d) => {
            obj.insert("family".into(), json!(d.family().name()));
            obj.insert("family_short".into(), json!(d.family().short()));
            obj.insert("message".into(), json!(d.message_name()));
            if let Some(alias) = d.alias() {
                obj.insert("alias".into(), json!(alias));
            }
            let fields =
                serde_json::to_value(d).unwrap_or_else(|e| json!({ "serialize_error": e.to_string() }));
            obj.insert("fields".into(), fields);
        }
        Err(e) => {
            let family = classify(&record.bytes).family();
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

/// The tree view of one message: a heading line per origin and message, then the fields.
pub(crate) fn tree(record: &Record) -> String {
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
        Ok(d) => {
            let alias = d.alias().map(|a| format!("  (MS-DPDX: {a})")).unwrap_or_default();
            let _ = writeln!(out, "{} {}{alias}", d.family().name(), d.message_name());
            match serde_json::to_value(d) {
                Ok(v) => value(&mut out, 1, &v),
                Err(e) => {
                    let _ = writeln!(out, "  (cannot show fields: {e})");
                }
            }
        }
        Err(e) => {
            let family = classify(&record.bytes).family().map_or("DirectPlay?", |f| f.name());
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
        Value::String(s) => s.clone(),
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
