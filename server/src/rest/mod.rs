//! The public REST API (design.md §5): thin adapters over the core, sharing the UI's error type
//! ([`AppError`]) so both speak the same codes.

mod draws;
pub(crate) mod error;
mod events;
mod extract;
mod payments_admin;
mod voucher_json;

use axum::{
    extract::{Extension, RawQuery, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use seckill::{
    auth,
    catalog::{self, admin as sale_admin},
    domain::{FieldErrors, IdempotencyKey, NewVoucher, OrderId, Stock, VoucherId},
    orders::{self, checkout},
    sale, Core,
};
use serde::Deserialize;
use serde_json::Value;
use webapi::{
    answers::{
        Bought, Cancelled, CodeIssued, Created, DrawsHealth, Health, Live, PayStart, Received,
        SignedIn, WorkerHealth,
    },
    convert,
    error::AppError,
    http::{self as glue, ClientAddr, SessionCookie},
    wire::{OrderView, StockNow, VoucherView},
};

pub use self::error::ApiError;
use self::{
    error::{ApiJson, ApiResult},
    extract::{AdminUser, ApiPath, Shopper},
};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/health", get(health))
        .route("/live", get(live))
        .route("/login/code", post(login_code))
        .route("/login", post(login))
        .route("/logout", post(logout))
        .route("/logout/everywhere", post(logout_everywhere))
        .route("/vouchers", get(list_vouchers))
        .route("/vouchers/{id}", get(get_voucher))
        .route("/vouchers/{id}/stock", get(stock))
        .route("/vouchers/{id}/events", get(events::sale_events))
        .route("/vouchers/{id}/orders", post(buy))
        .route("/vouchers/{id}/entries", post(draws::enter))
        .route("/vouchers/{id}/entries/me", get(draws::mine))
        .route("/vouchers/{id}/draw", get(draws::transcript))
        .route("/draws/key", get(draws::key))
        .route("/orders/{order_id}", get(order))
        .route("/orders/{order_id}/pay", post(pay))
        .route("/orders/{order_id}/cancel", post(cancel))
        .route("/payments/{provider}/webhook", post(payment_webhook))
        .route("/admin/vouchers", post(create_voucher))
        .route("/admin/vouchers/{id}/end", post(end_sale))
        .route("/admin/vouchers/{id}/stock", post(add_stock))
        .route("/admin/payments", get(payments_admin::list))
        .route("/admin/orders/{id}/refund", post(payments_admin::refund))
        .fallback(not_found)
        .method_not_allowed_fallback(|| async { ApiError(AppError::MethodNotAllowed) })
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
async fn live() -> Json<Live> {
    Json(Live { live: true })
}

/// Readiness, for operators: both stores answer and orders are being written (the oldest queued
/// order is younger than `SECKILL_STALL_AFTER_MS`); 503 otherwise. Draws overdue (begun over a
/// minute ago, not recorded) are said, not failed on.
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

#[derive(Deserialize)]
struct PhoneBody {
    phone: String,
}

async fn login_code(
    State(core): State<Core>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiJson(b): ApiJson<PhoneBody>,
) -> ApiResult<Json<CodeIssued>> {
    let issued = auth::request_code(&core, client, &b.phone).await?;
    Ok(Json(CodeIssued {
        code: issued.dev_code,
    }))
}

#[derive(Deserialize)]
struct LoginBody {
    phone: String,
    code: String,
}

async fn login(
    State(core): State<Core>,
    State(cookie): State<SessionCookie>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiJson(b): ApiJson<LoginBody>,
) -> ApiResult<Response> {
    let signed = auth::sign_in(&core, client, &b.phone, &b.code).await?;
    let cookie = cookie.set(&signed.token, core.config.auth.session_ttl.as_secs());
    let body = Json(SignedIn {
        user_id: signed.principal.user.get(),
    });
    Ok(([(header::SET_COOKIE, cookie)], body).into_response())
}

async fn logout(
    State(core): State<Core>,
    State(cookie): State<SessionCookie>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    if let Some(token) = cookie.token(&headers) {
        auth::sign_out(&core, token).await.map_err(glue::fault)?;
    }
    Ok((
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, cookie.clear())],
    )
        .into_response())
}

/// Ends every session of the shopper, this one included (`204`, the cookie cleared).
async fn logout_everywhere(
    State(core): State<Core>,
    State(cookie): State<SessionCookie>,
    Shopper(p): Shopper,
) -> ApiResult<Response> {
    auth::sign_out_everywhere(&core, p.user)
        .await
        .map_err(glue::fault)?;
    Ok((
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, cookie.clear())],
    )
        .into_response())
}

async fn list_vouchers(State(core): State<Core>) -> ApiResult<Json<Vec<VoucherView>>> {
    let list = catalog::list(&core, webapi::wire::LIST_LIMIT).await?;
    Ok(Json(list.into_iter().map(convert::voucher).collect()))
}

