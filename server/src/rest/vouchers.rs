//! Vouchers: the list, one voucher and its live figures, an admin's creating, ending and
//! adding stock, and a shopper's buy.

use axum::{
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use seckill::{
    catalog::{self, admin as sale_admin},
    domain::{FieldErrors, IdempotencyKey, NewVoucher, Stock, VoucherId},
    sale, Core,
};
use serde_json::Value;
use webapi::{
    answers::{Bought, Created},
    convert,
    error::AppError,
    wire::{StockNow, VoucherView},
};

use super::{
    error::{ApiJson, ApiResult},
    extract::{AdminUser, ApiPath, Shopper},
    voucher_json::{self, NewVoucherBody, VoucherPatchBody},
};

/// `{"add": n}`: the units to add, a JSON number from 1 to 10,000,000.
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // The schema of the body `add_stock` reads field by field.
pub(super) struct AddStockBody {
    #[schema(minimum = 1, maximum = 10_000_000)]
    add: i64,
}

#[utoipa::path(get, path = "/vouchers", tag = "vouchers",
    responses((status = 200, description = "The sales not yet ended first, then the latest ended ones (200 at most).", body = Vec<VoucherView>)))]
pub(super) async fn list_vouchers(State(core): State<Core>) -> ApiResult<Json<Vec<VoucherView>>> {
    let list = catalog::list(&core, webapi::wire::LIST_LIMIT).await?;
    Ok(Json(list.into_iter().map(convert::voucher).collect()))
}

#[utoipa::path(get, path = "/vouchers/{id}", tag = "vouchers", params(("id" = i64, Path, description = "The voucher's ID")),
    responses((status = 200, description = "The voucher.", body = VoucherView)))]
pub(super) async fn get_voucher(
    State(core): State<Core>,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Json<VoucherView>> {
    let v = catalog::get(&core, id).await?.ok_or(AppError::NotFound)?;
    Ok(Json(convert::voucher(v)))
}

/// `{"remaining","ends_at","entrants","server_time"}`: the sale's live figures from Redis alone
/// (what its stream pushes; `remaining` and `ends_at` are null while the sale is not in Redis);
/// `404` for no voucher, as its stream answers.
#[utoipa::path(get, path = "/vouchers/{id}/stock", tag = "vouchers", params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 200, description = "The sale's live figures from Redis (what its stream pushes).", body = StockNow),
        (status = 404, description = "`not_found`: no such voucher.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn stock(
    State(core): State<Core>,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Json<StockNow>> {
    let live = catalog::live(&core, id).await?;
    // A sale not in Redis (upcoming and not yet preloaded, or over) may still be a voucher.
    if live.is_none() && catalog::get(&core, id).await?.is_none() {
        return Err(AppError::NotFound.into());
    }
    Ok(Json(convert::stock_now(live)))
}

#[utoipa::path(post, path = "/admin/vouchers", tag = "admin", security(("session" = [])),
    request_body = NewVoucherBody,
    responses(
        (status = 201, description = "Created: stored, and its sale preloaded into Redis (or, when Redis did not take it then, by the next sweep or its first buy).", body = Created),
        (status = 400, description = "`invalid`: `fields` names each field that needs attention; `bad_request`: not a JSON object.", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn create_voucher(
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

/// Edits a sale before it opens: any of the creation body's fields (a missing or `null` one is
/// left as it is), by the same rules; `200` with the voucher as `GET /api/vouchers/{id}`
/// answers it.
#[utoipa::path(patch, path = "/admin/vouchers/{id}", operation_id = "edit_voucher", tag = "admin", security(("session" = [])),
    params(("id" = i64, Path, description = "The voucher's ID")),
    request_body(content = VoucherPatchBody, description = "Any of the creation body's fields."),
    responses(
        (status = 200, description = "Edited: the voucher as it is now, on every instance.", body = VoucherView),
        (status = 400, description = "`invalid`: `fields` names each field that needs attention (a draw's opening and start are part of its published commitment); `bad_request`: not a JSON object.", body = crate::rest::error::ErrorBody),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`ended`: the sale has ended.", body = crate::rest::error::ErrorBody),
        (status = 404, description = "`not_found`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`sale_started`: the sale has started, or its draw's entries are open: nothing was changed.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn edit_voucher(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<VoucherId>,
    ApiJson(body): ApiJson<serde_json::Map<String, Value>>,
) -> ApiResult<Json<VoucherView>> {
    let (patch, kinds) = voucher_json::patch(&body);
    if !kinds.is_empty() {
        return Err(AppError::Invalid(kinds).into());
    }
    catalog::edit_voucher(&core, &admin, id, &patch, chrono::Utc::now()).await?;
    voucher_now(&core, id).await
}

/// `202 {"order_id","already_bought"}`; a repeated buy by the same shopper answers the same,
/// with the order it already holds and `"already_bought": true`, so a client may retry a buy
/// whose reply it lost (and a page may say the shopper had bought already).
#[utoipa::path(post, path = "/vouchers/{id}/orders", tag = "vouchers", security(("session" = [])), params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 202, description = "Admitted: the order's ID at once (written moments later); a repeated buy answers the order held, `already_bought`.", body = Bought),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`not_started`, `ended`: outside the sale's window; `cross_site`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`sold_out`; `draw_pending`: a draw sale before its draw.", body = crate::rest::error::ErrorBody),
        (status = 429, description = "`rate_limited`: too many buys from this shopper; `Retry-After`.", body = crate::rest::error::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the same request may succeed"))),
    ))]
pub(super) async fn buy(
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

/// The voucher as listed, after an admin's change.
pub(super) async fn voucher_now(core: &Core, id: VoucherId) -> ApiResult<Json<VoucherView>> {
    let v = catalog::get(core, id).await?.ok_or(AppError::NotFound)?;
    Ok(Json(convert::voucher(v)))
}

/// Ends a sale now: `200` with the voucher (status `ended`); ending an ended sale answers the
/// same.
#[utoipa::path(post, path = "/admin/vouchers/{id}/end", tag = "admin", security(("session" = [])), params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 200, description = "Ended now (ending an ended sale answers the same).", body = VoucherView),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`draw_committed`: a draw sale whose entry list is committed ends only after its ranking is published.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn end_sale(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Json<VoucherView>> {
    sale_admin::end_sale(&core, &admin, id).await?;
    voucher_now(&core, id).await
}

/// `{"add": n}` adds n units (a JSON number, 1 to 10,000,000) to a sale that has not ended:
/// `200` with the voucher. An `Idempotency-Key` header makes a retry add nothing more.
#[utoipa::path(post, path = "/admin/vouchers/{id}/stock", tag = "admin", security(("session" = [])),
    params(
        ("id" = i64, Path, description = "The voucher's ID"),
        ("Idempotency-Key" = Option<String>, Header, description = "1 to 100 visible ASCII characters: a retry with the same key adds nothing more."),
    ),
    request_body = AddStockBody,
    responses(
        (status = 200, description = "Added: the voucher as it is now.", body = VoucherView),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 403, description = "`ended`: the sale has ended (nothing was added).", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn add_stock(
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

/// The request's `Idempotency-Key`, if it sent one; a malformed one is a `400`.
pub(super) fn idempotency_key(headers: &HeaderMap) -> Result<Option<IdempotencyKey>, AppError> {
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
