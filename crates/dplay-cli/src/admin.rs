//! `dplay admin ADDR COMMAND`: a thin HTTP client of a host's dashboard API
//! (docs/web-api.md), for scripts: kick, ban, unban, chat, max players, password.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use serde_json::{Value, json};

/// Answers read at most (a player list of 1,000 players fits).
const MAX_ANSWER: u64 = 8 << 20;

/// `dplay admin` options.
#[derive(Args)]
pub(crate) struct AdminArgs {
    /// The dashboard: HOST:PORT or http://HOST:PORT (as `dplay host --web` prints it).
    addr: String,
    /// The admin token (default: the environment variable DPLAY_WEB_TOKEN).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    #[command(subcommand)]
    command: AdminCommand,
}

#[derive(Subcommand)]
enum AdminCommand {
    /// Remove a player, by name (any case) or DPNID (0x...).
    Kick {
        /// The player.
        player: String,
    },
    /// Refuse a name at join from now on, and remove the players in the session with it.
    Ban {
        /// The name (any case).
        name: String,
    },
    /// Refuse an IP address at join from now on, and remove the players in the session from it.
    BanAddress {
        /// The IP address.
        ip: String,
    },
    /// Lift the ban on a name.
    Unban {
        /// The name.
        name: String,
    },
    /// Lift the ban on an IP address.
    UnbanAddress {
        /// The IP address.
        ip: String,
    },
    /// Print the ban list.
    Bans,
    /// Send a chat line to everyone.
    Chat {
        /// The text (at most 500 characters).
        text: String,
    },
    /// Change the player limit (0: none).
    MaxPlayers {
        /// The new limit.
        n: u32,
    },
    /// Change the session password ("" removes it).
    Password {
        /// The new password.
        password: String,
    },
}

/// Runs `dplay admin`.
pub(crate) fn run(args: AdminArgs) -> anyhow::Result<bool> {
    let token = match args.token.clone().or_else(|| std::env::var("DPLAY_WEB_TOKEN").ok()) {
        Some(t) if !t.trim().is_empty() => t,
        _ => {
            bail!("no admin token: give --token TOKEN or set DPLAY_WEB_TOKEN (`dplay host --web` prints it)")
        }
    };
    let api = Api { at: host_port(&args.addr)?, token };
    let (method, path, body) = match args.command {
        AdminCommand::Kick { player } => {
            let id = api.find(&player)?;
            ("POST", format!("/api/players/{id}/kick"), None)
        }
        AdminCommand::Ban { name } => ("POST", "/api/bans".into(), Some(json!({ "name": name }))),
        AdminCommand::BanAddress { ip } => ("POST", "/api/bans".into(), Some(json!({ "address": ip }))),
        AdminCommand::Unban { name } => ("DELETE", "/api/bans".into(), Some(json!({ "name": name }))),
        AdminCommand::UnbanAddress { ip } => ("DELETE", "/api/bans".into(), Some(json!({ "address": ip }))),
        AdminCommand::Bans => ("GET", "/api/bans".into(), None),
        AdminCommand::Chat { text } => ("POST", "/api/chat".into(), Some(json!({ "text": text }))),
        AdminCommand::MaxPlayers { n } => ("POST", "/api/settings".into(), Some(json!({ "max_players": n }))),
        AdminCommand::Password { password } => {
            ("POST", "/api/settings".into(), Some(json!({ "password": password })))
        }
    };
    // Lifting a ban that is not there is an error, not a silent success (issue 25 item 13).
    if let Some((key, what)) = body.as_ref().filter(|_| method == "DELETE").and_then(unban_target) {
        let list: Value = serde_json::from_str(&api.ok("GET", "/api/bans", None)?)
            .context("the dashboard's ban list is not JSON")?;
        let listed = list.get(key).and_then(Value::as_array).into_iter().flatten();
        if !listed.filter_map(Value::as_str).any(|b| b.eq_ignore_ascii_case(what)) {
            bail!("`{}` is not banned: `dplay admin ... bans` lists the bans", crate::escape::escaped(what));
        }
    }
    let answer = api.ok(method, &path, body.as_ref())?;
    let mut out = std::io::stdout().lock();
    match serde_json::from_str::<Value>(&answer) {
        Ok(v) if v.get("names").is_some() => {
            for (kind, key) in [("name", "names"), ("address", "addresses")] {
                for entry in v.get(key).and_then(Value::as_array).into_iter().flatten() {
                    writeln!(out, "{kind} {}", crate::escape::escaped(entry.as_str().unwrap_or_default()))?;
                }
            }
        }
        _ => writeln!(out, "{}", crate::escape::escaped(answer.trim()))?,
    }
    Ok(true)
}

