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

/// `202 {"receipt": {"voucher_id","leaf","salt","entered_at","signature"}, "entrants"}`: the
/// entry is logged; entering again answers the same receipt.
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

/// `{"ed25519": "<hex>"}`: the public key receipts are signed with, the same on every instance.
pub async fn key(State(core): State<Core>) -> Json<ReceiptKey> {
    Json(ReceiptKey {
        ed25519: core.config.draw.receipt_key.public_hex(),
    })
}
