//! Printing DirectPlay 4 events as text or JSON lines, as `dplay host`, `join` and `enum` do
//! for DirectPlay 8.

use std::collections::BTreeMap;

use dplay_runtime::{Dp4Event, Dp4Player};
use dplay_session::dp4::{Dp4Event as SessionEvent, EndReason, GroupEvent, JoinError};

use dplay_wire::dp4::DpResult;
use dplay_wire::dp4::session::SessionFlags;

use crate::events::{
    Dp4JsonEvent, GroupChange, JsonEvent, Row, bytes, data_fields, flag_names, flags_text, printable_cut,
};
use crate::live::Output;

/// The summary's count of refused joins (DirectPlay 8's summary says `joins_refused`).
const JOINS_REFUSED: &str = "joins-refused";

/// Prints DirectPlay 4 events, remembering player names.
pub(crate) struct Dp4Output {
    pub(crate) out: Output,
    names: BTreeMap<u32, String>,
    /// The joins refused so far (session full, wrong password, banned), for the summary: the
    /// session counts only what it drops (issue 25 item 15).
    joins_refused: u64,
}

/// A player ID as DirectPlay shows it: `0x%08X`, upper case, as DirectPlay 8 DPNIDs and the
/// dashboard show them (issue 25 item 14).
pub(crate) fn id(id: u32) -> String {
    format!("0x{id:08X}")
}

/// FNV-1a (64 bits) of `data`, as 16 hex digits: lets a reader check a large message arrived
/// whole without printing it.
pub(crate) fn digest(data: &[u8]) -> String {
    let hash = data
        .iter()
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3));
    format!("{hash:016x}")
}

impl Dp4Output {
    pub(crate) fn new(out: Output) -> Self {
        Self { out, names: BTreeMap::new(), joins_refused: 0 }
    }

    /// The name of player `p`, or its ID.
    pub(crate) fn name(&self, p: u32) -> String {
        self.names.get(&p).cloned().unwrap_or_else(|| id(p))
    }

    /// Prints one event; returns whether the session ended.
    pub(crate) fn event(&mut self, event: &Dp4Event) -> bool {
        match event {
            Dp4Event::Session(e) => return self.session(e),
            Dp4Event::PlayerList(players) => self.player_list(players),
            Dp4Event::Dropped { reason, count, total } => self.out.event(
                &Dp4JsonEvent::Dropped { reason, count: *count, total: *total },
                format!("dropped or refused {count} more ({total} in all): {}", reason.replace('-', " ")),
            ),
            Dp4Event::DropSummary(counts) => {
                let mut counts = counts.clone();
                if self.joins_refused > 0 {
                    counts.insert(JOINS_REFUSED, self.joins_refused);
                }
                let text: Vec<String> =
                    counts.iter().map(|(reason, n)| format!("{n} {}", reason.replace('-', " "))).collect();
                let text = if text.is_empty() { "none".to_owned() } else { text.join(", ") };
                self.out.event(&Dp4JsonEvent::Refusals { counts }, format!("dropped or refused: {text}"));
            }
            Dp4Event::MemoryHeld { held, peak, budget } => self.out.event(
                &Dp4JsonEvent::Memory { bytes_held: *held, bytes_peak: *peak, memory_budget: *budget },
                format!("held for others: {held} of {budget} bytes budgeted (peak {peak})"),
            ),
            Dp4Event::StreamRejected { peer, reason } => self.out.event(
                &Dp4JsonEvent::StreamRejected { peer: peer.to_string(), reason: reason.clone() },
                format!("closed the TCP connection from {peer}: {reason}"),
            ),
            Dp4Event::Reliable(s) => self.out.event(
                &Dp4JsonEvent::Reliable {
                    messages_sent: s.messages_sent,
                    frames_sent: s.frames_sent,
                    frames_resent: s.frames_resent,
                    acks_sent: s.acks_sent,
                    nacks_sent: s.nacks_sent,
                    frames_received: s.frames_received,
                    messages_delivered: s.messages_delivered,
                    frames_dropped: s.dropped_total(),
                    links_failed: s.links_failed,
                },
                format!(
                    "MC-DPL4R: {} messages in {} frames ({} resent), {} ACKs, {} NACKs sent; {} frames received ({} dropped), {} messages delivered",
                    s.messages_sent,
                    s.frames_sent,
                    s.frames_resent,
                    s.acks_sent,
                    s.nacks_sent,
                    s.frames_received,
                    s.dropped_total(),
                    s.messages_delivered
                ),
            ),
            Dp4Event::Voice(v) => crate::voice::print(&self.out, v),
            Dp4Event::Enumerating(addr) => self.out.event(
                &Dp4JsonEvent::Enumerating { addr: addr.to_string() },
                format!("answering enumeration on UDP {addr}: we are the host now"),
            ),
            Dp4Event::CommandFailed { command, error } => self.out.event(
                &JsonEvent::CommandFailed { command: (*command).to_owned(), error: error.clone() },
                format!("{command} failed: {error}"),
            ),
            // An event a later runtime adds: not printed until this printer knows it.
            _ => {}
        }
        false
    }

