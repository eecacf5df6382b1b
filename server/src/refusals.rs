//! Server-function refusals with their own status. A server function's error leaves the
//! framework as a 500 with its encoded [`AppError`]; this layer reads the error back and gives
//! the response the status the REST API uses for it (401, 403, 404, 409, 429, 400, 503…), so a
//! refusal is never a server error in the logs or the monitoring. The browser's client decodes
//! any 4xx or 5xx body the same way, and a plain form post's 302 back to its page is untouched.

use axum::{
    body::Body,
    extract::Request,
    http::{header, HeaderValue, StatusCode},
    middleware::Next,
    response::Response,
};
use webapi::error::AppError;

/// The header server functions mark their error responses with.
const SERVER_FN_ERROR: &str = "serverfnerror";
/// An encoded error is a few hundred bytes; anything larger is left as it is.
const MAX_ERROR_BYTES: usize = 64 * 1024;

pub async fn refusal_status(req: Request, next: Next) -> Response {
    let res = next.run(req).await;
    if res.status() != StatusCode::INTERNAL_SERVER_ERROR
        || !res.headers().contains_key(SERVER_FN_ERROR)
    {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_ERROR_BYTES).await else {
        return Response::from_parts(parts, Body::empty());
    };
    if let Ok(error) = serde_json::from_slice::<AppError>(&bytes) {
        parts.status =
            StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        if let Some(secs) = error.retry_after() {
            parts
                .headers
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        if parts.status.is_client_error() {
            tracing::debug!(code = error.code(), "server function refused");
        }
    }
    Response::from_parts(parts, Body::from(bytes))
}
