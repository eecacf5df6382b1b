//! Requests screened before any route sees them: methods the app does not serve (`CONNECT`,
//! `TRACE`, inventions), request targets without a path (authority form), and bodies declared
//! larger than allowed are refused here with a JSON error. Leptos's handler unwraps the path of
//! every request it gets, so nothing without one may reach it.

use app::error::AppError;
use axum::{
    extract::{Request, State},
    http::{header, Method},
    middleware::Next,
    response::{IntoResponse, Response},
};

use crate::rest::ApiError;

/// The largest body a request may declare.
#[derive(Clone, Copy)]
pub struct BodyLimit(pub usize);

pub async fn screen(State(limit): State<BodyLimit>, req: Request, next: Next) -> Response {
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
        let mut res = ApiError(AppError::MethodNotAllowed).into_response();
        res.headers_mut().insert(
            header::ALLOW,
            header::HeaderValue::from_static("GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"),
        );
        return res;
    }
    if req.uri().path_and_query().is_none() || !req.uri().path().starts_with('/') {
        return ApiError(AppError::BadRequest(
            "the request target must be a path".into(),
        ))
        .into_response();
    }
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit.0 as u64) {
        return ApiError(AppError::TooLarge).into_response();
    }
    next.run(req).await
}
