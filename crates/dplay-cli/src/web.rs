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
    #[arg(long, value_name = "[IP:]PORT", value_parser = parse_web)]
    pub(crate) web: Option<SocketAddr>,
    /// The admin token that kicks, bans, chat and settings need, and reads unless
    /// --web-public (default: a random one, printed at start).
    #[arg(long, value_name = "TOKEN", requires = "web")]
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

/// The ban list of `--bans FILE` (empty, in memory, without it).
pub(crate) fn bans(args: &WebArgs) -> anyhow::Result<BanFile> {
    match &args.bans {
        None => Ok(BanFile::default()),
        Some(path) => BanFile::load(path)
            .map_err(|e| anyhow::anyhow!("cannot read the ban file {}: {e}", path.display())),
    }
}

/// `PORT` (loopback) or `IP:PORT`.
fn parse_web(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    text.parse().map_err(|_| format!("`{text}` is not a port or ip:port, such as 8080 or 127.0.0.1:8080"))
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
    out.event(
        &JsonEvent::Web { url: url.clone(), token: token.clone() },
        if args.web_public {
            format!("dashboard on {url}, readable by anyone who reaches it (admin token {token}; open {url}#token={token} to administer)")
        } else {
            format!("dashboard on {url} (token {token}, for reads and administration: open {url}#token={token})")
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
    }
}
