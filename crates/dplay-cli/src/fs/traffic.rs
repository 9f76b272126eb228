//! The live traffic table of `dplay fs`: one row per aircraft of a [`TrafficSnapshot`], redrawn
//! in place at the top of a terminal while event lines scroll below it. Only on a terminal and
//! without `--json`; elsewhere each event stays one plain line.

use std::io::{IsTerminal, Write};

use dplay_addon::{Aircraft, Role, TrafficSnapshot};

/// Whether the table is drawn: stdout is a terminal and the output is not JSON.
pub(super) fn wanted(json: bool) -> bool {
    !json && std::io::stdout().is_terminal()
}

/// The table at the top of the terminal; the lines below it scroll.
#[derive(Default)]
pub(super) struct LiveTable {
    /// Lines the table takes now (the scroll region starts below them).
    reserved: usize,
    /// The table's first line: what the screen clear would erase and the operator still
    /// needs (where players join, issue 25 item 17).
    header: Option<String>,
}

impl LiveTable {
    /// A table headed by `header`.
    pub(super) fn with_header(header: String) -> Self {
        Self { reserved: 0, header: Some(header) }
    }

    /// The header (if any), then the table's lines for `snapshot`.
    fn headed_lines(&self, snapshot: &TrafficSnapshot) -> Vec<String> {
        self.header.iter().map(|h| crate::escape::escaped(h).into_owned()).chain(lines(snapshot)).collect()
    }

    /// Redraws the table for `snapshot`.
    pub(super) fn draw(&mut self, snapshot: &TrafficSnapshot) {
        let lines = self.headed_lines(snapshot);
        let mut s = String::new();
        if lines.len() != self.reserved {
            if self.reserved == 0 {
                s.push_str("\x1b[2J");
            }
            // Scroll region below the table (DECSTBM), then the cursor to its last line.
            s.push_str(&format!("\x1b[{};r\x1b[999;1H", lines.len() + 1));
            self.reserved = lines.len();
        }
        // Save the cursor, draw from the top, clear each line's rest, restore.
        s.push_str("\x1b7\x1b[H");
        for line in &lines {
            s.push_str(line);
            s.push_str("\x1b[K\n");
        }
        s.push_str("\x1b8");
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(s.as_bytes()).and_then(|()| out.flush());
    }
}

impl Drop for LiveTable {
    /// Gives the whole terminal back to scrolling.
    fn drop(&mut self) {
        if self.reserved > 0 {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(b"\x1b[r\x1b[999;1H\n").and_then(|()| out.flush());
        }
    }
}

/// The table's lines: a title, a header, one row per aircraft, a rule.
fn lines(snapshot: &TrafficSnapshot) -> Vec<String> {
    let mut out = vec![
        format!("traffic: {} aircraft", snapshot.aircraft.len()),
        format!(
            "{:<16} {:<24} {:>10} {:>11} {:>7} {:>4} {:>5} {:>6} {:>6}",
            "name", "aircraft", "lat", "lon", "alt ft", "hdg", "gs kt", "ground", "age s"
        ),
    ];
    out.extend(snapshot.aircraft.iter().map(row));
    out.push("-".repeat(100));
    out
}

/// One aircraft's row; what is not known yet is `-`.
fn row(a: &Aircraft) -> String {
    let num = |v: Option<f64>, digits: usize| v.map_or_else(|| "-".to_owned(), |v| format!("{v:.digits$}"));
    let name = a
        .name
        .as_deref()
        .map_or_else(|| crate::dp4_print::id(a.id.0), |n| crate::escape::escaped(n).into_owned());
    let aircraft = match (a.role, &a.aircraft) {
        (Some(Role::Observer), _) => "(observer)".to_owned(),
        (_, Some(t)) => crate::escape::escaped(t).into_owned(),
        (_, None) => "-".to_owned(),
    };
    let ground = a.on_ground.map_or("-", |g| if g { "yes" } else { "no" });
    format!(
        "{:<16} {:<24} {:>10} {:>11} {:>7} {:>4} {:>5} {:>6} {:>6}",
        clip(&name, 16),
        clip(&aircraft, 24),
        num(a.lat_deg, 5),
        num(a.lon_deg, 5),
        num(a.alt_ft, 0),
        num(a.heading_deg, 0),
        num(a.ground_speed_kt, 0),
        ground,
        num(a.age_s, 1),
    )
}

/// `text` cut to `n` characters.
fn clip(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

#[cfg(test)]
mod tests {
    use dplay_addon::PlayerId;

    use super::*;

    #[test]
    fn a_row_per_aircraft_unknowns_as_dashes() {
        let a = Aircraft {
            id: PlayerId(0x1234),
            name: Some("pilot".into()),
            role: Some(Role::Player),
            aircraft: Some("Cessna Skyhawk 172SP".into()),
            engine_type: None,
            lat_deg: Some(47.5),
            lon_deg: Some(-122.3),
            alt_ft: Some(3280.8),
            heading_deg: Some(90.0),
            pitch_deg: None,
            bank_deg: None,
            ground_speed_kt: Some(203.6),
            vertical_speed_fpm: None,
            on_ground: Some(false),
            age_s: Some(0.25),
            updates: 3,
            packet_index: Some(2),
        };
        let headed = LiveTable::with_header("players can join at 127.0.0.1:6073".into());
        let h = headed.headed_lines(&TrafficSnapshot { aircraft: vec![a.clone()] });
        assert_eq!((h[0].as_str(), h.len()), ("players can join at 127.0.0.1:6073", 5));
        let fresh = Aircraft { id: PlayerId(7), name: None, aircraft: None, lat_deg: None, ..a.clone() };
        let l = lines(&TrafficSnapshot { aircraft: vec![a, fresh] });
        assert_eq!(l.len(), 5);
        assert_eq!(
            l[2],
            "pilot            Cessna Skyhawk 172SP       47.50000  -122.30000    3281   90   204     no    0.2"
        );
        assert!(l[3].starts_with("0x00000007       -                   "), "{}", l[3]);
    }
}
