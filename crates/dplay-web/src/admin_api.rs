//! The administration routes beyond kicks (docs/web-api.md): the ban list (kept in the ban file
//! and handed to the protocol loop), a chat line to everyone, and the player limit and password
//! changed live. Every route needs the admin token; bodies are small JSON objects.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

use crate::ban_file::BanEntry;
use crate::link::AdminCommand;
use crate::server::{AppState, authorized, json, unauthorized};
use crate::snapshot::CHAT_CHARS;

/// The body of `POST`/`DELETE /api/bans`: one of the two.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BanBody {
    name: Option<String>,
    address: Option<String>,
}

/// What `GET /api/bans` answers.
#[derive(Serialize)]
struct BanList {
    names: Vec<String>,
    addresses: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChatBody {
    text: String,
}

/// The body of `POST /api/settings`: either or both; a password of `""` removes it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SettingsBody {
    max_players: Option<u32>,
    password: Option<String>,
}

fn bad(why: impl std::fmt::Display) -> Response {
    (StatusCode::BAD_REQUEST, format!("{why}\n")).into_response()
}

fn busy() -> Response {
    (StatusCode::SERVICE_UNAVAILABLE, "admin queue full, try again\n").into_response()
}

/// The body as `T`, or what is wrong with it.
fn body<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T, String> {
    serde_json::from_slice(bytes).map_err(|e| format!("bad JSON body: {e}"))
}

fn list(s: &AppState) -> BanList {
    let file = s.link.ban_file();
    BanList {
        names: file.bans().names().map(str::to_owned).collect(),
        addresses: file.bans().addresses().map(|a| a.to_string()).collect(),
    }
}

pub(crate) async fn bans(State(s): State<AppState>, headers: HeaderMap) -> Response {
    if !authorized(&s, &headers) {
        return unauthorized();
    }
    json(&list(&s))
}

pub(crate) async fn ban(State(s): State<AppState>, headers: HeaderMap, bytes: Bytes) -> Response {
    change_bans(&s, &headers, &bytes, true)
}

pub(crate) async fn unban(State(s): State<AppState>, headers: HeaderMap, bytes: Bytes) -> Response {
    change_bans(&s, &headers, &bytes, false)
}

/// Bans or unbans one name or address: the loop gets the new list (and removes whom it bans),
/// then the file is written. A full queue changes nothing.
fn change_bans(s: &AppState, headers: &HeaderMap, bytes: &[u8], add: bool) -> Response {
    if !authorized(s, headers) {
        return unauthorized();
    }
    let entry = match body::<BanBody>(bytes) {
        Err(e) => return bad(e),
        Ok(BanBody { name: Some(n), address: None }) => BanEntry::Name(n),
        Ok(BanBody { name: None, address: Some(a) }) => match a.trim().parse() {
            Ok(ip) => BanEntry::Address(ip),
            Err(_) => return bad(format!("`{a}` is not an IP address")),
        },
        Ok(_) => return bad("give one of `name` and `address`"),
    };
    let mut file = s.link.ban_file();
    // The new list first, to check it and hand it to the loop; then the file.
    let mut bans = file.bans().clone();
    let changed = match (&entry, add) {
        (BanEntry::Name(n), true) => bans.ban_name(n),
        (BanEntry::Address(ip), true) => bans.ban_address(*ip),
        (BanEntry::Name(n), false) => Ok(bans.unban_name(n)),
        (BanEntry::Address(ip), false) => Ok(bans.unban_address(*ip)),
    };
    match changed {
        Err(e) => return bad(e),
        Ok(false) => {}
        Ok(true) if !s.link.admin(AdminCommand::SetBans(bans)) => return busy(),
        Ok(true) => {
            let saved = if add { file.ban(&entry) } else { file.unban(&entry) };
            if let Err(e) = saved {
                let why = format!("the ban list is applied but the ban file could not be written: {e}\n");
                return (StatusCode::INTERNAL_SERVER_ERROR, why).into_response();
            }
        }
    }
    drop(file);
    json(&list(s))
}

pub(crate) async fn chat(State(s): State<AppState>, headers: HeaderMap, bytes: Bytes) -> Response {
    if !authorized(&s, &headers) {
        return unauthorized();
    }
    let text = match body::<ChatBody>(&bytes) {
        Err(e) => return bad(e),
        Ok(b) => b.text,
    };
    if text.trim().is_empty() || text.chars().count() > CHAT_CHARS {
        return bad(format!("a chat line has 1 to {CHAT_CHARS} characters"));
    }
    if !s.link.admin(AdminCommand::Chat(text)) {
        return busy();
    }
    (StatusCode::ACCEPTED, "chat line queued\n").into_response()
}

pub(crate) async fn settings(State(s): State<AppState>, headers: HeaderMap, bytes: Bytes) -> Response {
    if !authorized(&s, &headers) {
        return unauthorized();
    }
    let b = match body::<SettingsBody>(&bytes) {
        Err(e) => return bad(e),
        Ok(b) => b,
    };
    let mut commands = Vec::new();
    if let Some(n) = b.max_players {
        commands.push(AdminCommand::MaxPlayers(n));
    }
    if let Some(p) = b.password {
        commands.push(AdminCommand::Password(Some(p).filter(|p| !p.is_empty())));
    }
    if commands.is_empty() {
        return bad("give `max_players`, `password` or both");
    }
    for c in commands {
        if !s.link.admin(c) {
            return busy();
        }
    }
    // What "live" means depends on the protocol (docs/decisions.md, "Live session settings").
    let how = match s.link.snapshot().session.protocol {
        "DirectPlay 4" => "queued: every instance is told with SESSIONDESCCHANGED (MC-DPL4CS 2.2.51)\n",
        _ => {
            "queued: applies to the joins from now on; members are not told, MC-DPL8CS has no \
             message that updates the application description\n"
        }
    };
    (StatusCode::ACCEPTED, how).into_response()
}
