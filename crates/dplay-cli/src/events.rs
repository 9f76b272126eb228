//! The JSON events `--json` prints, one per line, the same for DirectPlay 8 and DirectPlay 4
//! (docs/json-events.md is the schema). Each variant is one `"event"`; fields a protocol does
//! not have are left out, never renamed.

use serde::Serialize;

/// Which protocol a session runs.
#[derive(Serialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Proto {
    Dp8,
    Dp4,
}

/// One row of the name table.
#[derive(Serialize)]
pub(crate) struct Row {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) host: bool,
    pub(crate) local: bool,
    /// DirectPlay 4: a system player (one per instance) rather than an application player.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) system: Option<bool>,
}

/// The events both protocols share.
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum JsonEvent {
    /// The session is up.
    Hosting {
        protocol: Proto,
        session: String,
        /// Where players can join (every interface's address when bound to any).
        addrs: Vec<String>,
        /// DirectPlay 8: the one UDP socket.
        #[serde(skip_serializing_if = "Option::is_none")]
        addr: Option<String>,
        /// DirectPlay 8: `peer-to-peer` or `client-server`.
        #[serde(skip_serializing_if = "Option::is_none")]
        mode: Option<&'static str>,
        /// DirectPlay 4: the TCP listener, UDP game socket and UDP enumeration socket.
        #[serde(skip_serializing_if = "Option::is_none")]
        tcp: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        udp: Option<String>,
        #[serde(rename = "enum", skip_serializing_if = "Option::is_none")]
        enumeration: Option<String>,
        flags: Vec<String>,
    },
    /// A DirectPlay 8 join asks the host for its session first (an EnumQuery, at most 2 s),
    /// so that it is not silent meanwhile (issue 25 item 16).
    Probing {
        host: String,
    },
    /// A join starts.
    Joining {
        protocol: Proto,
        host: String,
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        addr: Option<String>,
        /// `fs join`: `player` or `observer`.
        #[serde(skip_serializing_if = "Option::is_none")]
        role: Option<&'static str>,
    },
    /// In the session: DirectPlay 8 our DPNID and the host's; DirectPlay 4 our system player.
    Joined {
        id: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<String>,
        /// DirectPlay 8: `peer-to-peer` or `client-server`, from the session's flags.
        #[serde(skip_serializing_if = "Option::is_none")]
        mode: Option<&'static str>,
        /// DirectPlay 8: the session's flags (`fast-signed` when it signs).
        #[serde(skip_serializing_if = "Option::is_none")]
        flags: Option<Vec<String>>,
    },
    /// DirectPlay 8: the host answered with the name table, and we wait for its
    /// INSTRUCT_CONNECT and/or older peers to connect to us (MC-DPL8CS 3.1.5.2).
    JoinPending {
        id: String,
        awaiting_instruction: bool,
        awaiting_peers: Vec<String>,
    },
    /// Every player, after a join or a host migration.
    NameTable {
        players: Vec<Row>,
    },
    PlayerJoined {
        id: String,
        name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        system: Option<bool>,
    },
    PlayerLeft {
        id: String,
        name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
    /// Host: a join refused, with the code the joiner was sent.
    JoinRefused {
        from: String,
        name: Option<String>,
        code: String,
    },
    HostMigrated {
        new_host: String,
        name: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        local: Option<bool>,
    },
    /// Application data or a chat line.
    Message {
        from: Option<String>,
        name: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        to: Option<String>,
        /// The data as text when it is printable UTF-8 ...
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// ... a Flight Simulator add-on packet by name (FS98 numbering, human units) ...
        #[serde(skip_serializing_if = "Option::is_none")]
        addon: Option<String>,
        /// ... else as hex.
        #[serde(skip_serializing_if = "Option::is_none")]
        hex: Option<String>,
        len: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        digest: Option<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        reliable: Option<bool>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        chat: bool,
    },
    /// We sent something to everyone.
    Sent {
        #[serde(skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        len: usize,
        digest: String,
        guaranteed: bool,
    },
    /// `enum`: one session answered.
    Session {
        host: String,
        name: String,
        instance: String,
        application: String,
        players: u32,
        max_players: u32,
        flags: Vec<String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        application_data: Option<String>,
    },
    SessionEnded {
        reason: String,
    },
    CommandFailed {
        command: String,
        error: String,
    },
    /// DirectPlay 8 host: every drop and refusal so far by reason, and what is held for others
    /// (docs/limits.md).
    Refusals {
        counts: serde_json::Map<String, serde_json::Value>,
        /// Open transport connections.
        connections: usize,
        /// Connections closed gracefully that still acknowledge retries (MC-DPL8R 3.1.4.3).
        lingering: usize,
        half_open: usize,
        joining: usize,
        bytes_held: usize,
        bytes_peak: usize,
        memory_budget: usize,
    },
    /// `host --web`: the dashboard's address and its admin token.
    Web {
        url: String,
        token: String,
        /// Listening on an address other machines reach (not loopback).
        exposed: bool,
    },
    /// DirectPlay 8, from `join`'s probe: a session answered.
    HostFound {
        host: String,
    },
    /// DirectPlay 8: a request to the host answered, or a send with completion done.
    Completed {
        /// The command (`create group`, `join group`, `add to group`, `set-info`), when it was ours.
        #[serde(skip_serializing_if = "Option::is_none")]
        command: Option<&'static str>,
        context: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A group changed (both protocols; `change` says how).
    Group(GroupChange),
    PlayerData {
        id: String,
        len: usize,
    },
    PlayerRenamed {
        id: String,
        name: Option<String>,
    },
    /// The last line: `deadline`, `interrupted`, `done` or `closed`.
    Stopped {
        why: &'static str,
    },
    /// An aircraft's position (`fs`).
    Position {
        id: String,
        name: String,
        lat: f64,
        lon: f64,
        alt_m: f64,
        heading: f64,
        pitch: f64,
        bank: f64,
    },
}

/// How a group changed: the `change` key of a `group` event and the keys that go with it.
#[derive(Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub(crate) enum GroupChange {
    Created {
        id: String,
        name: Option<String>,
        /// DirectPlay 4: whether we created it.
        #[serde(skip_serializing_if = "Option::is_none")]
        local: Option<bool>,
    },
    /// DirectPlay 4: our group could not be created.
    CreateFailed {
        error: String,
    },
    Deleted {
        id: String,
    },
    PlayerAdded {
        id: String,
        player: String,
    },
    PlayerRemoved {
        id: String,
        player: String,
    },
    Data {
        id: String,
        len: usize,
    },
    Renamed {
        id: String,
        name: Option<String>,
    },
    /// DirectPlay 4: group `child` was added to group `id` (a shortcut, groups in groups).
    ShortcutAdded {
        id: String,
        child: String,
    },
    /// DirectPlay 4: group `child` was removed from group `id`.
    ShortcutRemoved {
        id: String,
        child: String,
    },
}

/// The events of DirectPlay 4 only (docs/json-events.md, "DirectPlay 4 only"; `session_found`
/// under "`enum`", `player_created` under the session events).
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum Dp4JsonEvent {
    /// What the host holds for others against its memory budget (docs/limits.md).
    Memory {
        bytes_held: usize,
        bytes_peak: usize,
        memory_budget: usize,
    },
    /// An enumeration found a session.
    SessionFound {
        host: String,
    },
    JoinFailed {
        error: String,
    },
    /// Our application player.
    PlayerCreated {
        id: String,
    },
    PlayerCreateFailed {
        error: String,
    },
    SessionChanged {
        max_players: u32,
        flags: Vec<String>,
    },
    /// Drops of one reason since the last `dropped` of it, and in all.
    Dropped {
        reason: &'static str,
        count: u64,
        total: u64,
    },
    /// Every reason with its total, when the session ends and on SIGUSR1: the same event name
    /// and `counts` as DirectPlay 8's summary (issue 25 item 14; docs/decisions.md).
    Refusals {
        counts: std::collections::BTreeMap<&'static str, u64>,
    },
    StreamRejected {
        peer: String,
        reason: String,
    },
    /// We became the host by migration and answer enumeration here (MC-DPL4CS 3.2.3).
    Enumerating {
        addr: String,
    },
    /// The MC-DPL4R counters.
    Reliable {
        messages_sent: u64,
        frames_sent: u64,
        frames_resent: u64,
        acks_sent: u64,
        nacks_sent: u64,
        frames_received: u64,
        messages_delivered: u64,
        frames_dropped: u64,
        links_failed: u64,
    },
}

/// The Flight Simulator add-on's events (`fs`; docs/json-events.md, "`fs`").
#[derive(Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub(crate) enum AddonJsonEvent {
    /// The add-on host took us in.
    AddonJoined {
        role: &'static str,
    },
    /// The add-on host refused us.
    AddonRefused {
        role: &'static str,
    },
    /// A player says what it is.
    PlayerType {
        name: String,
        role: &'static str,
    },
    /// We (the add-on host) accepted a player.
    Accepted {
        name: String,
        role: &'static str,
    },
    /// We (the add-on host) denied a player.
    Denied {
        name: String,
        role: &'static str,
    },
    /// An add-on chat line: `chat` is always true.
    #[serde(rename = "message")]
    Chat {
        name: String,
        text: String,
        chat: bool,
    },
    PlaneChanged {
        name: String,
        aircraft: String,
        engine: String,
    },
    Crash {
        name: String,
    },
    BecameObserver,
    /// The add-on host's duties are ours now.
    AddonHost,
    /// We (the add-on host) remove a player.
    Removing {
        name: String,
    },
    ObserverChangeRefused,
    AddonDisconnect {
        reason: &'static str,
    },
}

