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
        connections: usize,
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

#[cfg(test)]
mod tests {
    use dplay_wire::dp8::session::ApplicationDescFlags;

    use super::*;

    /// Issue #15 item 8: no Rust Debug text (`ApplicationDescFlags(MIGRATE_HOST)`).
    #[test]
    fn flags_read_as_words() {
        let f = ApplicationDescFlags::MIGRATE_HOST | ApplicationDescFlags::REQUIREPASSWORD;
        assert_eq!(flags_text(&flag_names(&f)), "migrate-host, requirepassword");
        assert_eq!(flags_text(&flag_names(&ApplicationDescFlags::empty())), "none");
        let odd = ApplicationDescFlags::from_bits_retain(0x8000_0004);
        assert_eq!(flag_names(&odd), ["migrate-host", "0x80000000"]);
    }

    #[test]
    fn same_keys_for_both_protocols() {
        let v = serde_json::to_value(JsonEvent::PlayerLeft { id: "0x1".into(), name: None, reason: None })
            .unwrap();
        assert_eq!(v.to_string(), r#"{"event":"player_left","id":"0x1","name":null}"#);
    }
}
