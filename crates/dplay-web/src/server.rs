//! The HTTP server: its own thread, a current-thread tokio runtime, axum. It reads what the
//! protocol loop published ([`ServerSide`]) and queues admin commands; nothing here can make
//! the protocol loop wait.
//!
//! Routes: `/` (the page), `/admin.js` (its administration part), `/assets/{file}` (what the
//! page loads for the map), `/api/session`, `/api/players`, `/api/traffic` (add-on sessions),
//! `/api/events` (server-sent events: `join`, `leave`, `chat`, `admin`, `resync` when a slow
//! client missed some), `/metrics` (Prometheus); with the admin token:
//! `POST /api/players/{id}/kick`, `GET`/`POST`/`DELETE /api/bans`, `POST /api/chat`, `POST
//! /api/settings` (docs/web-api.md). The reads need the token too unless the server is public
//! ([`WebConfig::public`]); the page and its assets hold no data and are always served.
//!
//! Bounds (docs/web-api.md): [`MAX_CONNECTIONS`](crate::MAX_CONNECTIONS) open connections,
//! request headers within [`HEADER_TIMEOUT`] and [`MAX_HEADER_BYTES`], bodies within
//! [`MAX_BODY`], [`RATE`](crate::RATE) requests a second per client address (429 beyond),
//! [`MAX_STREAMS`] event streams.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::Listener;
use futures_util::Stream;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::sync::{broadcast, oneshot};
use tower::ServiceExt;

use crate::assets::{self, PAGE};
use crate::connections::Capped;
use crate::link::{AdminCommand, ServerSide};
use crate::rate::{BURST, RATE, RateLimit};
use crate::snapshot::WebEvent;
use crate::token;

/// The page's administration part (bans, chat, settings), built in too.
const ADMIN_JS: &str = include_str!("../assets/admin.js");
/// Request bodies larger than this are refused (no route takes a body today).
pub const MAX_BODY: usize = 1024;
/// Event-stream clients served at once; more are refused with 503.
pub const MAX_STREAMS: usize = 32;
/// A request's line and headers must have arrived this long after the connection opened (or
/// the previous response, on a kept-alive connection); a slow client is then disconnected.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Request line and headers larger than this are refused (hyper's smallest read buffer).
pub const MAX_HEADER_BYTES: usize = 8192;
/// The page forbids everything but its own scripts and styles and, for the map, images from
/// OpenStreetMap's tile server: a name that slipped in as markup still could not load or run
/// anything of its own.
const CSP: &str = "default-src 'none'; script-src 'self' 'unsafe-inline'; \
                   style-src 'self' 'unsafe-inline'; connect-src 'self'; \
                   img-src https://tile.openstreetmap.org; base-uri 'none'; form-action 'none'";

/// How a [`WebServer`] serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct WebConfig {
    /// The admin token: kicks need it, and reads too unless `public`.
    pub token: String,
    /// Reads (`/api/session`, `/api/players`, `/api/events`, `/metrics`) without the token.
    /// The page itself is always served: it holds no data.
    pub public: bool,
    /// Requests a second one client address may make (429 beyond). At least 1
    /// ([`WebConfig::set_rate`]).
    rate: u32,
    /// Requests one client address may make at once before `rate` applies. At least 1.
    burst: u32,
    /// See [`HEADER_TIMEOUT`].
    pub header_timeout: Duration,
}

impl WebConfig {
    /// Private reads, [`RATE`] requests a second in bursts of [`BURST`], [`HEADER_TIMEOUT`].
    pub fn new(token: String) -> Self {
        Self { token, public: false, rate: RATE, burst: BURST, header_timeout: HEADER_TIMEOUT }
    }

    /// Sets [`WebConfig::public`].
    #[must_use]
    pub fn public(mut self, public: bool) -> Self {
        self.public = public;
        self
    }

    /// Requests a second one client address may make.
    pub fn rate(&self) -> u32 {
        self.rate
    }

    /// Sets [`WebConfig::rate`]; 0 is raised to 1 (a bucket that never refills would lock
    /// every client out after its burst).
    pub fn set_rate(&mut self, per_second: u32) -> &mut Self {
        self.rate = per_second.max(1);
        self
    }

    /// Requests one client address may make at once.
    pub fn burst(&self) -> u32 {
        self.burst
    }

    /// Sets [`WebConfig::burst`]; 0 is raised to 1 (no request could ever be served).
    pub fn set_burst(&mut self, requests: u32) -> &mut Self {
        self.burst = requests.max(1);
        self
    }
}