    fn player_list(&mut self, players: &[Dp4Player]) {
        for p in players {
            if let Some(name) = &p.name {
                self.names.insert(p.id, name.clone());
            }
        }
        let rows = players
            .iter()
            .map(|p| Row {
                id: id(p.id),
                name: p.name.clone(),
                host: p.is_host,
                local: p.is_local,
                system: Some(p.system),
            })
            .collect();
        let text: Vec<String> = players
            .iter()
            .map(|p| {
                let mut tags = Vec::new();
                for (on, tag) in [(p.system, "system"), (p.is_host, "host"), (p.is_local, "me")] {
                    if on {
                        tags.push(tag);
                    }
                }
                let tags = if tags.is_empty() { String::new() } else { format!(" ({})", tags.join(", ")) };
                format!("{} {}{tags}", id(p.id), p.name.as_deref().unwrap_or("-"))
            })
            .collect();
        self.out.event_rows(&JsonEvent::NameTable { players: rows }, "player list:", &text);
    }

    fn session(&mut self, event: &SessionEvent) -> bool {
        match event {
            SessionEvent::SessionFound(f) => self.out.event(
                &Dp4JsonEvent::SessionFound { host: f.host.to_string() },
                format!("session at {}", f.host),
            ),
            SessionEvent::EnumDone => {}
            SessionEvent::Joined { system_player } => self.out.event(
                &JsonEvent::Joined { id: id(*system_player), host: None, mode: None, flags: None },
                format!("in the session as instance {}", id(*system_player)),
            ),
            SessionEvent::JoinFailed(e) => self.out.event(
                &Dp4JsonEvent::JoinFailed { error: join_error(*e) },
                format!("join failed: {}", join_error(*e)),
            ),
            SessionEvent::PlayerCreated { id: p } => self
                .out
                .event(&Dp4JsonEvent::PlayerCreated { id: id(*p) }, format!("our player is {}", id(*p))),
            SessionEvent::PlayerCreateFailed(e) => self.out.event(
                &Dp4JsonEvent::PlayerCreateFailed { error: join_error(*e) },
                format!("creating our player failed: {}", join_error(*e)),
            ),
            SessionEvent::PlayerJoined { id: p, name, system } => {
                if let Some(name) = name {
                    self.names.insert(*p, name.clone());
                }
                let what = if *system { "instance" } else { "player" };
                self.out.event(
                    &JsonEvent::PlayerJoined { id: id(*p), name: name.clone(), system: Some(*system) },
                    format!("{what} joined: {} ({})", name.as_deref().unwrap_or("-"), id(*p)),
                );
            }
            SessionEvent::PlayerLeft { id: p } => {
                let name = self.names.remove(p);
                self.out.event(
                    &JsonEvent::PlayerLeft { id: id(*p), name: name.clone(), reason: None },
                    format!("player left: {} ({})", name.as_deref().unwrap_or("-"), id(*p)),
                );
            }
            SessionEvent::JoinRefused { from, name, code } => {
                self.joins_refused += 1;
                let code = DpResult(*code).to_string();
                let who = name.as_deref().map(|n| format!("{n} ")).unwrap_or_default();
                self.out.event(
                    &JsonEvent::JoinRefused {
                        from: from.to_string(),
                        name: name.clone(),
                        code: code.clone(),
                    },
                    format!("join refused: {who}from {from}, {code}"),
                );
            }
            SessionEvent::Message { from, to, data } => self.message(*from, *to, data),
            SessionEvent::PlayerDataChanged { id: p, data } => self.out.event(
                &JsonEvent::PlayerData { id: id(*p), len: data.len() },
                format!("player data of {}: {}", self.name(*p), bytes(data.len())),
            ),
            SessionEvent::PlayerNameChanged { id: p, short_name, .. } => {
                if let Some(name) = short_name {
                    self.names.insert(*p, name.clone());
                }
                self.out.event(
                    &JsonEvent::PlayerRenamed { id: id(*p), name: short_name.clone() },
                    format!("{} is now {}", id(*p), short_name.as_deref().unwrap_or("-")),
                );
            }
            SessionEvent::Chat { from, text, .. } => {
                let name = self.name(*from);
                let text = text.clone().unwrap_or_default();
                let mut e = JsonEvent::message(Some(id(*from)), Some(name.clone()), text.as_bytes());
                if let JsonEvent::Message { chat, .. } = &mut e {
                    *chat = true;
                }
                self.out.event(&e, format!("chat from {name}: {text}"));
            }
            SessionEvent::Group(e) => self.group(e),
            SessionEvent::SessionDescChanged(d) => {
                let flags = flag_names(&d.flags);
                let text =
                    format!("session changed: max players {}, flags {}", d.max_players, flags_text(&flags));
                self.out.event(&Dp4JsonEvent::SessionChanged { max_players: d.max_players, flags }, text);
            }
            SessionEvent::HostMigrated { host, local } => {
                let name = self.name(*host);
                self.out.event(
                    &JsonEvent::HostMigrated { new_host: id(*host), name: name.clone(), local: Some(*local) },
                    format!("host migrated to {name}{}", if *local { " (us)" } else { "" }),
                );
            }
            SessionEvent::Ended(reason) => {
                let why = match reason {
                    EndReason::Left => "left",
                    EndReason::HostLost => "the host is gone",
                    EndReason::YouAreDead => "the host removed us",
                    EndReason::Removed => "the host removed us (DELETEPLAYER)",
                    _ => "ended",
                };
                self.out
                    .event(&JsonEvent::session_ended(why.to_owned(), &[]), format!("session ended: {why}"));
                return true;
            }
            // An event a later session adds: not printed until this printer knows it.
            _ => {}
        }
        false
    }