impl JsonEvent {
    /// A message event from `data`: text when printable, else hex.
    pub(crate) fn message(from: Option<String>, name: Option<String>, data: &[u8]) -> Self {
        let (key, value) = crate::live::printable(data);
        let (text, addon, hex) = data_fields(key, value);
        JsonEvent::Message {
            from,
            name,
            to: None,
            text,
            addon,
            hex,
            len: data.len(),
            digest: Some(crate::dp4_print::digest(data)),
            reliable: None,
            chat: false,
        }
    }
}

/// [`crate::live::printable`]'s `(key, value)` as the `text`, `addon` and `hex` fields.
pub(crate) fn data_fields(key: &str, value: String) -> (Option<String>, Option<String>, Option<String>) {
    match key {
        "text" => (Some(value), None, None),
        "addon" => (None, Some(value), None),
        _ => (None, None, Some(value)),
    }
}

/// Flag names as the output spells them, `MIGRATE_HOST` as `migrate-host`; bits the spec does
/// not name as one hex value.
pub(crate) fn flag_names<F>(flags: &F) -> Vec<String>
where
    F: bitflags::Flags,
    F::Bits: std::fmt::LowerHex,
{
    let mut names = Vec::new();
    let mut named = <F::Bits as bitflags::Bits>::EMPTY;
    for (name, flag) in flags.iter_names() {
        names.push(name.to_ascii_lowercase().replace('_', "-"));
        named = named | flag.bits();
    }
    let unknown = flags.bits() & !named;
    if unknown != <F::Bits as bitflags::Bits>::EMPTY {
        names.push(format!("{unknown:#x}"));
    }
    names
}