#[derive(Clone)]
pub(crate) struct AppState {
    pub(crate) link: ServerSide,
    token: Arc<str>,
    public: bool,
    streams: Arc<AtomicUsize>,
    rate: Arc<Mutex<RateLimit>>,
    /// Players whose kick is queued and whom the snapshot still lists: a second kick of one
    /// says so instead of "kick queued" again (issue 25 item 13).
    kicks: Arc<Mutex<std::collections::BTreeSet<u32>>>,
}

/// A running dashboard server; stops when dropped.
#[derive(Debug)]
pub struct WebServer {
    addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl WebServer {
    /// [`WebServer::start_with`] with public reads (`WebConfig::new(token).public(true)`).
    pub fn start(addr: SocketAddr, link: ServerSide, token: String) -> std::io::Result<Self> {
        Self::start_with(addr, link, WebConfig::new(token).public(true))
    }

    /// Binds `addr` (port 0: any free port) now, so a bad address is reported here, and
    /// serves on a new thread.
    pub fn start_with(addr: SocketAddr, link: ServerSide, config: WebConfig) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop, stopped) = oneshot::channel();
        let state = AppState {
            link,
            token: config.token.into(),
            public: config.public,
            streams: Arc::new(AtomicUsize::new(0)),
            rate: Arc::new(Mutex::new(RateLimit::new(config.rate, config.burst))),
            kicks: Arc::default(),
        };
        let header_timeout = config.header_timeout;
        let thread = std::thread::Builder::new().name("dplay-web".into()).spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => return tracing::warn!("web server: {e}"),
                };
                let serve = serve(Capped::new(listener), router(state), header_timeout);
                // Dropping the runtime with the thread ends the connections and event streams.
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

/// Accepts connections and serves each on its own task with hyper's HTTP/1.1, which
/// `axum::serve` does not let us configure: a header-read deadline (against slowloris) and a
/// bounded header buffer. The client's address goes into the request as [`ConnectInfo`].
async fn serve(mut listener: Capped, app: Router, header_timeout: Duration) {
    loop {
        let (io, remote) = Listener::accept(&mut listener).await;
        let app = app.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut request: Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(remote));
                app.clone().oneshot(request.map(Body::new))
            });
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new()).header_read_timeout(header_timeout).max_buf_size(MAX_HEADER_BYTES);
            if let Err(e) = http.serve_connection(TokioIo::new(io), service).await {
                tracing::debug!(%remote, "web connection: {e}");
            }
        });
    }
}

fn router(state: AppState) -> Router {
    let reads = Router::new()
        .route("/api/session", get(session))
        .route("/api/players", get(players))
        .route("/api/traffic", get(traffic))
        .route("/api/relay", get(relay))
        .route("/api/voice", get(voice))
        .route("/api/events", get(events))
        .route("/metrics", get(metrics))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), readable));
    Router::new()
        .route("/", get(page))
        .route("/admin.js", get(admin_js))
        .route("/assets/{file}", get(asset))
        .route("/api/players/{id}/kick", post(kick))
        .route(
            "/api/bans",
            get(crate::admin_api::bans).post(crate::admin_api::ban).delete(crate::admin_api::unban),
        )
        .route("/api/chat", post(crate::admin_api::chat))
        .route("/api/settings", post(crate::admin_api::settings))
        .merge(reads)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn(bounded))
        .layer(axum::middleware::from_fn_with_state(state.clone(), limited))
        .with_state(state)
}

/// At most [`WebConfig::rate`] requests a second per client address: 429 with `Retry-After`
/// beyond.
async fn limited(
    State(s): State<AppState>,
    ConnectInfo(remote): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    #[allow(clippy::disallowed_methods)] // the server's own clock, not the protocol's
    let now = std::time::Instant::now();
    let verdict = match s.rate.lock() {
        Ok(mut rate) => rate.check(remote.ip(), now),
        Err(poisoned) => poisoned.into_inner().check(remote.ip(), now),
    };
    match verdict {
        Ok(()) => next.run(request).await,
        Err(wait) => {
            let secs = wait.as_secs().max(1).to_string();
            let mut r = (StatusCode::TOO_MANY_REQUESTS, "too many requests\n").into_response();
            if let Ok(v) = HeaderValue::from_str(&secs) {
                r.headers_mut().insert(header::RETRY_AFTER, v);
            }
            r
        }
    }
}

/// The reads need the token unless the server is public: `Authorization: Bearer TOKEN`, or
/// `?token=TOKEN` (URL-encoded) for the page's event stream, which cannot set headers.
async fn readable(State(s): State<AppState>, request: Request, next: Next) -> Response {
    let in_query = request.uri().query().and_then(token_in_query);
    let given = in_query.as_deref().is_some_and(|t| token::matches(&s.token, t));
    if s.public || given || authorized(&s, request.headers()) {
        return next.run(request).await;
    }
    (StatusCode::UNAUTHORIZED, "token required (Authorization: Bearer TOKEN, or ?token=TOKEN)\n")
        .into_response()
}

