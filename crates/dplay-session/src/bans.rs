//! [`Bans`]: the names and addresses a host refuses at join (issue 17; docs/decisions.md,
//! "Bans"). The host operator's list: the session only checks it, the runtime or the command
//! keeps it (a file, a dashboard) and hands it over with `Session::set_bans` or
//! `Dp4Session::set_bans`.
//!
//! DirectPlay 8 refuses a banned joiner's PLAYER_CONNECT_INFO with DN_CONNECT_FAILED and
//! [`DPNERR_HOSTREJECTEDCONNECTION`] (MC-DPL8CS 2.2.1.3: "Application declined connection
//! attempt"); DirectPlay 4 refuses with [`DPERR_ACCESSDENIED`] in REQUESTPLAYERREPLY (a banned
//! address) or ADDFORWARDREPLY (a banned name), MC-DPL4CS 2.2.50, 2.2.10.

use std::collections::BTreeSet;
use std::net::IpAddr;

use dplay_wire::dp8::session::ResultCode;

/// `DPNERR_HOSTREJECTEDCONNECTION` (0x80158260): what a banned DirectPlay 8 joiner gets in
/// DN_CONNECT_FAILED (MC-DPL8CS 2.2.1.3; decision).
pub const DPNERR_HOSTREJECTEDCONNECTION: ResultCode = ResultCode::DPNERR_HOSTREJECTEDCONNECTION;

/// `DPERR_ACCESSDENIED`, MAKE_DPHRESULT(10): what a banned DirectPlay 4 joiner gets
/// (MC-DPL4CS 2.2.10, 2.2.50 carry any HRESULT; decision).
pub const DPERR_ACCESSDENIED: u32 = 0x8877_000A;

/// Entries a ban list holds at most (names and addresses together): the operator's list, but
/// still a cap on what the host keeps.
pub const MAX_BANS: usize = 10_000;

/// Longest banned name, in characters (a DirectPlay 8 name is at most 256 UTF-16 units by
/// default, docs/limits.md).
pub const MAX_BAN_NAME: usize = 256;

/// Banned player names (compared without regard to case) and IP addresses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bans {
    names: BTreeSet<String>,
    addresses: BTreeSet<IpAddr>,
}

/// Why a ban could not be added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BanError {
    /// The list holds [`MAX_BANS`] entries.
    #[error("the ban list is full ({MAX_BANS} entries)")]
    Full,
    /// An empty name, one over [`MAX_BAN_NAME`] characters, or one with control characters.
    #[error("a banned name must have 1 to {MAX_BAN_NAME} characters and no control characters")]
    BadName,
}

/// How names are compared: case-insensitive, surrounding spaces ignored.
fn key(name: &str) -> String {
    name.trim().to_lowercase()
}

impl Bans {
    /// No bans.
    pub fn new() -> Self {
        Self::default()
    }

    fn room(&self) -> Result<(), BanError> {
        if self.names.len() + self.addresses.len() >= MAX_BANS { Err(BanError::Full) } else { Ok(()) }
    }

    /// Bans `name` (any case); true if it was not banned yet.
    pub fn ban_name(&mut self, name: &str) -> Result<bool, BanError> {
        let k = key(name);
        // No control characters: the list is kept one entry a line.
        if k.is_empty() || k.chars().count() > MAX_BAN_NAME || k.chars().any(char::is_control) {
            return Err(BanError::BadName);
        }
        if self.names.contains(&k) {
            return Ok(false);
        }
        self.room()?;
        Ok(self.names.insert(k))
    }

    /// Bans the address `ip`; true if it was not banned yet.
    pub fn ban_address(&mut self, ip: IpAddr) -> Result<bool, BanError> {
        if self.addresses.contains(&ip) {
            return Ok(false);
        }
        self.room()?;
        Ok(self.addresses.insert(ip))
    }

    /// Lifts the ban on `name`; true if it was banned.
    pub fn unban_name(&mut self, name: &str) -> bool {
        self.names.remove(&key(name))
    }

    /// Lifts the ban on `ip`; true if it was banned.
    pub fn unban_address(&mut self, ip: IpAddr) -> bool {
        self.addresses.remove(&ip)
    }

    /// Whether `name` is banned.
    pub fn is_name_banned(&self, name: &str) -> bool {
        !self.names.is_empty() && self.names.contains(&key(name))
    }

    /// Whether `ip` is banned (an IPv4-mapped IPv6 address counts as its IPv4 address).
    pub fn is_address_banned(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        self.addresses.contains(&ip)
    }

    /// Whether a joiner from `ip`, named `name` (if it sent one), is refused.
    pub fn refuses(&self, ip: IpAddr, name: Option<&str>) -> bool {
        self.is_address_banned(ip) || name.is_some_and(|n| self.is_name_banned(n))
    }

    /// The banned names, in lower case, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The banned addresses, sorted.
    pub fn addresses(&self) -> impl Iterator<Item = IpAddr> + '_ {
        self.addresses.iter().copied()
    }

    /// No bans at all.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.addresses.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_without_case_and_addresses_exactly() {
        let mut b = Bans::new();
        assert!(b.ban_name(" Mallory ").unwrap());
        assert!(!b.ban_name("MALLORY").unwrap());
        assert!(b.is_name_banned("mallory") && b.is_name_banned("MaLLoRy"));
        assert!(!b.is_name_banned("mallory2"));
        let ip: IpAddr = "10.1.2.3".parse().unwrap();
        assert!(b.ban_address(ip).unwrap());
        assert!(b.refuses(ip, None));
        assert!(b.refuses("::ffff:10.1.2.3".parse().unwrap(), None), "mapped IPv4 is the same host");
        assert!(!b.refuses("10.1.2.4".parse().unwrap(), Some("alice")));
        assert!(b.refuses("10.1.2.4".parse().unwrap(), Some("MALLORY")));
        assert!(b.unban_name("mallory") && !b.unban_name("mallory"));
        assert!(b.unban_address(ip));
        assert!(b.is_empty());
    }

    #[test]
    fn the_list_is_capped_and_names_bounded() {
        let mut b = Bans::new();
        assert_eq!(b.ban_name("   "), Err(BanError::BadName));
        assert_eq!(b.ban_name("two\nlines"), Err(BanError::BadName));
        assert_eq!(b.ban_name(&"x".repeat(MAX_BAN_NAME + 1)), Err(BanError::BadName));
        for n in 0..MAX_BANS {
            b.ban_name(&format!("p{n}")).unwrap();
        }
        assert_eq!(b.ban_name("one more"), Err(BanError::Full));
        assert_eq!(b.ban_address("10.0.0.1".parse().unwrap()), Err(BanError::Full));
        assert_eq!(b.ban_name("p1"), Ok(false), "an existing entry is no error");
    }
}
