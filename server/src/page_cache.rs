//! Pages for anonymous visitors from a short-lived shared cache (design.md §8, decision 21).
//!
//! In the minute before a sale opens, visitors reload its page and the home page; rendering
//! each one is several times the work of the JSON API. The home page and a voucher's page, as
//! a visitor without a session sees them, are the same for everyone, so each instance keeps
//! the last rendering of each for `SECKILL_PAGE_CACHE_MS` (1 s) and answers from it. Every
//! HTML page gets an `ETag`, and a request whose `If-None-Match` names it gets a 304 without
//! its body. A shared rendering is gzipped once, when it is made, and that copy goes to every
//! visitor who takes gzip. Signed-in pages are never shared as they are: most are made from a
//! stand-in's rendering of the same page, kept here too, with the shopper's own ID and phone
//! put in ([`crate::signed_in_pages`], decision 31), the rest rendered per request; all are
//! marked `private, no-store` (and compressed per response by the router's compression layer,
//! which leaves an encoded page alone), as is any HTML answer other than a 200 (a 404 page
//! names who is signed in), with `Vary: Cookie`.
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
use seckill::{auth::Principal, Core, TtlMap};
use webapi::http::SessionCookie;

use crate::signed_in_pages::{self, StandIn};

/// A page of one visitor: never stored, not even by their own browser (a shared computer's
/// back button, a disk cache), so it is always asked again.
const PRIVATE: &str = "private, no-store";

/// Renderings kept at most (distinct voucher pages); past it the oldest go.
const CAP: usize = 2_000;
/// A page bigger than this is not kept.
const MAX_PAGE: usize = 1024 * 1024;

/// One rendering of a page; a shared one also gzipped, once.
#[derive(Debug)]
pub struct Page {
    body: Bytes,
    content_type: HeaderValue,
    etag: HeaderValue,
    gzip: Option<(Bytes, HeaderValue)>,
}

/// The renderings this instance keeps, and the core whose catalog epoch they were made under.
#[derive(Clone)]
pub struct PageCache {
    pages: Arc<TtlMap<String, Arc<Page>>>,
    core: Core,
    cookie: SessionCookie,
    /// Who signed-in templates are rendered for (`None`: signed-in pages rendered per request).
    stand_in: Option<StandIn>,
}

impl PageCache {
    pub fn new(core: Core, ttl: std::time::Duration, cookie: SessionCookie) -> Self {
        Self {
            pages: Arc::new(TtlMap::new(ttl, CAP)),
            stand_in: StandIn::new(&core, cookie),
            core,
            cookie,
        }
    }
}