/// The `token` parameter of a query string, percent-decoded.
fn token_in_query(query: &str) -> Option<String> {
    let raw = query.split('&').find_map(|kv| kv.strip_prefix("token="))?;
    let mut bytes = Vec::with_capacity(raw.len());
    let mut rest = raw.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        let hex = tail.get(..2).and_then(|h| std::str::from_utf8(h).ok());
        match (b, hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(v)) => {
                bytes.push(v);
                rest = tail.get(2..).unwrap_or_default();
            }
            (b'+', _) => {
                bytes.push(b' ');
                rest = tail;
            }
            (b, _) => {
                bytes.push(b);
                rest = tail;
            }
        }
    }
    String::from_utf8(bytes).ok()
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

async fn admin_js() -> Response {
    let mut r = ADMIN_JS.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}

pub(crate) fn json(value: &impl serde::Serialize) -> Response {
    match serde_json::to_vec(value) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

async fn session(State(s): State<AppState>) -> Response {
    let snapshot = s.link.snapshot();
    let public = s.link.public_address();
    let relay = snapshot.relay.is_some();
    json(&crate::public_address::SessionReply::new(&snapshot.session, public.as_ref(), relay))
}

async fn players(State(s): State<AppState>) -> Response {
    json(&s.link.snapshot().players)
}

async fn relay(State(s): State<AppState>) -> Response {
    match &s.link.snapshot().relay {
        Some(relay) => json(relay),
        None => (StatusCode::NOT_FOUND, "this host does not relay\n").into_response(),
    }
}

async fn voice(State(s): State<AppState>) -> Response {
    match &s.link.snapshot().voice {
        Some(voice) => json(voice),
        None => (StatusCode::NOT_FOUND, "no voice server (dplay host --voice)\n").into_response(),
    }
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

async fn metrics(State(s): State<AppState>) -> Response {
    match crate::metrics::render(&s.link.snapshot()) {
        Ok(text) => ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], text).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
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

pub(crate) fn authorized(s: &AppState, headers: &HeaderMap) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|t| token::matches(&s.token, t.trim()))
}

async fn kick(State(s): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if !authorized(&s, &headers) {
        return unauthorized();
    }
    let Some(id) = parse_dpnid(&id) else {
        return (StatusCode::BAD_REQUEST, "not a DPNID\n").into_response();
    };
    let snapshot = s.link.snapshot();
    let Ok(mut kicks) = s.kicks.lock() else {
        return (StatusCode::INTERNAL_SERVER_ERROR, "try again\n").into_response();
    };
    kicks.retain(|k| snapshot.players.iter().any(|p| p.id == *k));
    match snapshot.players.iter().find(|p| p.id == id) {
        None => (StatusCode::NOT_FOUND, "no such player\n").into_response(),
        Some(p) if p.state == "local" => {
            (StatusCode::CONFLICT, "the host cannot kick itself\n").into_response()
        }
        Some(_) if kicks.contains(&id) => {
            (StatusCode::CONFLICT, "this player's kick is already queued\n").into_response()
        }
        Some(_) if !s.link.admin(AdminCommand::Kick(id)) => {
            (StatusCode::SERVICE_UNAVAILABLE, "admin queue full, try again\n").into_response()
        }
        Some(_) => {
            kicks.insert(id);
            (StatusCode::ACCEPTED, "kick queued\n").into_response()
        }
    }
}

/// 401, with what to send.
pub(crate) fn unauthorized() -> Response {
    (StatusCode::UNAUTHORIZED, "admin token required (Authorization: Bearer TOKEN)\n").into_response()
}

#[cfg(test)]
mod tests {
    use super::{parse_dpnid, token_in_query};

    #[test]
    fn the_token_in_a_query_is_percent_decoded() {
        assert_eq!(token_in_query("token=abc").as_deref(), Some("abc"));
        assert_eq!(token_in_query("live=0&token=a%2Bb%20c+d").as_deref(), Some("a+b c d"));
        assert_eq!(token_in_query("token=%zz%4").as_deref(), Some("%zz%4"));
        assert_eq!(token_in_query("tokens=abc"), None);
        assert_eq!(token_in_query("token=%ff"), None, "not UTF-8");
    }

    #[test]
    fn dpnids_in_hex_or_decimal() {
        assert_eq!(parse_dpnid("0x00300003"), Some(0x0030_0003));
        assert_eq!(parse_dpnid("17"), Some(17));
        assert_eq!(parse_dpnid("0xzz"), None);
        assert_eq!(parse_dpnid("-1"), None);
        assert_eq!(parse_dpnid("0x1ffffffff"), None);
    }
}
