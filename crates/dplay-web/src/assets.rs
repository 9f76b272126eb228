//! The page and the files it loads, built into the binary (no build step, no CDN): Leaflet
//! 1.9.4 (BSD-2-Clause) and Natural Earth's 110m land (public domain, as world-atlas 2.0.2's
//! TopoJSON, ISC) for the offline coastline. THIRD-PARTY.md says where each came from.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The page: one file.
pub(crate) const PAGE: &str = include_str!("../assets/index.html");

/// The vendored files by the name the page asks for, with their content type.
const FILES: &[(&str, &str, &[u8])] = &[
    ("leaflet.js", "text/javascript; charset=utf-8", include_bytes!("../assets/vendor/leaflet/leaflet.js")),
    ("leaflet.css", "text/css; charset=utf-8", include_bytes!("../assets/vendor/leaflet/leaflet.css")),
    ("land-110m.json", "application/json", include_bytes!("../assets/vendor/world-atlas/land-110m.json")),
];

/// `/assets/{name}`: a vendored file, cached for a day (it changes only with the binary).
pub(crate) fn file(name: &str) -> Response {
    let Some((_, kind, body)) = FILES.iter().find(|(n, ..)| *n == name) else {
        return (StatusCode::NOT_FOUND, "no such file\n").into_response();
    };
    let mut r = body.into_response();
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    r
}
