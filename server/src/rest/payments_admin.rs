//! The admin's hand on the money (design.md decision 41): the payments that need an admin,
//! and refunding an order.
//!
//! - `GET /api/admin/payments?state=attention|paid|refunded&page=N`: a JSON array of
//!   `{"payment_id","order_id","voucher_id","amount_cents","currency","state","provider_ref",
//!   "updated_at"}`, newest change first, 25 to a page; `state` is one of `open`, `paid`,
//!   `flagged`, `refund_owed`, `refund_failed`, `refunded`, `disputed`. `X-Total-Count` says
//!   how many the filter selects.
//! - `POST /api/admin/orders/{id}/refund`: `202 {"order_id","state"}` with `state`
//!   `refund_pending` or `refunded` (the same again on a repeat); `409 not_paid` for an order
//!   nothing was paid for.

use axum::{
    extract::{RawQuery, State},
    http::{HeaderName, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use seckill::{
    domain::{OrderId, Page},
    orders::refund_order::{self, PaymentFilter},
    Core,
};
use webapi::{answers::RefundAsked, error::AppError};

use super::{
    error::ApiResult,
    extract::{AdminUser, ApiPath},
};

/// The filter and page a query names; an unknown filter is the caller's mistake.
fn listing_query(raw: Option<&str>) -> Result<(PaymentFilter, i64), AppError> {
    let (mut filter, mut page) = (PaymentFilter::Attention, 1);
    for pair in raw.unwrap_or_default().split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "state" => {
                filter = PaymentFilter::parse(value).ok_or_else(|| {
                    AppError::BadRequest("state must be attention, paid or refunded".into())
                })?;
            }
            "page" => page = i64::try_from(Page::parse_number(value)).unwrap_or(1),
            _ => {}
        }
    }
    Ok((filter, page))
}

#[utoipa::path(get, path = "/admin/payments", tag = "admin", security(("session" = [])),
    params(
        ("state" = Option<String>, Query, description = "`attention` (default), `paid` or `refunded`"),
        ("page" = Option<i64>, Query, description = "From 1; 25 to a page"),
    ),
    responses(
        (status = 200, description = "One page of the payments the filter selects.", body = Vec<webapi::payments::PaymentRow>,
            headers(("X-Total-Count" = i64, description = "How many the filter selects in all"))),
        (status = 403, description = "`forbidden`: not an admin.", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn list(
    State(core): State<Core>,
    AdminUser(_admin): AdminUser,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let (filter, page) = listing_query(query.as_deref())?;
    let (payments, total) = refund_order::payments(&core, filter, page).await?;
    let body: Vec<_> = payments.iter().map(webapi::convert::payment_row).collect();
    let mut res = Json(body).into_response();
    res.headers_mut().insert(
        HeaderName::from_static("x-total-count"),
        HeaderValue::from(total),
    );
    Ok(res)
}

#[utoipa::path(post, path = "/admin/orders/{id}/refund", tag = "admin", security(("session" = [])),
    params(("id" = String, Path, description = "The order's ID (a decimal string)")),
    responses(
        (status = 202, description = "The order is cancelled by the shop and its refund asked for.", body = RefundAsked),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`not_paid`: nothing was paid for this order.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn refund(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiPath(order): ApiPath<OrderId>,
) -> ApiResult<Response> {
    let state = refund_order::refund_order(&core, &admin, order).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(RefundAsked {
            order_id: order,
            state: state.as_str().to_owned(),
        }),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_query_is_read_and_an_unknown_filter_refused() {
        assert!(matches!(
            listing_query(None),
            Ok((PaymentFilter::Attention, 1))
        ));
        assert!(matches!(
            listing_query(Some("state=paid&page=3")),
            Ok((PaymentFilter::Paid, 3))
        ));
        assert!(matches!(
            listing_query(Some("page=-1&state=refunded")),
            Ok((PaymentFilter::Refunded, 1))
        ));
        assert!(listing_query(Some("state=everything")).is_err());
    }
}