    /// Application data: text when printable, else hex; cut beyond [`crate::events::SHOWN`] bytes, with the
    /// length and digest of the whole.
    fn message(&self, from: Option<u32>, to: Option<u32>, data: &[u8]) {
        let name = from.map(|f| self.name(f));
        let (key, value) = printable_cut(data);
        let text =
            format!("message from {} ({}): {value}", name.as_deref().unwrap_or("?"), bytes(data.len()));
        let (text_field, addon, hex_field) = data_fields(key, value);
        let e = JsonEvent::Message {
            from: from.map(id),
            name,
            to: to.map(id),
            text: text_field,
            addon,
            hex: hex_field,
            len: data.len(),
            digest: Some(digest(data)),
            reliable: None,
            chat: false,
        };
        self.out.event(&e, text);
    }
}

impl Dp4Output {
    fn group(&mut self, e: &GroupEvent) {
        let (change, text) = match e {
            GroupEvent::Created { id: g, name, local } => (
                GroupChange::Created { id: id(*g), name: name.clone(), local: Some(*local) },
                format!("group created: {} ({})", name.as_deref().unwrap_or("-"), id(*g)),
            ),
            GroupEvent::CreateFailed(why) => (
                GroupChange::CreateFailed { error: join_error(*why) },
                format!("group not created: {}", join_error(*why)),
            ),
            GroupEvent::Deleted { id: g } => {
                (GroupChange::Deleted { id: id(*g) }, format!("group deleted: {}", id(*g)))
            }
            GroupEvent::PlayerAdded { group, player } => (
                GroupChange::PlayerAdded { id: id(*group), player: id(*player) },
                format!("{} added to group {}", self.name(*player), id(*group)),
            ),
            GroupEvent::PlayerRemoved { group, player } => (
                GroupChange::PlayerRemoved { id: id(*group), player: id(*player) },
                format!("{} removed from group {}", self.name(*player), id(*group)),
            ),
            GroupEvent::DataChanged { id: g, data } => (
                GroupChange::Data { id: id(*g), len: data.len() },
                format!("group data of {}: {}", id(*g), bytes(data.len())),
            ),
            GroupEvent::NameChanged { id: g, short_name, .. } => (
                GroupChange::Renamed { id: id(*g), name: short_name.clone() },
                format!("group {} is now {}", id(*g), short_name.as_deref().unwrap_or("-")),
            ),
            GroupEvent::ShortcutAdded { group, child } => (
                GroupChange::ShortcutAdded { id: id(*group), child: id(*child) },
                format!("group {} added to group {}", id(*child), id(*group)),
            ),
            GroupEvent::ShortcutRemoved { group, child } => (
                GroupChange::ShortcutRemoved { id: id(*group), child: id(*child) },
                format!("group {} removed from group {}", id(*child), id(*group)),
            ),
            // An event a later session adds: not printed until this printer knows it.
            _ => return,
        };
        self.out.event(&JsonEvent::Group(change), text);
    }
}

