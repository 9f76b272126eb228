//! [`BanFile`]: the host's ban list kept in a text file across restarts (`dplay host --bans
//! FILE`; docs/web-api.md, "Ban file"). One entry a line, `name NAME` or `address IP`; blank
//! lines and lines starting with `#` are ignored. The file is rewritten whole (to a temporary
//! file, then renamed over it) after each ban or unban.

use std::fmt::Write as _;
use std::io;
use std::net::IpAddr;
use std::path::{Path, PathBuf};

use dplay_session::Bans;

/// Bytes of a ban file read at most (10,000 entries of a long name fit).
pub const MAX_BAN_FILE: u64 = 4 << 20;

/// A ban list and, when it has one, the file it is kept in.
#[derive(Debug, Clone, Default)]
pub struct BanFile {
    bans: Bans,
    path: Option<PathBuf>,
}

/// What one ban or unban names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BanEntry {
    /// A player name (any case).
    Name(String),
    /// An IP address.
    Address(IpAddr),
}

impl BanFile {
    /// A list kept in memory only.
    pub fn in_memory(bans: Bans) -> Self {
        Self { bans, path: None }
    }

    /// The list in `path`; an absent file is an empty list (created at the first ban).
    pub fn load(path: &Path) -> io::Result<Self> {
        let text = match std::fs::metadata(path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
            Ok(m) if m.len() > MAX_BAN_FILE => {
                return Err(io::Error::other(format!("over {MAX_BAN_FILE} bytes")));
            }
            Ok(_) => std::fs::read_to_string(path)?,
        };
        let bans = parse_ban_list(&text).map_err(io::Error::other)?;
        Ok(Self { bans, path: Some(path.to_owned()) })
    }

    /// The bans.
    pub fn bans(&self) -> &Bans {
        &self.bans
    }

    /// Adds `entry` and saves; true if it was new.
    pub fn ban(&mut self, entry: &BanEntry) -> io::Result<bool> {
        let added = match entry {
            BanEntry::Name(n) => self.bans.ban_name(n),
            BanEntry::Address(ip) => self.bans.ban_address(*ip),
        }
        .map_err(io::Error::other)?;
        if added {
            self.save()?;
        }
        Ok(added)
    }

    /// Removes `entry` and saves; true if it was banned.
    pub fn unban(&mut self, entry: &BanEntry) -> io::Result<bool> {
        let removed = match entry {
            BanEntry::Name(n) => self.bans.unban_name(n),
            BanEntry::Address(ip) => self.bans.unban_address(*ip),
        };
        if removed {
            self.save()?;
        }
        Ok(removed)
    }

    /// Writes the file, if there is one: a temporary file beside it, renamed over it.
    fn save(&self) -> io::Result<()> {
        let Some(path) = &self.path else { return Ok(()) };
        let mut tmp = path.clone().into_os_string();
        tmp.push(".tmp");
        std::fs::write(&tmp, render_ban_list(&self.bans))?;
        std::fs::rename(&tmp, path)
    }
}

/// The first bad line of a ban file: its number (1-based) and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {why}")]
pub struct BadBanLine {
    /// The line's number, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub why: String,
}

/// The file's text for `bans`: what [`parse_ban_list`] reads back as the same list.
pub fn render_ban_list(bans: &Bans) -> String {
    let mut out = String::from("# dplay ban list: `name NAME` or `address IP`, one a line\n");
    for n in bans.names() {
        let _ = writeln!(out, "name {n}");
    }
    for a in bans.addresses() {
        let _ = writeln!(out, "address {a}");
    }
    out
}

/// The bans in a ban file's `text`, or its first bad line. Never panics; at most
/// [`dplay_session::MAX_BANS`] entries are kept (past that, the line is bad).
pub fn parse_ban_list(text: &str) -> Result<Bans, BadBanLine> {
    let mut bans = Bans::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: String| BadBanLine { line: i + 1, why };
        let (kind, value) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let value = value.trim();
        match kind {
            "name" => bans.ban_name(value).map(drop).map_err(|e| bad(e.to_string()))?,
            "address" => {
                let ip = value.parse().map_err(|_| bad(format!("`{value}` is not an IP address")))?;
                bans.ban_address(ip).map(drop).map_err(|e| bad(e.to_string()))?;
            }
            other => return Err(bad(format!("`{other}`: expected `name NAME` or `address IP`"))),
        }
    }
    Ok(bans)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Any text: a list or the first bad line, never a panic; what it renders reads back
        /// the same.
        #[test]
        fn any_text_parses_or_names_a_line(text in "(name [^\n]{0,20}|address [0-9a-f.:]{0,20}|[^\n]{0,20})(\n[^\n]{0,30}){0,8}") {
            match parse_ban_list(&text) {
                Ok(bans) => prop_assert_eq!(parse_ban_list(&render_ban_list(&bans)).unwrap(), bans),
                Err(e) => prop_assert!(e.line >= 1 && e.line <= text.lines().count()),
            }
        }
    }

    #[test]
    fn the_text_format_round_trips_and_names_bad_lines() {
        let bans = parse_ban_list("# comment\n\nname Mallory\naddress 10.0.0.7\nname  two words \n").unwrap();
        assert!(bans.is_name_banned("mallory") && bans.is_name_banned("TWO WORDS"));
        assert!(bans.is_address_banned("10.0.0.7".parse().unwrap()));
        assert_eq!(parse_ban_list(&render_ban_list(&bans)).unwrap(), bans);
        assert_eq!(parse_ban_list("name ok\nip 1.2.3.4").unwrap_err().line, 2);
        assert_eq!(parse_ban_list("address nope").unwrap_err().line, 1);
        assert_eq!(parse_ban_list("name").unwrap_err().line, 1);
    }

    #[test]
    fn bans_are_kept_in_the_file_across_loads() {
        let dir = std::env::temp_dir().join(format!("dplay-bans-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("bans.txt");
        let _ = std::fs::remove_file(&path);
        let mut file = BanFile::load(&path).unwrap();
        assert!(file.bans().is_empty() && !path.exists());
        assert!(file.ban(&BanEntry::Name("Mallory".into())).unwrap());
        assert!(file.ban(&BanEntry::Address("10.0.0.9".parse().unwrap())).unwrap());
        assert!(!file.ban(&BanEntry::Name("MALLORY".into())).unwrap());
        let again = BanFile::load(&path).unwrap();
        assert_eq!(again.bans(), file.bans());
        assert!(file.unban(&BanEntry::Name("mallory".into())).unwrap());
        assert!(!BanFile::load(&path).unwrap().bans().is_name_banned("mallory"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
