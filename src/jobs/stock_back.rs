//! The stock-back subscription: units coming back on sale (a cancellation's or a top-up's move, a
//! failed write's unit, a sale rebuilt from PostgreSQL) are announced by a `PUBLISH` of the
//! voucher's ID on one channel ([`crate::sale::announce_stock_back`]); each instance keeps one
//! subscription (classic pub/sub on a seed node, which hears a `PUBLISH` made on any master of a
//! cluster) and forgets that sale's refusal (design.md §8, decision 17).

use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::{domain::VoucherId, infra::redis_conn::CONNECT_TIMEOUT, Core};

/// Keeps this instance's subscription until `shutdown`, reconnecting after a drop. Every
/// (re)subscription forgets every refusal: messages may have been missed meanwhile.
pub async fn listen(core: Core, shutdown: CancellationToken) {
    let channel = core.keys.stock_back_channel();
    loop {
        let mut subscribed = None;
        for client in core.redis_deployment().seed_clients() {
            let opened = tokio::time::timeout(CONNECT_TIMEOUT, client.get_async_pubsub()).await;
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
