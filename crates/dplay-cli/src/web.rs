//! `--web ADDR` and `--web-token` on `dplay host` and `dplay fs host`: the dashboard of the
//! dplay-web crate.

use std::net::{Ipv4Addr, SocketAddr};

use crate::events::JsonEvent;
use crate::live::Output;
use clap::Args;
use dplay_web::{ServerSide, WebServer};

/// The dashboard's options.
#[derive(Args)]
pub(crate) struct WebArgs {
    /// Serve the live dashboard and its JSON API here: PORT (on 127.0.0.1), or IP:PORT to
    /// listen elsewhere (port 0: any free port). DirectPlay 8 only for now.
    #[arg(long, value_name = "[IP:]PORT", value_parser = parse_web, conflicts_with = "dp4")]
    pub(crate) web: Option<SocketAddr>,
    /// The admin token that kicks need (default: a random one, printed at start).
    #[arg(long, value_name = "TOKEN", requires = "web")]
    pub(crate) web_token: Option<String>,
}

/// `PORT` (loopback) or `IP:PORT`.
fn parse_web(text: &str) -> Result<SocketAddr, String> {
    if let Ok(port) = text.parse::<u16>() {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    }
    text.parse().map_err(|_| format!("`{text}` is not a port or ip:port, such as 8080 or 127.0.0.1:8080"))
}

/// Starts the dashboard at `addr` and says where, with the admin token.
pub(crate) fn start(
    addr: SocketAddr,
    token: Option<&str>,
    link: ServerSide,
    out: &Output,
) -> anyhow::Result<WebServer> {
    let token = match token {
        Some(t) => t.to_owned(),
        None => dplay_web::random_token()?,
    };
    let server = WebServer::start(addr, link, token.clone())
        .map_err(|e| anyhow::anyhow!("cannot serve the dashboard on {addr}: {e}"))?;
    let url = format!("http://{}/", server.local_addr());
    out.event(
        &JsonEvent::Web { url: url.clone(), token: token.clone() },
        format!("dashboard on {url} (admin token {token}; open {url}#token={token} to kick)"),
    );
    Ok(server)
}