async fn get_voucher(
    State(core): State<Core>,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Json<VoucherView>> {
    let v = catalog::get(&core, id).await?.ok_or(AppError::NotFound)?;
    Ok(Json(convert::voucher(v)))
}

/// `{"remaining","ends_at","entrants","server_time"}`: the sale's live figures from Redis alone
/// (what its stream pushes; `remaining` and `ends_at` are null while the sale is not in Redis).
async fn stock(
    State(core): State<Core>,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Json<StockNow>> {
    let live = catalog::live(&core, id).await?;
    Ok(Json(convert::stock_now(live)))
}

async fn create_voucher(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<serde_json::Map<String, Value>>,
) -> ApiResult<Response> {
    let now = chrono::Utc::now();
    let (draft, mut kinds) = voucher_json::draft(&body);
    if !kinds.is_empty() {
        // Every field's message at once: the wrong kinds, and the rules for the rest.
        if let Err(rules) = NewVoucher::parse(&draft, now) {
            for e in rules.0 {
                kinds.push(&e.field, e.message);
            }
        }
        return Err(AppError::Invalid(kinds).into());
    }
    let id = catalog::create_voucher(&core, &admin, &draft, now).await?;
    Ok((StatusCode::CREATED, Json(Created { id: id.get() })).into_response())
}

/// `202 {"order_id","already_bought"}`; a repeated buy by the same shopper answers the same,
/// with the order it already holds and `"already_bought": true`, so a client may retry a buy
/// whose reply it lost (and a page may say the shopper had bought already).
async fn buy(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(voucher): ApiPath<VoucherId>,
) -> ApiResult<Response> {
    let (order, already) = match sale::buy(&core, p.user, voucher).await {
        Ok(order) => (order, false),
        Err(sale::BuyError::AlreadyBought(order)) => (order, true),
        Err(e) => return Err(e.into()),
    };
    Ok((
        StatusCode::ACCEPTED,
        Json(Bought {
            order_id: order,
            already_bought: already,
        }),
    )
        .into_response())
}

/// One of the shopper's orders. `?payment=return`: the shopper is back from the payment
/// provider's page, which is asked about the payment first if its notification has not come
/// (at most every 2 s per order).
async fn order(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(order): ApiPath<OrderId>,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<OrderView>> {
    let returning = query
        .as_deref()
        .is_some_and(|q| q.split('&').any(|pair| pair == "payment=return"));
    if returning {
        checkout::returned(&core, p.user, order).await?;
    }
    let view = sale::order_status(&core, p.user, order)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(Json(convert::order(view)))
}

/// The request's `Idempotency-Key`, if it sent one; a malformed one is a `400`.
fn idempotency_key(headers: &HeaderMap) -> Result<Option<IdempotencyKey>, AppError> {
    headers
        .get("idempotency-key")
        .map(|v| {
            v.to_str()
                .ok()
                .and_then(|k| IdempotencyKey::try_from(k).ok())
                .ok_or_else(|| {
                    AppError::BadRequest(
                        "the Idempotency-Key header must be 1 to 100 visible ASCII characters"
                            .into(),
                    )
                })
        })
        .transpose()
}

/// `200 {"order_id","redirect_url"}`: where to send the shopper to pay (the provider's hosted
/// page). One payment per order: asking again answers the same address while it is open.
async fn pay(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(order): ApiPath<OrderId>,
) -> ApiResult<Json<PayStart>> {
    let start = checkout::pay(&core, p.user, order).await?;
    Ok(Json(PayStart {
        order_id: order,
        redirect_url: start.redirect_url,
    }))
}

/// The payment provider's notifications: `200 {"received": true}` once applied (or recognised
/// as a replay); `400 bad_signature` for anything whose signature does not hold.
async fn payment_webhook(
    State(core): State<Core>,
    ApiPath(provider): ApiPath<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Received>> {
    orders::notify::receive(&core, &provider, &headers, &body).await?;
    Ok(Json(Received { received: true }))
}

/// `200 {"order_id","status":"cancelled"}`; cancelling a cancelled order answers the same.
async fn cancel(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(order): ApiPath<OrderId>,
) -> ApiResult<Json<Cancelled>> {
    checkout::cancel(&core, p.user, order).await?;
    Ok(Json(Cancelled {
        order_id: order,
        status: "cancelled".to_owned(),
    }))
}

/// The voucher as listed, after an admin's change.
async fn voucher_now(core: &Core, id: VoucherId) -> ApiResult<Json<VoucherView>> {
    let v = catalog::get(core, id).await?.ok_or(AppError::NotFound)?;
    Ok(Json(convert::voucher(v)))
}

/// Ends a sale now: `200` with the voucher (status `ended`); ending an ended sale answers the
/// same.
async fn end_sale(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Json<VoucherView>> {
    sale_admin::end_sale(&core, &admin, id).await?;
    voucher_now(&core, id).await
}

/// `{"add": n}` adds n units (a JSON number, 1 to 10,000,000) to a sale that has not ended:
/// `200` with the voucher. An `Idempotency-Key` header makes a retry add nothing more.
async fn add_stock(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<VoucherId>,
    headers: HeaderMap,
    ApiJson(body): ApiJson<serde_json::Map<String, Value>>,
) -> ApiResult<Json<VoucherView>> {
    let key = idempotency_key(&headers)?;
    let add = match body.get("add") {
        Some(Value::Number(n)) => n
            .as_i64()
            .ok_or_else(|| "must be a whole number".to_owned())
            .and_then(Stock::try_from),
        None | Some(Value::Null) => Err("is required".to_owned()),
        Some(_) => Err("must be a number".to_owned()),
    };
    let add = add.map_err(|message| {
        let mut fields = FieldErrors::default();
        fields.push("add", message);
        AppError::Invalid(fields)
    })?;
    sale_admin::add_stock(&core, &admin, id, add, key.as_ref()).await?;
    voucher_now(&core, id).await
}
