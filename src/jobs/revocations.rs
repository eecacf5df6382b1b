//! Reloads the revoked sessions (decision 30): every `SECKILL_REVOCATION_RELOAD_MS` the rows
//! PostgreSQL recorded since the last read, the bound for a revocation whose announcement never
//! arrived and no resubscription made good; every `SECKILL_REVOCATION_FULL_RELOAD_MS` both
//! stores in full, the bound for one that only Redis took.

use tokio_util::sync::CancellationToken;

use crate::{auth::revocations::Need, Core};

pub async fn run(core: Core, shutdown: CancellationToken) {
    let auth = &core.config.auth;
    let mut every = tokio::time::interval(auth.revocation_reload);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut full = tokio::time::interval(auth.revocation_full_reload);
    full.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first ticks are at once: start-up has just read them.
    every.tick().await;
    full.tick().await;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = full.tick() => {
                if let Err(e) = core.revocations.reload(&core.db, (&core.redis, &core.keys), auth.session_ttl, Need::Either).await {
                    tracing::warn!(error = %e, "reloading the revoked sessions");
                }
            }
            _ = every.tick() => {
                if let Err(e) = core.revocations.reload_recent(&core.db, auth.session_ttl).await {
                    tracing::warn!(error = %e, "reading the sign-outs recorded since the last read");
                }
            }
        }
    }
}
