//! Pages for anonymous visitors from a short-lived shared cache (issue #14, point 4).
//!
//! In the minute before a sale opens, visitors reload its page and the home page; rendering
//! each one is several times the work of the JSON API. The home page and a voucher's page, as
//! a visitor without a session sees them, are the same for everyone, so each instance keeps
//! the last rendering of each for `SECKILL_PAGE_CACHE_MS` (1 s) and answers from it. Every
//! HTML page gets an `ETag`, and a request whose `If-None-Match` names it gets a 304 without
//! its body. Signed-in pages are never shared: they are marked `private`.
//!
//! What a cached page can be behind: up to the cache's time to live, and the page corrects
//! itself once hydrated (its first stock event, or its first poll, brings the figures and the
//! server's clock). A voucher created, ended or topped up on this instance is seen at once
//! (the key carries the core's catalog epoch); on the other instances within the time to live.

use std::{
    hash::{Hash, Hasher},
    sync::Arc,
};

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    http::{header, HeaderMap, HeaderValue, Method, StatusCode},
    middleware::Next,
    response::{IntoResponse, Response},
};
use seckill::{memo::TtlMap, Core};

/// Renderings kept at most (distinct voucher pages); past it the oldest go.
const CAP: usize = 2_000;
/// A page bigger than this is not kept.
const MAX_PAGE: usize = 1024 * 1024;

/// One rendering of a page.
#[derive(Debug)]
pub struct Page {
    body: Bytes,
    content_type: HeaderValue,
    etag: HeaderValue,
}

/// The renderings this instance keeps, and the core whose catalog epoch they were made under.
#[derive(Clone)]
pub struct PageCache {
    pages: Arc<TtlMap<String, Arc<Page>>>,
    core: Core,
}

impl PageCache {
    pub fn new(core: Core, ttl: std::time::Duration) -> Self {
        Self {
            pages: Arc::new(TtlMap::new(ttl, CAP)),
            core,
        }
    }
}

/// Whether `path` is one of the pages every visitor sees alike: the home page, a voucher's.
fn shared_page(path: &str) -> bool {
    path == "/"
        || path
            .strip_prefix("/vouchers/")
            .is_some_and(|id| !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether the request carries a session cookie (valid or not: its page is its own).
fn has_session(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .any(|c| c.trim_start().starts_with(app::ssr::SESSION_COOKIE))
}

fn is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

/// The middleware: shared pages from the cache, `ETag`s and 304s on every HTML page.
pub async fn pages(State(cache): State<PageCache>, req: Request, next: Next) -> Response {
    let readable = matches!(*req.method(), Method::GET | Method::HEAD);
    let shared = readable
        && req.uri().query().is_none()
        && shared_page(req.uri().path())
        && !has_session(req.headers());
    let if_none_match = req.headers().get(header::IF_NONE_MATCH).cloned();
    // A voucher changed here (created, ended, topped up) makes every rendering before it old.
    let key = format!("{}:{}", cache.core.catalog_epoch(), req.uri().path());
    if shared {
        if let Some(page) = cache.pages.get(&key) {
            metrics::counter!("seckill_page_cache_total", "outcome" => "hit").increment(1);
            return answer(&page, if_none_match.as_ref(), true);
        }
    }
    let response = next.run(req).await;
    if !readable || response.status() != StatusCode::OK || !is_html(response.headers()) {
        return response;
    }
    // An HTML page: read it whole (rendered pages are small) to tag it.
    let (parts, body) = response.into_parts();
    let body = match axum::body::to_bytes(body, MAX_PAGE).await {
        Ok(body) => body,
        Err(e) => {
            tracing::error!(error = %e, "reading a rendered page");
            return StatusCode::INTERNAL_SERVER_ERROR.into_response();
        }
    };
    let page = Arc::new(Page {
        etag: etag_of(&body),
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("text/html; charset=utf-8")),
        body,
    });
    // A response that sets a cookie belongs to its visitor alone.
    let shareable = shared && !parts.headers.contains_key(header::SET_COOKIE);
    if shareable {
        metrics::counter!("seckill_page_cache_total", "outcome" => "miss").increment(1);
        cache.pages.insert(key, Arc::clone(&page));
    }
    let mut answered = answer(&page, if_none_match.as_ref(), shareable);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH && !answered.headers().contains_key(name) {
            answered.headers_mut().append(name, value.clone());
        }
    }
    answered
}

/// `page` as a 200, or a 304 when the client holds this version.
fn answer(page: &Page, if_none_match: Option<&HeaderValue>, shared: bool) -> Response {
    let cache_control = if shared {
        "public, no-cache"
    } else {
        "private, no-cache"
    };
    let held = if_none_match
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == page.etag));
    let mut response = if held {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = Response::new(Body::from(page.body.clone()));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, page.content_type.clone());
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, page.etag.clone());
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    headers.insert(header::VARY, HeaderValue::from_static("Cookie"));
    response
}

/// A strong validator from the page's bytes.
fn etag_of(body: &[u8]) -> HeaderValue {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut hasher);
    HeaderValue::from_str(&format!("\"{:016x}\"", hasher.finish()))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_home_and_voucher_pages_are_shared() {
        for path in ["/", "/vouchers/1", "/vouchers/123456"] {
            assert!(shared_page(path), "{path}");
        }
        for path in [
            "/login",
            "/orders",
            "/vouchers/",
            "/vouchers/1/x",
            "/vouchers/a",
            "/admin",
        ] {
            assert!(!shared_page(path), "{path}");
        }
    }

    #[test]
    fn a_session_cookie_among_others_is_seen() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; seckill_session=x"),
        );
        assert!(has_session(&h));
        h.insert(header::COOKIE, HeaderValue::from_static("a=1; b=2"));
        assert!(!has_session(&h));
    }

    #[test]
    fn the_same_bytes_get_the_same_tag_and_others_another() {
        assert_eq!(etag_of(b"abc"), etag_of(b"abc"));
        assert_ne!(etag_of(b"abc"), etag_of(b"abd"));
    }
}