/// Whether `path` is one of the pages every visitor sees alike: the home page, a voucher's.
fn shared_page(path: &str) -> bool {
    path == "/"
        || path.strip_prefix("/vouchers/").is_some_and(|id| {
            // Written as the shop writes IDs: `/vouchers/007` would be one more rendering of
            // voucher 7 in the cache, and a few thousand of them would empty it.
            !id.is_empty() && !id.starts_with('0') && id.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Whether the request carries a session cookie (valid or not: its page is its own).
fn has_session(headers: &HeaderMap) -> bool {
    webapi::http::has_session_cookie(headers)
}

fn is_html(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}

fn is_csv(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/csv"))
}

/// The middleware: shared pages from the cache, `ETag`s and 304s on every HTML page.
pub async fn pages(State(cache): State<PageCache>, req: Request, next: Next) -> Response {
    // Only reads can be pages: a buy (a POST) passes straight through.
    if !matches!(*req.method(), Method::GET | Method::HEAD) {
        return next.run(req).await;
    }
    let same_for_all = req.uri().query().is_none() && shared_page(req.uri().path());
    if same_for_all && has_session(req.headers()) {
        // Owned, so the request (whose body is not Sync) is not borrowed across the reads.
        if let Some((token, path)) = template_candidate(&cache, &req) {
            if let Some(shopper) = signed_in_pages::eligible(&cache.core, &token, &path).await {
                return signed_in_page(&cache, shopper, req, next).await;
            }
        }
    }
    let shared = same_for_all && !has_session(req.headers());
    let is_get = req.method() == Method::GET;
    let if_none_match = req.headers().get(header::IF_NONE_MATCH).cloned();
    let gzip_ok = accepts_gzip(req.headers());
    // A voucher changed here (created, ended, topped up) makes every rendering before it old;
    // each language has its own rendering.
    let lang = app::words::of_request(req.headers());
    let key = shared.then(|| {
        format!(
            "{}:{}:{}",
            cache.core.catalog_epoch(),
            lang.tag(),
            req.uri().path()
        )
    });
    if let Some(page) = key.as_ref().and_then(|k| cache.pages.get(k)) {
        metrics::counter!("seckill_page_cache_total", "outcome" => "hit").increment(1);
        return answer(&page, if_none_match.as_ref(), true, gzip_ok);
    }
    let mut response = next.run(req).await;
    if !is_html(response.headers()) {
        return response;
    }
    if response.status() != StatusCode::OK {
        // A 404 page and the like: it may name who is signed in, so it is nobody else's.
        let headers = response.headers_mut();
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(PRIVATE));
        headers.insert(header::VARY, HeaderValue::from_static("Cookie"));
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
    // A response that sets a cookie belongs to its visitor alone.
    let shareable = shared && !parts.headers.contains_key(header::SET_COOKIE);
    // A private page may be compressed on its way out under the same tag: a weak validator.
    let etag = etag_of(&body, "");
    let etag = if shareable {
        etag
    } else {
        HeaderValue::from_str(&format!("W/{}", etag.to_str().unwrap_or("\"0\""))).unwrap_or(etag)
    };
    let page = Arc::new(Page {
        gzip: shareable.then(|| gzipped(&body)).flatten(),
        etag,
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("text/html; charset=utf-8")),
        body,
    });
    // A `HEAD`'s rendering reaches here with its body already dropped by the router: it
    // answers its request and is never kept for the `GET`s after it.
    if let Some(key) = key.filter(|_| shareable && is_get) {
        metrics::counter!("seckill_page_cache_total", "outcome" => "miss").increment(1);
        cache.pages.insert(key, Arc::clone(&page));
    }
    let mut answered = answer(&page, if_none_match.as_ref(), shareable, gzip_ok);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_LENGTH && !answered.headers().contains_key(name) {
            answered.headers_mut().append(name, value.clone());
        }
    }
    answered
}

/// The session token and path of `req` when a signed-in template may answer it.
fn template_candidate(cache: &PageCache, req: &Request) -> Option<(String, String)> {
    cache.stand_in.as_ref()?;
    let token = cache.cookie.token(req.headers())?;
    Some((token.to_owned(), req.uri().path().to_owned()))
}

/// A signed-in page from the template of its path (rendered for the stand-in on a miss), made
/// `shopper`'s; rendered for them alone when no template can be made.
async fn signed_in_page(
    cache: &PageCache,
    shopper: Principal,
    req: Request,
    next: Next,
) -> Response {
    let if_none_match = req.headers().get(header::IF_NONE_MATCH).cloned();
    let lang = app::words::of_request(req.headers());
    let key = format!(
        "{}:{}:{}:signed-in",
        cache.core.catalog_epoch(),
        lang.tag(),
        req.uri().path()
    );
    let template = match cache.pages.get(&key) {
        Some(t) => {
            metrics::counter!("seckill_page_cache_total", "outcome" => "signed_in_hit")
                .increment(1);
            t
        }
        None => {
            let (parts, _) = req.into_parts();
            let mut for_stand_in = Request::from_parts(parts.clone(), Body::empty());
            if let Some(stand_in) = &cache.stand_in {
                // The stand-in's session, in the shopper's language (its cookie is replaced,
                // the language cookie with it: it is said again).
                let cookie = format!(
                    "{}; {}={}",
                    stand_in.cookie().to_str().unwrap_or_default(),
                    app::words::Lang::COOKIE,
                    lang.tag()
                );
                let cookie =
                    HeaderValue::from_str(&cookie).unwrap_or_else(|_| stand_in.cookie().clone());
                for_stand_in.headers_mut().insert(header::COOKIE, cookie);
            }
            match template_of(next.clone().run(for_stand_in).await).await {
                Some(t) => {
                    metrics::counter!("seckill_page_cache_total", "outcome" => "signed_in_miss")
                        .increment(1);
                    cache.pages.insert(key, Arc::clone(&t));
                    t
                }
                // No template (an error page, a cookie set): the page as it is for the shopper.
                None => return next.run(Request::from_parts(parts, Body::empty())).await,
            }
        }
    };
    let text = String::from_utf8_lossy(&template.body);
    let body = Bytes::from(signed_in_pages::fill(&text, &shopper));
    let etag = etag_of(&body, "");
    let page = Page {
        etag: HeaderValue::from_str(&format!("W/{}", etag.to_str().unwrap_or("\"0\"")))
            .unwrap_or(etag),
        content_type: template.content_type.clone(),
        gzip: None,
        body,
    };
    answer(&page, if_none_match.as_ref(), false, false)
}

/// A stand-in's rendering as a template: a 200 HTML page that names the stand-in and sets no
/// cookie.
async fn template_of(response: Response) -> Option<Arc<Page>> {
    if response.status() != StatusCode::OK
        || !is_html(response.headers())
        || response.headers().contains_key(header::SET_COOKIE)
    {
        return None;
    }
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, MAX_PAGE).await.ok()?;
    if !signed_in_pages::is_template(std::str::from_utf8(&body).ok()?) {
        return None;
    }
    Some(Arc::new(Page {
        etag: etag_of(&body, ""),
        content_type: parts
            .headers
            .get(header::CONTENT_TYPE)
            .cloned()
            .unwrap_or_else(|| HeaderValue::from_static("text/html; charset=utf-8")),
        gzip: None,
        body,
    }))
}

