//! The text trace: one line per datagram outcome, partition change and note.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

/// How many trailing lines a failing run prints.
const TAIL_LINES: usize = 40;

/// What happened to one datagram copy, as written in the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// Handed to the receiver; the flags say what the link did on the way.
    Delivered(Flags),
    DroppedLoss,
    DroppedPartition,
    DroppedMtu,
    /// No node is bound to the destination address.
    DroppedNoRoute,
}

/// What a link did to a datagram copy that it delivered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Flags {
    pub(crate) duplicated: bool,
    pub(crate) reordered: bool,
    pub(crate) corrupted: bool,
}

impl Outcome {
    fn word(self) -> String {
        match self {
            Outcome::Delivered(f) => {
                let words: Vec<&str> =
                    [(f.duplicated, "duplicated"), (f.reordered, "reordered"), (f.corrupted, "corrupted")]
                        .into_iter()
                        .filter_map(|(on, w)| on.then_some(w))
                        .collect();
                if words.is_empty() { "delivered".to_owned() } else { words.join(",") }
            }
            Outcome::DroppedLoss => "dropped(loss)".to_owned(),
            Outcome::DroppedPartition => "dropped(partition)".to_owned(),
            Outcome::DroppedMtu => "dropped(mtu)".to_owned(),
            Outcome::DroppedNoRoute => "dropped(no-route)".to_owned(),
        }
    }
}

/// Writes `t=12.345ms` (microsecond resolution).
fn stamp(out: &mut String, t: Duration) {
    let micros = t.as_micros();
    let _ = write!(out, "t={}.{:03}ms ", micros / 1000, micros % 1000);
}

/// Turns a datagram's bytes into a few words for its trace line.
pub(crate) type Describe = Box<dyn Fn(&[u8]) -> String>;

/// The trace text, built only when enabled.
#[derive(Default)]
pub(crate) struct Trace {
    pub(crate) text: String,
    pub(crate) describe: Option<Describe>,
}

impl Trace {
    pub(crate) fn datagram(
        &mut self,
        t: Duration,
        from: SocketAddr,
        to: SocketAddr,
        data: &[u8],
        outcome: Outcome,
    ) {
        stamp(&mut self.text, t);
        let _ = write!(self.text, "{from} -> {to} len={} {}", data.len(), outcome.word());
        let description = self.describe.as_ref().map(|describe| describe(data)).unwrap_or_default();
        if !description.is_empty() {
            self.text.push(' ');
            self.text.push_str(&description);
        }
        self.text.push('\n');
    }

    pub(crate) fn event(&mut self, t: Duration, what: &str) {
        stamp(&mut self.text, t);
        self.text.push_str(what);
        self.text.push('\n');
    }

    pub(crate) fn summary(&mut self, text: &str) {
        for line in text.lines() {
            let _ = writeln!(self.text, "summary: {line}");
        }
    }

    /// The last lines, for a failing run's report.
    pub(crate) fn tail(&self) -> String {
        let lines: Vec<&str> = self.text.lines().collect();
        let skip = lines.len().saturating_sub(TAIL_LINES);
        lines.into_iter().skip(skip).collect::<Vec<_>>().join("\n")
    }
}
