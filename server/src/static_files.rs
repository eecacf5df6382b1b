//! How long browsers keep the static files (`/pkg/…`: the wasm, its JS glue, the CSS). Their
//! names do not change between builds, so a browser must ask again each time (`no-cache`) and
//! gets a `304 Not Modified` from `If-Modified-Since` when nothing changed; the bodies go out
//! precompressed (brotli or gzip, written by `scripts/build.sh --release`), so they vary by
//! `Accept-Encoding`.

use axum::{
    extract::Request,
    http::{header, HeaderValue},
    middleware::Next,
    response::Response,
};
use tower_http::services::ServeDir;

/// The path prefix of the static files (`LEPTOS_SITE_PKG_DIR`, `pkg` here and in the build).
const PKG: &str = "/pkg/";

/// `<site root>/<pkg dir>` served with its precompressed copies (`.br`, `.gz`) and
/// `Last-Modified` / `If-Modified-Since`.
pub fn service(options: &leptos::config::LeptosOptions) -> ServeDir {
    let dir = std::path::Path::new(&*options.site_root).join(&*options.site_pkg_dir);
    ServeDir::new(dir).precompressed_br().precompressed_gzip()
}

/// Sets the static files' `Cache-Control` and `Vary`.
pub async fn cache_control(req: Request, next: Next) -> Response {
    let is_static = req.uri().path().starts_with(PKG);
    let mut res = next.run(req).await;
    let kept = res.status().is_success() || res.status() == axum::http::StatusCode::NOT_MODIFIED;
    if is_static && kept {
        let headers = res.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        // The body depends on the request's Accept-Encoding (brotli, gzip or none).
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    res
}
