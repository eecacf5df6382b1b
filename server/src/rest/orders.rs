//! A shopper's orders: one order, paying it, cancelling it; and the payment provider's
//! notifications.

use axum::{
    extract::{RawQuery, State},
    http::HeaderMap,
    Json,
};
use seckill::{
    domain::OrderId,
    orders::{self, checkout},
    sale, Core,
};
use webapi::{
    answers::{Cancelled, PayStart, Received},
    convert,
    error::AppError,
    wire::OrderView,
};

use super::{
    error::ApiResult,
    extract::{ApiPath, Shopper},
};

/// One of the shopper's orders. `?payment=return`: the shopper is back from the payment
/// provider's page, which is asked about the payment first if its notification has not come
/// (at most every 2 s per order).
#[utoipa::path(get, path = "/orders/{order_id}", tag = "orders", security(("session" = [])),
    params(
        ("order_id" = String, Path, description = "The order's ID (a decimal string)"),
        ("payment" = Option<String>, Query, description = "`return`: back from the payment page; the provider is asked first if its notification has not come."),
    ),
    responses(
        (status = 200, description = "The order as it is now.", body = OrderView),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn order(
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

/// `200 {"order_id","redirect_url"}`: where to send the shopper to pay (the provider's hosted
/// page). One payment per order: asking again answers the same address while it is open.
#[utoipa::path(post, path = "/orders/{order_id}/pay", tag = "orders", security(("session" = [])), params(("order_id" = String, Path, description = "The order's ID (a decimal string)")),
    responses(
        (status = 200, description = "Where to pay (the provider's hosted page); asking again answers the same while it is open.", body = PayStart),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`order_queued`, `order_failed`, `order_cancelled`, `payment_expired`, `already_paid`, `order_confirmed`.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn pay(
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
#[utoipa::path(post, path = "/payments/{provider}/webhook", tag = "webhooks",
    params(("provider" = String, Path, description = "`stripe` (signed with `Stripe-Signature`) or `dev`")),
    request_body(content = String, content_type = "application/json", description = "The provider's event, as it signed it."),
    responses(
        (status = 200, description = "Applied, or recognised as a replay.", body = Received),
        (status = 400, description = "`bad_signature`: the signature does not hold; nothing was read.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn payment_webhook(
    State(core): State<Core>,
    ApiPath(provider): ApiPath<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> ApiResult<Json<Received>> {
    orders::notify::receive(&core, &provider, &headers, &body).await?;
    Ok(Json(Received { received: true }))
}

/// `200 {"order_id","status":"cancelled"}`; cancelling a cancelled order answers the same.
#[utoipa::path(post, path = "/orders/{order_id}/cancel", tag = "orders", security(("session" = [])), params(("order_id" = String, Path, description = "The order's ID (a decimal string)")),
    responses(
        (status = 200, description = "Cancelled (cancelling a cancelled order answers the same); its unit is back on sale.", body = Cancelled),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`order_queued`, `order_failed`, `already_paid`, `order_confirmed`.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn cancel(
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
