//! The public REST API (design.md §5): thin adapters over the core, sharing the UI's error type
//! ([`AppError`]) so both speak the same codes.

mod auth;
mod books;
mod doc;
mod draws;
pub(crate) mod error;
mod events;
mod extract;
mod orders;
mod payments_admin;
mod query;
mod reminders;
mod sales;
mod voucher_json;
mod vouchers;

use axum::{
    extract::State,
    http::{header, StatusCode},
    response::{IntoResponse, Response},
    Json, Router,
};
use seckill::Core;
use utoipa::OpenApi;
use utoipa_axum::{router::OpenApiRouter, routes};
use webapi::{
    answers::{DrawsHealth, Health, Live, RemindersHealth, WorkerHealth},
    error::AppError,
};

pub use self::error::ApiError;
use crate::state::AppState;

/// The REST routes and the OpenAPI document made from the same registration: a route is
/// added here with its `#[utoipa::path]` description or not at all (design.md decision 45).
pub fn router() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, api) = OpenApiRouter::with_openapi(doc::ApiDoc::openapi())
        .routes(routes!(health))
        .routes(routes!(live))
        .routes(routes!(auth::login_code))
        .routes(routes!(auth::login))
        .routes(routes!(auth::logout))
        .routes(routes!(auth::logout_everywhere))
        .routes(routes!(vouchers::list_vouchers))
        .routes(routes!(vouchers::get_voucher))
        .routes(routes!(vouchers::stock))
        .routes(routes!(events::sale_events))
        .routes(routes!(vouchers::buy))
        .routes(routes!(reminders::ask, reminders::cancel))
        .routes(routes!(draws::enter))
        .routes(routes!(draws::mine))
        .routes(routes!(draws::transcript))
        .routes(routes!(draws::key))
        .routes(routes!(orders::order))
        .routes(routes!(orders::pay))
        .routes(routes!(orders::cancel))
        .routes(routes!(orders::payment_webhook))
        .routes(routes!(sales::find))
        .routes(routes!(vouchers::create_voucher))
        .routes(routes!(vouchers::edit_voucher))
        .routes(routes!(vouchers::end_sale))
        .routes(routes!(vouchers::add_stock))
        .routes(routes!(payments_admin::list))
        .routes(routes!(payments_admin::refund))
        .routes(routes!(books::orders))
        .routes(routes!(books::payments))
        .routes(routes!(books::actions))
        .routes(routes!(openapi_json))
        .routes(routes!(docs_page))
        .split_for_parts();
    let api = doc::finish(api);
    // The same for every instance in a process: the first one built is served.
    let _ = DOCUMENT.set(doc::with_webhooks(&api));
    let router = router
        .fallback(not_found)
        .method_not_allowed_fallback(|| async { ApiError(AppError::MethodNotAllowed) });
    (router, api)
}

/// The docs page: Redoc (vendored from npm into the site's static files by `scripts/build.sh`,
/// `/pkg/api-docs.js`) reading this API's document. No inline script; its policy lets nothing
/// from elsewhere in.
const DOCS_PAGE: &str = r#"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Seckill REST API</title>
</head>
<body>
<redoc spec-url="/api/openapi.json" hide-download-button></redoc>
<script src="/pkg/api-docs.js"></script>
</body>
</html>
"#;

/// This API's documentation, for people.
#[utoipa::path(get, path = "/docs", tag = "health",
    responses((status = 200, description = "A page rendering this document (Redoc).", content_type = "text/html", body = String)))]
async fn docs_page() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=300"),
            // Redoc's footer names its maker with an image from its CDN: the page fetches
            // nothing from elsewhere (its styles are injected, its search runs in a worker).
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
                 worker-src 'self' blob:; font-src 'self' data:; base-uri 'none'; \
                 form-action 'none'; frame-ancestors 'none'",
            ),
        ],
        DOCS_PAGE,
    )
        .into_response()
}

/// The document as served, made once at start-up.
static DOCUMENT: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// This document.
#[utoipa::path(get, path = "/openapi.json", tag = "health",
    responses((status = 200, description = "The OpenAPI 3.1 document of this API.", content_type = "application/json", body = Object)))]
async fn openapi_json() -> Response {
    (
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CACHE_CONTROL, "public, max-age=60"),
        ],
        DOCUMENT.get().cloned().unwrap_or_default(),
    )
        .into_response()
}

/// Any path under `/api` that names nothing.
pub async fn not_found() -> ApiError {
    ApiError(AppError::NotFound)
}

/// Liveness, for a load balancer: this process serves requests. It does not ask the stores: a
/// shared Redis or PostgreSQL that is down would take every instance out of rotation at once,
/// and shoppers would get the balancer's bare 503 instead of the instances' JSON answers.
/// Liveness, for the load balancer: the process serves. It names no host or instance (anyone
/// may ask).
#[utoipa::path(get, path = "/live", tag = "health",
    responses((status = 200, description = "The process serves.", body = Live)))]
async fn live() -> Json<Live> {
    Json(Live { live: true })
}

/// Readiness, for operators: both stores answer and orders are being written (the oldest queued
/// order is younger than `SECKILL_STALL_AFTER_MS`); 503 otherwise. Draws overdue (begun over a
/// minute ago, not recorded) are said, not failed on.
#[utoipa::path(get, path = "/health", tag = "health",
    responses(
        (status = 200, description = "Both stores answer and orders are being written.", body = Health),
        (status = 503, description = "A store is out of reach or the order writer has stalled (the same body says which).", body = Health),
    ))]
async fn health(State(core): State<Core>) -> Response {
    let h = core.health().await;
    let status = if h.ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let oldest_ms = h
        .oldest_queued
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let body = Health {
        postgres: h.postgres,
        redis: h.redis,
        worker: WorkerHealth {
            oldest_queued_ms: oldest_ms,
            stalled: h.stalled,
        },
        draws: DrawsHealth {
            overdue: h.draws_overdue,
        },
        reminders: RemindersHealth {
            overdue: h.reminders_overdue,
        },
    };
    (status, Json(body)).into_response()
}

pub async fn metrics(State(state): State<AppState>) -> Response {
    match &state.metrics {
        Some(h) => {
            // Refreshes the gauges read at scrape time (the queue's lag).
            state.core.health().await;
            (
                [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
                h.render(),
            )
                .into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
