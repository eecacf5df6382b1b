//! Requests screened before any route sees them: methods the app does not serve (`CONNECT`,
//! `TRACE`, inventions), request targets without a path (authority form), and bodies declared
//! larger than allowed are refused here with a JSON error. Leptos's handler unwraps the path of
//! every request it gets, so nothing without one may reach it.
//!
//! On the way out, refusals made by the routing layers themselves (a wrong method's empty 405,
//! an unknown server function's text 400) become the JSON error of their status, for the API
//! (`/api`, `/sf`) and for any empty-bodied refusal: a client always gets `{"error","message"}`.
//!
//! The screen is outside [`crate::localize::errors`], so its refusals say themselves in the
//! request's language; the routing layers' own words are for a developer, in the log.

use axum::{
    body::HttpBody,
    extract::{Request, State},
    http::{header, Method, StatusCode},
    middleware::Next,
    response::Response,
};
use i18n::Lang;
use webapi::error::AppError;

use crate::localize::{refusal, Malformed};

/// The largest body a request may declare.
#[derive(Clone, Copy)]
pub struct BodyLimit(pub usize);

pub async fn screen(State(limit): State<BodyLimit>, req: Request, next: Next) -> Response {
    let lang = app::words::of_request(req.headers());
    let served = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
        Method::OPTIONS,
    ];
    if !served.contains(req.method()) {
        let mut res = refusal(AppError::MethodNotAllowed, lang);
        res.headers_mut().insert(
            header::ALLOW,
            header::HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        return res;
    }
    if req.uri().path_and_query().is_none() || !req.uri().path().starts_with('/') {
        return refusal(Malformed::NotAPath.error(), lang);
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit.0 as u64) {
        return refusal(AppError::TooLarge, lang);
    }
    let api = ["/api", "/sf/"]
        .iter()
        .any(|p| req.uri().path().starts_with(p));
    let res = next.run(req).await;
    as_json_refusal(res, api, lang).await
}

/// A 4xx that is not JSON (an API path) or has no body (any path) as the JSON error of its
/// status in `lang`, keeping its headers (`Allow`).
async fn as_json_refusal(res: Response, api: bool, lang: Lang) -> Response {
    let status = res.status();
    if !status.is_client_error() {
        return res;
    }
    let is_json = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    let empty = res.body().size_hint().exact() == Some(0);
    if is_json || !(api || empty) {
        return res;
    }
    let (parts, body) = res.into_parts();
    let text = axum::body::to_bytes(body, 4 * 1024)
        .await
        .unwrap_or_default();
    let error = match status {
        StatusCode::NOT_FOUND => AppError::NotFound,
        StatusCode::METHOD_NOT_ALLOWED => AppError::MethodNotAllowed,
        StatusCode::PAYLOAD_TOO_LARGE => AppError::TooLarge,
        StatusCode::REQUEST_TIMEOUT => AppError::Timeout,
        _ => {
            let said = String::from_utf8_lossy(&text);
            tracing::debug!(
                %status,
                said = %said.lines().next().unwrap_or(""),
                "a refusal in the routing layers' words"
            );
            Malformed::Unreadable.error()
        }
    };
    let mut json = refusal(error, lang);
    *json.status_mut() = status;
    if let Some(allow) = parts.headers.get(header::ALLOW) {
        json.headers_mut().insert(header::ALLOW, allow.clone());
    }
    json
}
