//! `GET /api/vouchers/{id}/events`: a sale's live stock and end as Server-Sent Events, for its
//! open pages (design.md §8, decision 20). The first event carries the figures now, each later one a
//! change (`seckill::jobs::live_push` reads the watched sales once per period for the whole instance); a
//! comment every 15 s keeps proxies from closing a quiet stream. The stream ends when the
//! instance shuts down; the page then falls back to asking, as it does on any stream error.

use std::{convert::Infallible, time::Duration};

use axum::{
    extract::{Extension, State},
    response::{
        sse::{Event, KeepAlive, Sse},
        IntoResponse, Response,
    },
};
use futures::Stream;
use seckill::{catalog, domain::VoucherId, sale::SaleFeed, Core};
use webapi::{convert, error::AppError, http::ClientAddr};

use crate::streams::{StreamSlot, StreamSlots};

use super::{error::ApiResult, extract::ApiPath};

/// How often a quiet stream sends a comment (below HAProxy's 30 s client timeout).
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// One event of the stream, as the document describes each (OpenAPI 3.1: the schema of a
/// `text/event-stream` answer is an event's).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)] // A schema only: the events are written by `events` below.
struct SaleEvent {
    /// Always `stock`.
    event: String,
    /// The sale's figures, as JSON: a `StockNow` (the same as `GET /api/vouchers/{id}/stock`).
    data: String,
}

#[utoipa::path(get, path = "/vouchers/{id}/events", tag = "vouchers", params(("id" = i64, Path, description = "The voucher's ID")),
    responses(
        (status = 200, description = "Server-Sent Events: a `stock` event with the sale's figures (as `GET …/stock`) at once and on each change.", content_type = "text/event-stream", body = SaleEvent),
        (status = 429, description = "`rate_limited`: too many streams open from this address.", body = crate::rest::error::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the same request may succeed"))),
    ))]
pub async fn sale_events(
    State(core): State<Core>,
    State(slots): State<StreamSlots>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiPath(id): ApiPath<VoucherId>,
) -> ApiResult<Response> {
    let slot = slots.take(client).ok_or(AppError::TooManyStreams)?;
    let now = catalog::live(&core, id).await?;
    // A sale not in Redis (upcoming and not yet preloaded, or over) may still be a voucher.
    if now.is_none() && catalog::get(&core, id).await?.is_none() {
        return Err(AppError::NotFound.into());
    }
    let feed = core.live.watch(id, now);
    Ok(Sse::new(events(feed, slot))
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response())
}

/// The figures now, then each change, until the feed closes (shutdown); the client's slot is
/// held as long as the stream.
fn events(feed: SaleFeed, slot: StreamSlot) -> impl Stream<Item = Result<Event, Infallible>> {
    futures::stream::unfold((feed, slot, true), |(mut feed, slot, first)| async move {
        if !first && feed.changed().await.is_err() {
            return None;
        }
        let live = *feed.borrow_and_update();
        let data = serde_json::to_string(&convert::stock_now(live)).unwrap_or_default();
        Some((
            Ok(Event::default().event("stock").data(data)),
            (feed, slot, false),
        ))
    })
}
