//! Text from the network, made safe for a terminal: the one place every text line and log
//! line passes through (issue 25 item 1). A player name, chat line, session name or aircraft
//! title may hold control characters; printed raw they recolour or clear the operator's
//! terminal, ring its bell, or forge whole log lines with `\n`. JSON output needs nothing: its
//! strings are escaped by serde_json.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character (C0, DEL, C1), line or paragraph separator and
/// bidirectional override written as an escape (`\n`, `\r`, `\t`, `\e`, `\u{202e}`), and the
/// backslash before such an escape doubled so an escape cannot be forged either.
pub(crate) fn escaped(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x1b' => out.push_str("\\e"),
            '\\' => out.push_str("\\\\"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` is shown as an escape: controls and the characters that move or reorder text.
/// A backslash only matters beside one of them, so it alone leaves a text as it is.
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// The log's field formatter: every field of every `tracing` line escaped, the message as
/// is (no `message=`), the others as `name=value`, separated by spaces.
pub(crate) fn log_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + 'static {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let text = format!("{value:?}");
        if field.name() == "message" {
            w.write_str(&escaped(&text))
        } else {
            write!(w, "{}={}", field.name(), escaped(&text))
        }
    })
    .delimited(" ")
}

#[cfg(test)]
mod tests {
    use super::escaped;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(escaped("alice"), "alice");
        assert_eq!(escaped("Zoë ✈ a\\b"), "Zoë ✈ a\\b");
        assert_eq!(escaped("x\n[ 9.999s] player left"), "x\\n[ 9.999s] player left");
        assert_eq!(escaped("\x1b[2J\x07\r\t\u{7f}\u{9b}"), "\\e[2J\\u{7}\\r\\t\\u{7f}\\u{9b}");
        assert_eq!(escaped("abc\u{202e}cba"), "abc\\u{202e}cba");
        // A backslash is doubled only where an escape is written, so `\n` typed as two
        // characters cannot pass for an escaped newline beside a real one.
        assert_eq!(escaped("\\n\n"), "\\\\n\\n");
    }

    proptest::proptest! {
        /// Whatever comes in, no control character goes out.
        #[test]
        fn nothing_raw_goes_out(text in ".*") {
            proptest::prop_assert!(!escaped(&text).chars().any(super::needs_escape));
        }
    }
}
