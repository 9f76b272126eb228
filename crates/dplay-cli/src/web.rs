//! `--web ADDR`, `--web-token` and `--bans FILE` on `dplay host` and `dplay fs host`: the
//! dashboard of the dplay-web crate and the ban list (docs/web-api.md).

use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;

use crate::events::JsonEvent;
use crate::live::Output;
use clap::Args;
use dplay_web::{BanFile, ServerSide, WebConfig, WebServer};

/// The dashboard's options.
#[derive(Args)]
pub(crate) struct WebArgs {
    /// Serve the live dashboard and its JSON API here: PORT (on 127.0.0.1), or IP:PORT to
    /// listen elsewhere (port 0: any free port).
    #[arg(long, value_name = "[HOST:]PORT", value_parser = parse_web)]
    pub(crate) web: Option<SocketAddr>,
    /// The admin token that kicks, bans, chat and settings need, and reads unless
    /// --web-public (default: a random one, printed at start).
    #[arg(long, value_name = "TOKEN", requires = "web", value_parser = parse_token)]
    pub(crate) web_token: Option<String>,
    /// Let anyone who reaches the dashboard read it (the session, players, events, /metrics)
    /// without the token; administration still needs it.
    #[arg(long, requires = "web")]
    pub(crate) web_public: bool,
    /// Refuse the names and addresses listed in FILE at join (DPNERR_HOSTREJECTEDCONNECTION;
    /// DirectPlay 4: DPERR_ACCESSDENIED); bans and unbans made on the dashboard are written
    /// back. One `name NAME` or `address IP` a line; created when missing.
    #[arg(long, value_name = "FILE")]
    pub(crate) bans: Option<PathBuf>,
}

/// The ban list of `--bans FILE` (empty, in memory, without it). A file that could not be
/// written back (its folder missing) is refused now, not at the first ban (issue 25 item 3).
pub(crate) fn bans(args: &WebArgs) -> anyhow::Result<BanFile> {
    match &args.bans {
        None => Ok(BanFile::default()),
        Some(path) if !path.parent().is_none_or(|d| d.as_os_str().is_empty() || d.is_dir()) => {
            anyhow::bail!(
                "cannot keep the ban file {}: its folder does not exist (create it, or name a file in a folder that does)",
                path.display()
            )
        }
        Some(path) => BanFile::load(path)
            .map_err(|e| anyhow::anyhow!("cannot read the ban file {}: {e}", path.display())),
    }
}

/// `PORT` (loopback) or `HOST:PORT` (an IP or a name, as `--bind` takes).
fn parse_web(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    match crate::address::parse_host(text) {
        Ok(addr) if addr.port() != 0 || text.ends_with(":0") => Ok(addr),
        _ => Err(format!(
            "`{text}` is not a port or host:port, such as 8080, 127.0.0.1:8080 or localhost:8080"
        )),
    }
}

/// A `--web-token`: not empty (an empty one would open reads to anyone and shut
/// administration), and printable without spaces or controls, so that it goes into the URL
/// and an `Authorization: Bearer` header as typed (issue 25 item 3).
fn parse_token(text: &str) -> Result<String, String> {
    if text.is_empty() {
        return Err("the token is empty: give one, or leave --web-token out for a random one".into());
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("the token has spaces or control characters: give one without".into());
    }
    Ok(text.to_owned())
}

/// `token` for a URL's `#token=` fragment: every byte but the unreserved ones percent-encoded.
fn url_encoded(token: &str) -> String {
    token
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

/// Starts the dashboard at `addr` as `args` say, and says where, with the admin token.
pub(crate) fn start(
    addr: SocketAddr,
    args: &WebArgs,
    link: ServerSide,
    out: &Output,
) -> anyhow::Result<WebServer> {
    let token = match &args.web_token {
        Some(t) => t.clone(),
        None => dplay_web::random_token()?,
    };
    let config = WebConfig::new(token.clone()).public(args.web_public);
    let server = WebServer::start_with(addr, link, config)
        .map_err(|e| anyhow::anyhow!("cannot serve the dashboard on {addr}: {e}"))?;
    let url = format!("http://{}/", server.local_addr());
    let link = format!("{url}#token={}", url_encoded(&token));
    // Not loopback: anyone who reaches the port sees the login (and, --web-public, the session).
    let exposed = !server.local_addr().ip().is_loopback();
    let warning = if exposed {
        format!(
            "; EXPOSED: it listens on {}, reachable from other machines: keep the token secret or bind 127.0.0.1",
            server.local_addr().ip()
        )
    } else {
        String::new()
    };
    out.event(
        &JsonEvent::Web { url: url.clone(), token: token.clone(), exposed },
        if args.web_public {
            format!("dashboard on {url}, readable by anyone who reaches it (admin token {token}; open {link} to administer){warning}")
        } else {
            format!("dashboard on {url} (token {token}, for reads and administration: open {link}){warning}")
        },
    );
    Ok(server)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 17 item 5: a port alone listens on loopback only; another address must be named.
    #[test]
    fn a_port_alone_binds_loopback() {
        assert_eq!(parse_web("8080"), Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 8080))));
        assert_eq!(parse_web("0.0.0.0:8080"), Ok(SocketAddr::from((Ipv4Addr::UNSPECIFIED, 8080))));
        assert!(parse_web("8080x").is_err());
        // Issue 25 item 3: a name, as --bind takes it.
        assert_eq!(parse_web("localhost:8080"), Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 8080))));
        assert!(parse_web("localhost").is_err(), "a port is needed");
    }

    /// Issue 25 item 3: an empty token or one with spaces is refused; the URL's is encoded.
    #[test]
    fn tokens() {
        assert!(parse_token("").is_err());
        assert!(parse_token("a b").is_err());
        assert!(parse_token("a\tb").is_err());
        assert_eq!(parse_token("s3cret"), Ok("s3cret".into()));
        assert_eq!(url_encoded("a+b/c~d"), "a%2Bb%2Fc~d");
    }
}