/// What a failed join means, saying what to do.
pub(crate) fn join_error(e: JoinError) -> String {
    match e {
        JoinError::Refused(dplay_session::dp4::DPERR_INVALIDPASSWORD) => {
            "the host refused the password: give the right one with --password".into()
        }
        JoinError::Refused(dplay_wire::dp4::join::DPERR_NONEWPLAYERS) => {
            "the session is full or closed to new players (DPERR_NONEWPLAYERS)".into()
        }
        JoinError::Refused(code) => format!("the host refused the join ({})", DpResult(code)),
        JoinError::Timeout => "no answer from the host in time: check the address and that it runs".into(),
        JoinError::Unreachable => {
            "the connection was refused: no DirectPlay 4 host listens there (check the address and port)"
                .into()
        }
        JoinError::Unsupported(flags) => {
            format!("it is a {} session, which this program does not join yet", unsupported_kind(flags))
        }
        _ => "the join failed".into(),
    }
}

/// The kinds of session a joiner stops at (MC-DPL4CS 1.3), by the flags that make them.
pub(crate) fn unsupported_kind(flags: SessionFlags) -> String {
    let mut kinds = Vec::new();
    if flags.contains(SessionFlags::SECURE_SERVER) {
        kinds.push("secure-server (DPSESSION_SECURESERVER)".to_owned());
    }
    if flags.contains(SessionFlags::MULTICAST_SERVER) {
        kinds.push("multicast-server (DPSESSION_MULTICASTSERVER)".to_owned());
    }
    let rest = flags - SessionFlags::SECURE_SERVER - SessionFlags::MULTICAST_SERVER;
    if !rest.is_empty() || kinds.is_empty() {
        kinds.push(flags_text(&flag_names(&rest)));
    }
    kinds.join(" and ")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 25 item 14: DirectPlay 4 IDs in the form of DPNIDs and the dashboard, `0x%08X`.
    #[test]
    fn ids_are_upper_case_hex() {
        assert_eq!(id(0xab12), "0x0000AB12");
        assert_eq!(id(u32::MAX), "0xFFFFFFFF");
    }

    /// FNV-1a 64's published test values.
    #[test]
    fn digest_is_fnv1a_64() {
        assert_eq!(digest(b""), "cbf29ce484222325");
        assert_eq!(digest(b"a"), "af63dc4c8601ec8c");
    }

    /// MC-DPL4CS 2.2.10: the refusals a user can act on say what to do.
    #[test]
    fn join_errors_say_what_to_do() {
        assert!(
            join_error(JoinError::Refused(dplay_session::dp4::DPERR_INVALIDPASSWORD)).contains("--password")
        );
        assert!(join_error(JoinError::Refused(dplay_wire::dp4::join::DPERR_NONEWPLAYERS)).contains("full"));
        assert!(join_error(JoinError::Refused(0x8877_0820)).ends_with("(DPERR_LOGONDENIED)"));
        let ms = join_error(JoinError::Unsupported(SessionFlags::MULTICAST_SERVER));
        assert!(ms.contains("multicast-server (DPSESSION_MULTICASTSERVER)"), "{ms}");
        assert_eq!(id(0x1234), "0x00001234");
    }
}