/// `page` as a 200 (gzipped when it has a gzipped copy and the client takes gzip; other HTML
/// is compressed by [`compression`]), or a 304 when the client holds this version of it.
fn answer(
    page: &Page,
    if_none_match: Option<&HeaderValue>,
    shared: bool,
    gzip_ok: bool,
) -> Response {
    let cache_control = if shared { "public, no-cache" } else { PRIVATE };
    let (body, etag, encoded) = match &page.gzip {
        Some((gz, etag)) if gzip_ok => (gz, etag, true),
        _ => (&page.body, &page.etag, false),
    };
    let held = if_none_match
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if held {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        let mut r = Response::new(Body::from(body.clone()));
        r.headers_mut()
            .insert(header::CONTENT_TYPE, page.content_type.clone());
        if encoded {
            r.headers_mut()
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        r
    };
    let headers = response.headers_mut();
    headers.insert(header::ETAG, etag.clone());
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control),
    );
    headers.insert(
        header::VARY,
        HeaderValue::from_static("Cookie, Accept-Encoding, Accept-Language"),
    );
    response
}

/// Compression of HTML pages over 1 KB that are not encoded yet (signed-in pages) and of the
/// books' CSV exports (issue #55: streamed, compressed as they go), brotli or gzip at a level
/// fast enough to run per response. Nothing else: not the JSON of the buy path, not streams,
/// not the precompressed static files.
pub fn compression(
) -> tower_http::compression::CompressionLayer<impl tower_http::compression::Predicate> {
    use tower_http::compression::{
        predicate::SizeAbove, CompressionLayer, CompressionLevel, Predicate,
    };
    let html = |_: StatusCode,
                _: axum::http::Version,
                headers: &HeaderMap,
                _: &axum::http::Extensions| is_html(headers) || is_csv(headers);
    CompressionLayer::new()
        .quality(CompressionLevel::Precise(4))
        .compress_when(SizeAbove::new(1024).and(html))
}

/// Whether the request takes gzip (named, and not with `q=0`).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let named = parts
                .next()
                .is_some_and(|name| name.eq_ignore_ascii_case("gzip"));
            named
                && !parts.any(|p| {
                    matches!(
                        p.replace(' ', "").as_str(),
                        "q=0" | "q=0.0" | "q=0.00" | "q=0.000"
                    )
                })
        })
}

/// The page gzipped, and its own validator (a representation of its own).
fn gzipped(body: &[u8]) -> Option<(Bytes, HeaderValue)> {
    use std::io::Write as _;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
    encoder.write_all(body).ok()?;
    let gz = encoder.finish().ok()?;
    Some((Bytes::from(gz), etag_of(body, "-gz")))
}

/// A strong validator from the page's bytes (`suffix` names the encoding).
fn etag_of(body: &[u8], suffix: &str) -> HeaderValue {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    body.hash(&mut hasher);
    HeaderValue::from_str(&format!("\"{:016x}{suffix}\"", hasher.finish()))
        .unwrap_or_else(|_| HeaderValue::from_static("\"0\""))
}

#[cfg(test)]
mod tests;
