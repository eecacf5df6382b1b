//! A draw's REST side (design.md decision 42): entering (a signed receipt), a shopper's
//! standing (receipt, inclusion proof, rank, order), the public transcript, and the key that
//! signs receipts.

use axum::{
    extract::{Extension, State},
    http::{header, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use seckill::{domain::VoucherId, draw, Core};
use webapi::{
    answers::{Entered, ReceiptKey},
    convert,
    http::ClientAddr,
    wire::EntryView,
};

use super::{
    error::ApiResult,
    extract::{ApiPath, Shopper},
};

/// `202 {"receipt": {"voucher_id","leaf","salt","entered_at","key_id","signature"}, "entrants"}`: the
/// entry is logged; entering again answers the same receipt.
#[utoipa::path(post, path = "/vouchers/{id}/entries", tag = "draws", security(("session" = [])), params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 202, description = "Entered (logged before this answer): the signed receipt and the entrants so far; entering again answers the same receipt.", body = Entered),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`not_a_draw`, `entries_not_open`, `entries_closed`.", body = crate::rest::error::ErrorBody),
        (status = 429, description = "`rate_limited`: too many entries from this address; `Retry-After`.", body = crate::rest::error::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the same request may succeed"))),
    ))]
pub async fn enter(
    State(core): State<Core>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    Shopper(p): Shopper,
    ApiPath(voucher): ApiPath<VoucherId>,
) -> ApiResult<Response> {
    let entered = draw::enter(&core, p.user, voucher, client).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(Entered {
            receipt: convert::receipt(entered.receipt),
            entrants: entered.entrants,
        }),
    )
        .into_response())
}

/// `{"state", "receipt"?, "proof"?, "order_id"?, "rank"?, "entrants", "draw_at"}`.
#[utoipa::path(get, path = "/vouchers/{id}/entries/me", tag = "draws", security(("session" = [])), params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 200, description = "The shopper's standing: receipt, inclusion proof once committed, rank once drawn.", body = EntryView),
        (status = 401, description = "`unauthenticated`.", body = crate::rest::error::ErrorBody),
        (status = 409, description = "`not_a_draw`.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn mine(
    State(core): State<Core>,
    Shopper(p): Shopper,
    ApiPath(voucher): ApiPath<VoucherId>,
) -> ApiResult<Json<EntryView>> {
    let standing = draw::standing(&core, Some(p.user), voucher).await?;
    Ok(Json(convert::entry(standing)))
}

/// The draw's transcript, each part as soon as it is fixed. Public: anyone may check a draw.
/// A drawn one's body (100,000 leaves and ranks for a large draw) is sent from memory.
#[utoipa::path(get, path = "/vouchers/{id}/draw", tag = "draws", params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 200, description = "The draw's transcript, each part as soon as it is fixed (README, \"Checking a draw\").", body = Object),
        (status = 409, description = "`not_a_draw`.", body = crate::rest::error::ErrorBody),
    ))]
pub async fn transcript(
    State(core): State<Core>,
    ApiPath(voucher): ApiPath<VoucherId>,
) -> ApiResult<Response> {
    let parts = draw::transcript_json(&core, voucher).await?;
    let body = axum::body::Body::from_stream(futures::stream::iter(
        parts.into_iter().map(Ok::<_, std::convert::Infallible>),
    ));
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// `{"ed25519": "<hex>", "id"}`: the public key the receipts of sales created now are signed
/// with, the same on every instance. A sale keeps the key its transcript names (`receipt_key`).
#[utoipa::path(get, path = "/draws/key", tag = "draws",
    responses((status = 200, description = "The Ed25519 key the receipts of sales created now are signed with; a sale keeps the key its transcript names.", body = ReceiptKey)))]
pub async fn key(State(core): State<Core>) -> Json<ReceiptKey> {
    let public = core.config.draw.receipt_key.public();
    Json(ReceiptKey {
        ed25519: hex::encode(public),
        id: seckill::domain::fair::key_id(&public),
    })
}