/// [`flag_names`] as text: `migrate-host, require-password`, or `none`.
pub(crate) fn flags_text(names: &[String]) -> String {
    if names.is_empty() { "none".to_owned() } else { names.join(", ") }
}

/// `1 byte`, `2 bytes` (issue 25 item 18: not "1 bytes").
pub(crate) fn bytes(n: usize) -> String {
    if n == 1 { "1 byte".to_owned() } else { format!("{n} bytes") }
}

#[cfg(test)]
mod tests {
    use dplay_wire::dp8::session::ApplicationDescFlags;

    use super::*;

    #[test]
    fn one_byte_is_singular() {
        assert_eq!(bytes(1), "1 byte");
        assert_eq!(bytes(0), "0 bytes");
        assert_eq!(bytes(2), "2 bytes");
    }

    /// Issue #15 item 8: no Rust Debug text (`ApplicationDescFlags(MIGRATE_HOST)`).
    #[test]
    fn flags_read_as_words() {
        let f = ApplicationDescFlags::MIGRATE_HOST | ApplicationDescFlags::REQUIREPASSWORD;
        assert_eq!(flags_text(&flag_names(&f)), "migrate-host, requirepassword");
        assert_eq!(flags_text(&flag_names(&ApplicationDescFlags::empty())), "none");
        let odd = ApplicationDescFlags::from_bits_retain(0x8000_0004);
        assert_eq!(flag_names(&odd), ["migrate-host", "0x80000000"]);
    }

