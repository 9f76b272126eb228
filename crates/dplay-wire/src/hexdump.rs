//! Hex renderings for snapshots, logs and `dplay decode`.

use std::fmt::Write;

/// Bytes as continuous lower-case hex with spaces between bytes: `88 01 00 00`.
pub fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let _ = write!(out, "{b:02X}");
    }
    out
}

/// A spec-style dump: 16 bytes a line, each line led by its offset.
///
/// ```
/// assert_eq!(dplay_wire::hexdump::dump(&[0x88, 0x01]), "0000  88 01\n");
/// ```
pub fn dump(bytes: &[u8]) -> String {
    let mut out = String::new();
    for (line, chunk) in bytes.chunks(16).enumerate() {
        let _ = writeln!(out, "{:04X}  {}", line * 16, hex(chunk));
    }
    out
}

/// Parses hex digits, ignoring whitespace, `0x` prefixes, commas and colons.
pub fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits: String = text
        .replace("0x", " ")
        .replace("0X", " ")
        .chars()
        .filter(|c| !(c.is_whitespace() || *c == ',' || *c == ':'))
        .collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits ({})", digits.len()));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| {
            let pair = digits.get(i..i + 2).unwrap_or_default();
            u8::from_str_radix(pair, 16).map_err(|_| format!("not a hex byte: {pair:?} at digit {i}"))
        })
        .collect()
}
