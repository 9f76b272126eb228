//! The HTTP server: its own thread, a current-thread tokio runtime, axum. It reads what the
//! protocol loop published ([`ServerSide`]) and queues admin commands; nothing here can make
//! the protocol loop wait.
//!
//! Routes: `/` (the page), `/assets/{file}` (what the page loads), `/api/session`,
//! `/api/players`, `/api/traffic` (add-on sessions), `/api/events` (server-sent events: `join`,
//! `leave`, `chat`, `resync` when a slow client missed some), `POST /api/players/{id}/kick`
//! (admin token required).

use std::convert::Infallible;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use futures_util::Stream;
use tokio::sync::{broadcast, oneshot};

use crate::assets::{self, PAGE};
use crate::connections::Capped;
use crate::link::{AdminCommand, ServerSide};
use crate::snapshot::WebEvent;
use crate::token;

/// Request bodies larger than this are refused (no route takes a body today).
pub const MAX_BODY: usize = 1024;
/// Event-stream clients served at once; more are refused with 503.
pub const MAX_STREAMS: usize = 32;
/// The page forbids everything but its own scripts and styles and, for the map, images from
/// OpenStreetMap's tile server: a name that slipped in as markup still could not load or run
/// anything of its own.
const CSP: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
                   style-src 'self' 'unsafe-inline'; connect-src 'self'; \
                   img-src https://tile.openstreetmap.org; base-uri 'none'; form-action 'none'";

#[derive(Clone)]
struct AppState {
    link: ServerSide,
    token: Arc<str>,
    streams: Arc<AtomicUsize>,
}

/// A running dashboard server; stops when dropped.
#[derive(Debug)]
pub struct WebServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl WebServer {
    /// Binds `addr` (port 0: any free port) now, so a bad address is reported here, and
    /// serves on a new thread.
    pub fn start(addr: SocketAddr, link: ServerSide, token: String) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop, stopped) = oneshot::channel();
        let state = AppState { link, token: token.into(), streams: Arc::new(AtomicUsize::new(0)) };
        let thread = std::thread::Builder::new().name("dplay-web".into()).spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => return tracing::warn!("web server: {e}"),
                };
                let serve = axum::serve(Capped::new(listener), router(state)).into_future();
                // Dropping the server (not a graceful shutdown) ends open event streams too.
                let _ = futures_util::future::select(Box::pin(serve), stopped).await;
            });
        })?;
        Ok(Self { addr, stop: Some(stop), thread: Some(thread) })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for WebServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/api/session", get(session))
        .route("/assets/{file}", get(asset))
        .route("/api/players", get(players))
        .route("/api/traffic", get(traffic))
        .route("/api/events", get(events))
        .route("/api/players/{id}/kick", post(kick))
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(bounded))
        .with_state(state)
}

/// Refuses a body over [`MAX_BODY`] before any handler runs, whether a handler would read it
/// or not: by its Content-Length, and any chunked body (its size is not known up front).
async fn bounded(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let length = headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok());
    let too_big =
        headers.contains_key(header::TRANSFER_ENCODING) || length.is_some_and(|l| l > MAX_BODY as u64);
    if too_big {
        return (StatusCode::PAYLOAD_TOO_LARGE, "request body too large\n").into_response();
    }
    next.run(request).await
}

async fn page() -> Response {
    let mut r = PAGE.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

fn json(value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn session(State(s): State<AppState>) -> Response {
    json(&s.link.snapshot().session)
}

async fn players(State(s): State<AppState>) -> Response {
    json(&s.link.snapshot().players)
}

async fn traffic(State(s): State<AppState>) -> Response {
    match &s.link.snapshot().traffic {
        Some(traffic) => json(traffic),
        None => (StatusCode::NOT_FOUND, "not an add-on session\n").into_response(),
    }
}

async fn asset(Path(file): Path<String>) -> Response {
    assets::file(&file)
}

/// Counts an event-stream client while it lives.
struct StreamSlot(Arc<AtomicUsize>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

async fn events(State(s): State<AppState>) -> Response {
    if s.streams.fetch_add(1, Ordering::Relaxed) >= MAX_STREAMS {
        s.streams.fetch_sub(1, Ordering::Relaxed);
        return (StatusCode::SERVICE_UNAVAILABLE, "too many event streams\n").into_response();
    }
    let slot = StreamSlot(s.streams.clone());
    let stream = event_stream(s.link.subscribe(), slot);
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

fn event_stream(
    rx: broadcast::Receiver<WebEvent>,
    slot: StreamSlot,
) -> impl Stream<Item = Result<Event, Infallible>> {
    futures_util::stream::unfold((rx, slot), |(mut rx, slot)| async move {
        let event = match rx.recv().await {
            Ok(e) => Event::default().event(e.kind()).json_data(&e).unwrap_or_default(),
            // The client missed events: it reloads the lists.
            Err(broadcast::error::RecvError::Lagged(_)) => Event::default().event("resync").data("{}"),
            Err(broadcast::error::RecvError::Closed) => return None,
        };
        Some((Ok(event), (rx, slot)))
    })
}

/// A DPNID as the API and the CLI print it (`0x...`) or as a decimal number.
fn parse_dpnid(s: &str) -> Option<u32> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => s.parse().ok(),
    }
}

fn authorized(s: &AppState, headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| token::matches(&s.token, t.trim()))
}

async fn kick(State(s): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if !authorized(&s, &headers) {
        return (StatusCode::UNAUTHORIZED, "admin token required (Authorization: Bearer TOKEN)\n")
            .into_response();
    }
    let Some(id) = parse_dpnid(&id) else {
        return (StatusCode::BAD_REQUEST, "not a DPNID\n").into_response();
    };
    let snapshot = s.link.snapshot();
    match snapshot.players.iter().find(|p| p.id == id) {
        None => (StatusCode::NOT_FOUND, "no such player\n").into_response(),
        Some(p) if p.state == "local" => {
            (StatusCode::CONFLICT, "the host cannot kick itself\n").into_response()
        }
        Some(_) if !s.link.admin(AdminCommand::Kick(id)) => {
            (StatusCode::SERVICE_UNAVAILABLE, "admin queue full, try again\n").into_response()
        }
        Some(_) => (StatusCode::ACCEPTED, "kick queued\n").into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_dpnid;

    #[test]
    fn dpnids_in_hex_or_decimal() {
        assert_eq!(parse_dpnid("0x00300003"), Some(0x0030_0003));
        assert_eq!(parse_dpnid("17"), Some(17));
        assert_eq!(parse_dpnid("0xzz"), None);
        assert_eq!(parse_dpnid("-1"), None);
        assert_eq!(parse_dpnid("0x1ffffffff"), None);
    }
}
