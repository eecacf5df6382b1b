//! `GET /api/admin/vouchers?q=&status=&from=&to=&cursor=&limit=`: every sale ever run, found by
//! an admin, newest first (by start), a page at a time (issue #55).

use axum::{
    extract::{RawQuery, State},
    Json,
};
use seckill::{catalog, domain::SaleQuery, Core};
use webapi::{error::AppError, sales::SalesView};

use super::{
    error::ApiResult,
    extract::AdminUser,
    query::{pairs, shop_midnight},
};

#[utoipa::path(get, path = "/admin/vouchers", operation_id = "find_vouchers", tag = "admin", security(("session" = [])),
    params(
        ("q" = Option<String>, Query, description = "A part of the title, any case (up to 100 characters)"),
        ("status" = Option<String>, Query, description = "`upcoming`, `on_sale` or `ended`, by the sale's window (a sold-out sale is on sale until its end)"),
        ("from" = Option<String>, Query, description = "Sales that start at or after this: RFC 3339 with its offset, or a date (from the start of that day in the shop's zone)"),
        ("to" = Option<String>, Query, description = "Sales that start before this: RFC 3339 with its offset, or a date (to the end of that day in the shop's zone)"),
        ("cursor" = Option<String>, Query, description = "The `next` of the page before"),
        ("limit" = Option<i64>, Query, description = "Sales on a page, 1 to 100 (25 by default)"),
    ),
    responses(
        (status = 200, description = "A page of the sales that match, newest first (by start, then ID), with `next` for the older ones (`null` on the last page).", body = SalesView),
        (status = 400, description = "`invalid`: `fields` names each parameter that is not one this API takes.", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`forbidden`: not an admin.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn find(
    State(core): State<Core>,
    AdminUser(_admin): AdminUser,
    RawQuery(query): RawQuery,
) -> ApiResult<Json<SalesView>> {
    let pairs = pairs(query.as_deref())?;
    let asked = SaleQuery::parse(|k| pairs.get(k).map(String::as_str), shop_midnight)
        .map_err(AppError::Invalid)?;
    let found = catalog::find(&core, &asked, chrono::Utc::now()).await?;
    Ok(Json(webapi::convert::sales(found)))
}
