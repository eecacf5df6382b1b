//! Every request body is read whole before any route sees it: within one total deadline
//! (`SECKILL_BODY_TIMEOUT_MS`, from the request head to the body's last byte, so a client
//! trickling a byte at a time cannot hold a connection for long) and under the size limit
//! (`SECKILL_MAX_BODY_BYTES`, for a body that declares no length). A late body answers
//! `408 timeout`, an oversized one `413 too_large`, both as JSON and closing the connection.
//! The bodies this server takes are small forms and JSON, so holding one in memory costs what
//! the limit allows.

use std::time::Duration;

use axum::{
    body::{Body, HttpBody},
    extract::{Request, State},
    http::{header, HeaderValue},
    middleware::Next,
    response::{IntoResponse, Response},
};
use futures::StreamExt;
use webapi::error::AppError;

use crate::{localize::Malformed, rest::ApiError};

/// What a request body may take.
#[derive(Debug, Clone, Copy)]
pub struct BodyRules {
    pub deadline: Duration,
    pub max_bytes: usize,
}

pub async fn whole_body(State(rules): State<BodyRules>, req: Request, next: Next) -> Response {
    if req.body().size_hint().exact() == Some(0) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    match tokio::time::timeout(rules.deadline, collect(body, rules.max_bytes)).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Ok(Err(refusal)) => closing(refusal),
        Err(_) => {
            tracing::debug!(path = parts.uri.path(), "request body late");
            closing(AppError::Timeout)
        }
    }
}

async fn collect(body: Body, max_bytes: usize) -> Result<Vec<u8>, AppError> {
    let mut data = body.into_data_stream();
    let mut bytes = Vec::new();
    while let Some(chunk) = data.next().await {
        let chunk = chunk.map_err(|e| {
            tracing::debug!(error = %e, "request body cut off");
            Malformed::CutOff.error()
        })?;
        if bytes.len() + chunk.len() > max_bytes {
            return Err(AppError::TooLarge);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(bytes)
}

/// The refusal, with the connection closed after it: the rest of the body is not read.
fn closing(refusal: AppError) -> Response {
    let mut res = ApiError(refusal).into_response();
    res.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    res
}