    /// The keys docs/json-events.md gives `event`, from every row that names it; `None` when
    /// no row does.
    fn documented_keys(event: &str) -> Option<Vec<String>> {
        let doc = include_str!("../../../docs/json-events.md");
        let tick =
            |cell: &str| -> Vec<String> { cell.split('`').skip(1).step_by(2).map(str::to_owned).collect() };
        doc.lines()
            .filter_map(|line| {
                let mut cells = line.split('|').skip(1);
                let (names, keys) = (cells.next()?, cells.next()?);
                tick(names).iter().any(|n| n == event).then(|| tick(keys))
            })
            .reduce(|mut all, keys| {
                all.extend(keys);
                all
            })
    }

    /// Every key of `event`'s JSON is one docs/json-events.md gives its event.
    #[track_caller]
    fn assert_documented(event: &impl Serialize) {
        let serde_json::Value::Object(fields) = serde_json::to_value(event).unwrap() else {
            panic!("an object")
        };
        let name = fields.get("event").and_then(|e| e.as_str()).expect("an event name").to_owned();
        let documented =
            documented_keys(&name).unwrap_or_else(|| panic!("{name} is not in docs/json-events.md"));
        for key in fields.keys().filter(|k| *k != "event") {
            assert!(documented.contains(key), "{name}: key {key} is not documented");
        }
    }

