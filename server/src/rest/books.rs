//! The books out (issue #55), and the admins' actions (`GET /api/admin/actions?before=`): `GET /api/admin/orders.csv?from=&to=` and
//! `GET /api/admin/payments.csv?from=&to=`, `text/csv` with a header row, streamed as the rows are
//! read. Bounds are RFC 3339 with their offset (`+` written `%2B` in a query), or dates as a
//! form's date fields send them (the days included, in the shop's zone, `SECKILL_TIME_ZONE`); a
//! missing, malformed or backward bound is a `400 invalid` naming the field.

use axum::{
    body::Body,
    extract::{RawQuery, State},
    http::{header, HeaderValue},
    response::{IntoResponse, Response},
};
use seckill::{books, domain::Period, Core};
use webapi::error::AppError;

use super::{
    error::ApiResult,
    extract::AdminUser,
    query::{pairs, shop_midnight},
};

/// The period a query names.
fn period(raw: Option<&str>) -> Result<Period, AppError> {
    let pairs = pairs(raw)?;
    Period::parse(
        pairs.get("from").map(String::as_str),
        pairs.get("to").map(String::as_str),
        shop_midnight,
    )
    .map_err(AppError::Invalid)
}

/// The CSV answer: downloaded as `name`, never kept by a cache on the way.
fn csv(name: &str, period: Period, export: books::Export) -> Response {
    let file = format!(
        "{name}-{}-{}.csv",
        period.from().format("%Y%m%dT%H%M%SZ"),
        period.to().format("%Y%m%dT%H%M%SZ")
    );
    let mut res = Body::from_stream(export).into_response();
    let headers = res.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8; header=present"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{file}\"")) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    res
}

#[utoipa::path(get, path = "/admin/orders.csv", tag = "admin", security(("session" = [])),
    params(
        ("from" = String, Query, description = "RFC 3339 with its offset, the first admission time included; or a date, from the start of that day in the shop's zone"),
        ("to" = String, Query, description = "RFC 3339 with its offset, the first admission time after the period; or a date, to the end of that day in the shop's zone"),
    ),
    responses(
        (status = 200, description = "The orders admitted in the period, oldest first: a header row, then `order_id, admitted_at, written_at, voucher_id, voucher_title, user_id, status, price_minor, price, currency, paid_at, cancelled_at, cancelled_by, payment_state, dispute` (times in RFC 3339 UTC; `price` in the currency's major unit).", body = String, content_type = "text/csv"),
        (status = 400, description = "`invalid`: a bound missing, malformed, or `to` not after `from` (`fields` names it).", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`forbidden`: not an admin.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn orders(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let period = period(query.as_deref())?;
    let export = books::orders_csv(&core, &admin, period).await?;
    Ok(csv("orders", period, export))
}

#[utoipa::path(get, path = "/admin/payments.csv", tag = "admin", security(("session" = [])),
    params(
        ("from" = String, Query, description = "RFC 3339 with its offset, the first opening time included; or a date, from the start of that day in the shop's zone"),
        ("to" = String, Query, description = "RFC 3339 with its offset, the first opening time after the period; or a date, to the end of that day in the shop's zone"),
    ),
    responses(
        (status = 200, description = "The payments opened in the period, oldest first: a header row, then `payment_id, created_at, updated_at, order_id, voucher_id, attempt, provider, state, amount_minor, amount, currency, provider_ref, dispute, refund_error, mismatch` (`state`: `open`, `paid`, `closed`, `flagged`, `refund_due`, `refund_failed`, `refunded`).", body = String, content_type = "text/csv"),
        (status = 400, description = "`invalid`: a bound missing, malformed, or `to` not after `from` (`fields` names it).", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`forbidden`: not an admin.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn payments(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let period = period(query.as_deref())?;
    let export = books::payments_csv(&core, &admin, period).await?;
    Ok(csv("payments", period, export))
}

/// `?before=` as a keyset cursor: absent or empty, the newest page.
fn before(raw: Option<&str>) -> Result<Option<i64>, AppError> {
    let pairs = pairs(raw)?;
    match pairs.get("before").map(|b| b.trim()) {
        None | Some("") => Ok(None),
        Some(b) => b.parse::<i64>().map(Some).map_err(|_| {
            let mut fields = seckill::domain::FieldErrors::default();
            fields.push("before", "must be an action's ID (a whole number)");
            AppError::Invalid(fields)
        }),
    }
}

#[utoipa::path(get, path = "/admin/actions", tag = "admin", security(("session" = [])),
    params(("before" = Option<i64>, Query, description = "The `next` of the page before: the actions older than that ID")),
    responses(
        (status = 200, description = "The admins' actions, newest first, 50 to a page (who, what, to what, when, how it ended).", body = webapi::actions::ActionsView),
        (status = 400, description = "`invalid`: `before` is not a whole number.", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`forbidden`: not an admin.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn actions(
    State(core): State<Core>,
    AdminUser(_admin): AdminUser,
    RawQuery(query): RawQuery,
) -> ApiResult<axum::Json<webapi::actions::ActionsView>> {
    let before = before(query.as_deref())?;
    let page = seckill::auth::audit::actions(&core, before).await?;
    Ok(axum::Json(webapi::convert::actions(page)))
}
