//! Reloads the revoked sessions every `SECKILL_REVOCATION_RELOAD_MS` (decision 30): the bound
//! for a revocation whose announcement never arrived and no resubscription made good.

use tokio_util::sync::CancellationToken;

use crate::{auth::revocations::Need, Core};

pub async fn run(core: Core, shutdown: CancellationToken) {
    let mut every = tokio::time::interval(core.config.auth.revocation_reload);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: start-up has just read them.
    every.tick().await;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = every.tick() => {
                if let Err(e) = core.revocations.reload(&core.db, (&core.redis, &core.keys), core.config.auth.session_ttl, Need::Either).await {
                    tracing::warn!(error = %e, "reloading the revoked sessions");
                }
            }
        }
    }
}
