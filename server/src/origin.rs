//! Cross-site requests refused (design.md §8, decision 24): a request that changes something
//! (any method but `GET`, `HEAD` and `OPTIONS`) to the API (`/api/…`) or a server function
//! (`/sf/…`) whose `Origin` names another site than this shop's, or that the browser marks
//! `Sec-Fetch-Site: cross-site`, answers 403 `cross_site` before any handler runs: a forged
//! form or script on another site (a sibling subdomain, another port) cannot buy, cancel, end a
//! sale or sign a visitor in. A request without either header (a program, not a browser) goes
//! on; browsers send `Origin` with every such request.

use std::{net::SocketAddr, sync::Arc};

use axum::{
    extract::{Request, State},
    http::{header, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};
use webapi::{error::AppError, http::SessionCookie};

use crate::rest::ApiError;

/// The origins this shop is served under (`scheme://host[:port]`, lower case, no path).
#[derive(Debug, Clone)]
pub struct SiteOrigins(Arc<Vec<String>>);

impl SiteOrigins {
    /// `SECKILL_PUBLIC_ORIGIN`'s comma-separated origins; without it, the listening address
    /// over HTTP (and `localhost` for a loopback address, as browsers name it either way).
    pub fn new(public: &[String], listening: SocketAddr) -> Self {
        if !public.is_empty() {
            return Self(Arc::new(public.iter().map(|o| normalise(o)).collect()));
        }
        let mut own = vec![format!("http://{listening}")];
        if listening.ip().is_loopback() {
            own.push(format!("http://localhost:{}", listening.port()));
        }
        Self(Arc::new(own))
    }

    /// Whether `origin` (an `Origin` header's value) is one of the shop's.
    pub fn contains(&self, origin: &str) -> bool {
        let origin = normalise(origin);
        self.0.contains(&origin)
    }

    /// The session cookie these origins call for: secure when every one is `https://` (a
    /// browser would not send a `Secure` cookie to a plain `http://` one).
    pub fn session_cookie(&self) -> SessionCookie {
        SessionCookie::new(self.0.iter().all(|o| o.starts_with("https://")))
    }

    /// The origins, for the start-up line.
    pub fn list(&self) -> String {
        self.0.join(", ")
    }
}

/// An origin as compared: trimmed, without a trailing `/`, scheme and host in lower case.
fn normalise(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

/// Whether the request comes from another site, by the headers browsers send.
fn cross_site(req: &Request, origins: &SiteOrigins) -> bool {
    let headers = req.headers();
    let fetch_site = headers
        .get("sec-fetch-site")
        .and_then(|v| v.to_str().ok())
        .map(str::to_ascii_lowercase);
    if fetch_site.as_deref() == Some("cross-site") {
        return true;
    }
    match headers.get(header::ORIGIN) {
        // `Origin: null` (a sandboxed frame, a data: page) is no site of ours either.
        Some(origin) => origin.to_str().map_or(true, |o| !origins.contains(o)),
        None => false,
    }
}

/// `/api/payments/{provider}/webhook`.
fn is_webhook(path: &str) -> bool {
    path.strip_prefix("/api/payments/")
        .and_then(|rest| rest.strip_suffix("/webhook"))
        .is_some_and(|provider| !provider.is_empty() && !provider.contains('/'))
}

pub async fn same_site_only(
    State(origins): State<SiteOrigins>,
    req: Request,
    next: Next,
) -> Response {
    let reads = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    let path = req.uri().path();
    // A payment provider's webhook is signed, carries no cookie and comes from the provider's
    // servers, not a page: its signature is its guard (`orders::notify`).
    let guarded = ["/api/", "/sf/"].iter().any(|p| path.starts_with(p)) && !is_webhook(path);
    if !reads && guarded && cross_site(&req, &origins) {
        tracing::info!(
            method = %req.method(),
            path = req.uri().path(),
            origin = ?req.headers().get(header::ORIGIN),
            "cross-site request refused"
        );
        return ApiError(AppError::CrossSite).into_response();
    }
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_payment_webhooks_are_exempt() {
        assert!(is_webhook("/api/payments/stripe/webhook"));
        for other in [
            "/api/payments//webhook",
            "/api/payments/stripe/webhook/x",
            "/api/payments/a/b/webhook",
            "/api/orders/1/pay",
            "/sf/pay_order",
        ] {
            assert!(!is_webhook(other), "{other}");
        }
    }

    #[test]
    fn the_listening_address_is_the_default_origin() {
        let o = SiteOrigins::new(&[], "127.0.0.1:3000".parse().expect("addr"));
        assert!(o.contains("http://127.0.0.1:3000"));
        assert!(o.contains("http://localhost:3000"));
        assert!(o.contains("HTTP://LOCALHOST:3000/"));
        for other in [
            "http://127.0.0.1:3001",
            "https://127.0.0.1:3000",
            "http://evil.example",
            "http://127.0.0.1:3000.evil.example",
            "null",
            "",
        ] {
            assert!(!o.contains(other), "{other}");
        }
    }

    #[test]
    fn a_public_origin_replaces_the_default() {
        let public = vec![
            "https://shop.example".to_owned(),
            "https://www.shop.example/".to_owned(),
        ];
        let o = SiteOrigins::new(&public, "127.0.0.1:3101".parse().expect("addr"));
        assert!(o.contains("https://shop.example"));
        assert!(o.contains("https://www.shop.example"));
        assert!(!o.contains("http://127.0.0.1:3101"));
        assert_eq!(o.session_cookie().name(), "__Host-seckill_session");
        let mixed = vec![
            "https://shop.example".to_owned(),
            "http://127.0.0.1:3101".to_owned(),
        ];
        let mixed = SiteOrigins::new(&mixed, "127.0.0.1:3101".parse().expect("addr"));
        assert_eq!(mixed.session_cookie().name(), "seckill_session");
        let plain = SiteOrigins::new(&[], "127.0.0.1:3000".parse().expect("addr"));
        assert_eq!(plain.session_cookie().name(), "seckill_session");
        assert!(!o.contains("https://sub.shop.example"));
    }
}
