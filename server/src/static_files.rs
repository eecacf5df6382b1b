//! The site's static files (`/pkg/…`: the wasm, its JS glue, the CSS), served with their
//! precompressed copies (`.br`, `.gz`, written by `scripts/build.sh --release`) and
//! `Last-Modified` / `If-Modified-Since`. Their names do not change between builds, so a
//! browser must ask again each time (`no-cache`) and gets a `304 Not Modified` when nothing
//! changed; the body depends on `Accept-Encoding`, hence `Vary`.

use axum::http::{header, HeaderValue};
use tower::ServiceBuilder;
use tower_http::{
    services::ServeDir,
    set_header::{SetResponseHeader, SetResponseHeaderLayer},
};

/// `ServeDir` with the two headers set on every answer.
pub type StaticFiles = SetResponseHeader<SetResponseHeader<ServeDir, HeaderValue>, HeaderValue>;

/// `<site root>/<pkg dir>` as a service to mount at `/<pkg dir>`.
pub fn service(options: &leptos::config::LeptosOptions) -> StaticFiles {
    let dir = std::path::Path::new(&*options.site_root).join(&*options.site_pkg_dir);
    ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::VARY,
            HeaderValue::from_static("accept-encoding"),
        ))
        .service(ServeDir::new(dir).precompressed_br().precompressed_gzip())
}