    /// The DirectPlay 4 and add-on events print exactly as documented, keys and values.
    #[test]
    fn dp4_and_addon_events_match_the_schema() {
        let dropped = Dp4JsonEvent::Dropped { reason: "malformed", count: 2, total: 5 };
        assert_eq!(
            serde_json::to_string(&dropped).unwrap(),
            r#"{"event":"dropped","reason":"malformed","count":2,"total":5}"#
        );
        let summary = Dp4JsonEvent::Refusals { counts: [("tcp-full", 3)].into_iter().collect() };
        assert_eq!(
            serde_json::to_string(&summary).unwrap(),
            r#"{"event":"refusals","counts":{"tcp-full":3}}"#
        );
        let chat = AddonJsonEvent::Chat { name: "pilot".into(), text: "hi".into(), chat: true };
        assert_eq!(
            serde_json::to_string(&chat).unwrap(),
            r#"{"event":"message","name":"pilot","text":"hi","chat":true}"#
        );
        assert_eq!(
            serde_json::to_string(&AddonJsonEvent::BecameObserver).unwrap(),
            r#"{"event":"became_observer"}"#
        );
        let reliable = Dp4JsonEvent::Reliable {
            messages_sent: 1,
            frames_sent: 2,
            frames_resent: 3,
            acks_sent: 4,
            nacks_sent: 5,
            frames_received: 6,
            messages_delivered: 7,
            frames_dropped: 8,
            links_failed: 9,
        };
        let role = "player";
        let dp4 = [
            Dp4JsonEvent::SessionFound { host: "192.0.2.1:2300".into() },
            Dp4JsonEvent::JoinFailed { error: "DPERR_INVALIDPASSWORD".into() },
            Dp4JsonEvent::PlayerCreated { id: "0x1".into() },
            Dp4JsonEvent::PlayerCreateFailed { error: "DPERR_CANTCREATEPLAYER".into() },
            Dp4JsonEvent::SessionChanged { max_players: 8, flags: vec!["migrate-host".into()] },
            dropped,
            summary,
            Dp4JsonEvent::StreamRejected { peer: "192.0.2.1:49152".into(), reason: "tcp-full".into() },
            reliable,
        ];
        dp4.iter().for_each(assert_documented);
        let addon = [
            AddonJsonEvent::AddonJoined { role },
            AddonJsonEvent::AddonRefused { role },
            AddonJsonEvent::PlayerType { name: "pilot".into(), role },
            AddonJsonEvent::Accepted { name: "pilot".into(), role },
            AddonJsonEvent::Denied { name: "pilot".into(), role },
            chat,
            AddonJsonEvent::PlaneChanged {
                name: "pilot".into(),
                aircraft: "Cessna".into(),
                engine: "piston".into(),
            },
            AddonJsonEvent::Crash { name: "pilot".into() },
            AddonJsonEvent::BecameObserver,
            AddonJsonEvent::AddonHost,
            AddonJsonEvent::Removing { name: "pilot".into() },
            AddonJsonEvent::ObserverChangeRefused,
            AddonJsonEvent::AddonDisconnect { reason: "left" },
        ];
        addon.iter().for_each(assert_documented);
    }

    /// Group, information and completion events: one schema for both protocols.
    #[test]
    fn group_and_info_events_match_the_schema() {
        let created =
            JsonEvent::Group(GroupChange::Created { id: "0x5".into(), name: None, local: Some(true) });
        assert_eq!(
            serde_json::to_string(&created).unwrap(),
            r#"{"event":"group","change":"created","id":"0x5","name":null,"local":true}"#
        );
        let failed = JsonEvent::Completed {
            command: Some("join group"),
            context: 3,
            error: Some("DPNERR_CONNECTIONLOST".into()),
        };
        assert_eq!(
            serde_json::to_string(&failed).unwrap(),
            r#"{"event":"completed","command":"join group","context":3,"error":"DPNERR_CONNECTIONLOST"}"#
        );
        let (id, player) = (|| "0x5".to_owned(), || "0x7".to_owned());
        let events = [
            created,
            failed,
            JsonEvent::Completed { command: None, context: 4, error: None },
            JsonEvent::HostFound { host: "192.0.2.1:6073".into() },
            JsonEvent::Group(GroupChange::CreateFailed { error: "DPERR_CANTCREATEGROUP".into() }),
            JsonEvent::Group(GroupChange::Deleted { id: id() }),
            JsonEvent::Group(GroupChange::PlayerAdded { id: id(), player: player() }),
            JsonEvent::Group(GroupChange::PlayerRemoved { id: id(), player: player() }),
            JsonEvent::Group(GroupChange::Data { id: id(), len: 4 }),
            JsonEvent::Group(GroupChange::Renamed { id: id(), name: Some("wing".into()) }),
            JsonEvent::PlayerData { id: player(), len: 2 },
            JsonEvent::PlayerRenamed { id: player(), name: Some("ace".into()) },
            JsonEvent::JoinRefused {
                from: "192.0.2.1:2302".into(),
                name: None,
                code: "DPNERR_HOSTREJECTEDCONNECTION".into(),
            },
        ];
        events.iter().for_each(assert_documented);
    }

    #[test]
    fn same_keys_for_both_protocols() {
        let v = serde_json::to_value(JsonEvent::PlayerLeft { id: "0x1".into(), name: None, reason: None })
            .unwrap();
        assert_eq!(v.to_string(), r#"{"event":"player_left","id":"0x1","name":null}"#);
    }
}
