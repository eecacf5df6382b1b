//! Units coming back on sale, announced to every instance: a cancellation's or a top-up's move,
//! a failed write's unit, a sale rebuilt from PostgreSQL each `PUBLISH` the voucher's ID on one
//! channel; each instance keeps one subscription (classic pub/sub on a seed node, which hears a
//! `PUBLISH` made on any master of a cluster) and forgets that sale's refusal.

use std::time::Duration;

use futures::StreamExt;
use redis::AsyncCommands;
use tokio_util::sync::CancellationToken;

use crate::{domain::VoucherId, Core};

/// Announces that units of `voucher` came back on sale: this instance forgets the sale's
/// refusal at once, the others when the message reaches them. Best effort: a lost message
/// leaves the refusal to expire on its own.
pub async fn announce_stock_back(core: &Core, voucher: VoucherId) {
    core.refusals.remove(&voucher);
    let mut redis = core.redis.clone();
    let sent: Result<i64, _> = redis
        .publish(core.keys.stock_back_channel(), voucher.get())
        .await;
    if let Err(e) = sent {
        tracing::warn!(%voucher, error = %e, "announcing stock back; refusals expire on their own");
    }
}

/// Keeps this instance's subscription until `shutdown`, reconnecting after a drop. Every
/// (re)subscription forgets every refusal: messages may have been missed meanwhile.
pub async fn listen(core: Core, shutdown: CancellationToken) {
    let channel = core.keys.stock_back_channel();
    loop {
        let mut subscribed = None;
        for client in core.redis_deployment().seed_clients() {
            let opened =
                tokio::time::timeout(Duration::from_secs(2), client.get_async_pubsub()).await;
            if let Ok(Ok(mut pubsub)) = opened {
                if pubsub.subscribe(&channel).await.is_ok() {
                    subscribed = Some(pubsub);
                    break;
                }
            }
        }
        if let Some(pubsub) = subscribed {
            core.refusals.clear();
            let mut messages = pubsub.into_on_message();
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    next = messages.next() => match next {
                        Some(m) => {
                            let id = m.get_payload::<i64>().ok().and_then(|id| VoucherId::try_from(id).ok());
                            if let Some(v) = id {
                                core.refusals.remove(&v);
                            }
                        }
                        None => break,
                    },
                }
            }
            tracing::warn!("stock-back subscription dropped; resubscribing");
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
}
