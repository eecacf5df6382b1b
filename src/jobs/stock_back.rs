//! The instance's subscription, to three channels (classic pub/sub on a seed node, which hears a
//! `PUBLISH` made on any master of a cluster):
//! - stock back: units coming back on sale (a cancellation's or a top-up's move, a failed
//!   write's unit, a sale rebuilt from PostgreSQL), announced with the voucher's ID
//!   ([`crate::sale::announce_stock_back`]): that sale's refusal is forgotten (decision 17);
//! - catalog: a voucher created, ended or topped up on another instance
//!   ([`crate::catalog::changed`]): the catalog epoch moves on, so the rows and renderings kept
//!   from before are not answered again (decision 28).

use std::time::Duration;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::{
    auth::revocations::Revoked, domain::VoucherId, infra::redis_conn::CONNECT_TIMEOUT, Core,
};

/// Keeps this instance's subscription until `shutdown`, reconnecting after a drop. Every
/// (re)subscription forgets every refusal and every catalog row, and a resubscription moves the
/// catalog epoch on (renderings too) and reloads the revoked sessions: messages may have been
/// missed meanwhile.
pub async fn listen(core: Core, shutdown: CancellationToken) {
    let channel = core.keys.stock_back_channel();
    let catalog = core.keys.catalog_channel();
    let revoked = core.keys.revocations_channel();
    let mut first = true;
    loop {
        let mut subscribed = None;
        for client in core.redis_deployment().seed_clients() {
            let opened = tokio::time::timeout(CONNECT_TIMEOUT, client.get_async_pubsub()).await;
            if let Ok(Ok(mut pubsub)) = opened {
                if pubsub
                    .subscribe(&[&channel, &catalog, &revoked])
                    .await
                    .is_ok()
                {
                    subscribed = Some(pubsub);
                    break;
                }
            }
        }
        if let Some(pubsub) = subscribed {
            core.refusals.clear();
            core.sold_out.forget_all();
            core.catalog.clear();
            if !first {
                core.catalog_changed();
                // Beside the messages, not before them: a store slow to answer must not hold
                // back the units coming back on sale (a revocation a message applies meanwhile
                // is kept: see `Revocations::reload`).
                let reloading = core.clone();
                core.spawn(async move {
                    let core = reloading;
                    if let Err(e) = core
                        .revocations
                        .reload(
                            &core.db,
                            (&core.redis, &core.keys),
                            core.config.auth.session_ttl,
                            crate::auth::revocations::Need::Either,
                        )
                        .await
                    {
                        tracing::warn!(error = %e, "reloading the revoked sessions; the reload job retries");
                    }
                });
            }
            first = false;
            let mut messages = pubsub.into_on_message();
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => return,
                    next = messages.next() => match next {
                        Some(m) if m.get_channel_name() == catalog => core.catalog_changed(),
                        Some(m) if m.get_channel_name() == revoked => {
                            let text = m.get_payload::<String>().unwrap_or_default();
                            if let Some(r) = Revoked::from_message(&text) {
                                core.revocations.apply(&r);
                            }
                        }
                        Some(m) => {
                            let id = m.get_payload::<i64>().ok().and_then(|id| VoucherId::try_from(id).ok());
                            if let Some(v) = id {
                                core.refusals.remove(&v);
                                core.sold_out.forget(v);
                                core.catalog.forget_stock(v);
                            }
                        }
                        None => break,
                    },
                }
            }
            tracing::warn!(
                "stock-back, catalog and revocation subscription dropped; resubscribing"
            );
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
}