/// The ban list's key and the entry an unban body names (`{"name": ...}` or `{"address": ...}`).
fn unban_target(body: &Value) -> Option<(&'static str, &str)> {
    match (body.get("name").and_then(Value::as_str), body.get("address").and_then(Value::as_str)) {
        (Some(name), _) => Some(("names", name)),
        (None, Some(ip)) => Some(("addresses", ip)),
        (None, None) => None,
    }
}

/// `host:port` from `http://host:port/` or `host:port`.
fn host_port(addr: &str) -> anyhow::Result<String> {
    let a = addr.trim().trim_start_matches("http://").trim_end_matches('/');
    if a.contains('/') || !a.contains(':') {
        bail!("`{addr}` is not a dashboard address: give HOST:PORT or http://HOST:PORT");
    }
    Ok(a.to_owned())
}

struct Api {
    at: String,
    token: String,
}

impl Api {
    /// The answer's body, or an error naming the status and the server's reason.
    fn ok(&self, method: &str, path: &str, body: Option<&Value>) -> anyhow::Result<String> {
        let (status, answer) = self.request(method, path, body)?;
        match status {
            200..=299 => Ok(answer),
            401 => bail!("the dashboard refused the admin token (401): check --token or DPLAY_WEB_TOKEN"),
            _ => bail!("{method} {path}: {status} {}", answer.trim()),
        }
    }

    /// The DPNID of the player named `player` (or `player` itself when it is one).
    fn find(&self, player: &str) -> anyhow::Result<String> {
        let players: Value = serde_json::from_str(&self.ok("GET", "/api/players", None)?)
            .context("the dashboard's player list is not JSON")?;
        let list = players.as_array().map(Vec::as_slice).unwrap_or_default();
        let by_id = list
            .iter()
            .find(|p| p.get("dpnid").and_then(Value::as_str).is_some_and(|d| d.eq_ignore_ascii_case(player)));
        let by_name: Vec<&Value> = list
            .iter()
            .filter(|p| {
                p.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n.to_lowercase() == player.to_lowercase())
            })
            .collect();
        let found = match (by_id, by_name.as_slice()) {
            (Some(p), _) => p,
            (None, [p]) => *p,
            (None, []) => bail!("no player named `{player}` in the session"),
            (None, _) => bail!("{} players are named `{player}`: give the DPNID (0x...)", by_name.len()),
        };
        found.get("dpnid").and_then(Value::as_str).map(str::to_owned).context("the player has no DPNID")
    }

    fn request(&self, method: &str, path: &str, body: Option<&Value>) -> anyhow::Result<(u16, String)> {
        let target = self
            .at
            .to_socket_addrs()
            .with_context(|| format!("cannot resolve {}", self.at))?
            .next()
            .with_context(|| format!("cannot resolve {}", self.at))?;
        let mut s = TcpStream::connect_timeout(&target, Duration::from_secs(5)).with_context(|| {
            format!("cannot reach the dashboard at {}: is `dplay host --web` running?", self.at)
        })?;
        s.set_read_timeout(Some(Duration::from_secs(10)))?;
        let body = body.map(Value::to_string).unwrap_or_default();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.at,
            self.token.trim(),
            body.len()
        )?;
        let mut response = String::new();
        s.take(MAX_ANSWER).read_to_string(&mut response).context("reading the dashboard's answer")?;
        let status = response.split(' ').nth(1).and_then(|c| c.parse().ok()).context("not an HTTP answer")?;
        let (head, rest) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let chunked = head.to_ascii_lowercase().contains("transfer-encoding: chunked");
        Ok((status, if chunked { dechunk(rest) } else { rest.to_owned() }))
    }
}

/// The body of a chunked HTTP/1.1 answer.
fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 {
            break;
        }
        let Some(chunk) = after.get(..n) else { break };
        out.push_str(chunk);
        rest = after.get(n..).unwrap_or_default().trim_start_matches("\r\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_and_chunked_answers() {
        assert_eq!(host_port("http://127.0.0.1:8080/").unwrap(), "127.0.0.1:8080");
        assert_eq!(host_port("localhost:80").unwrap(), "localhost:80");
        assert!(host_port("8080").is_err());
        assert_eq!(dechunk("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"), "hello world");
    }
}
