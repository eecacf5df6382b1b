//! The live push: reads the sales open pages watch on this instance, once per `SECKILL_PUSH_MS`
//! for all of them, and hands each change to their watchers ([`crate::sale::Live`]; design.md
//! §8, decision 20).

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{catalog, sale::live::publish, Core};

/// Reads the watched sales every `period` until `shutdown`, sending each change, then ends every
/// feed. A failed read leaves the last figures in place (the next period tries again).
pub async fn run(core: Core, period: Duration, shutdown: CancellationToken) {
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => {
                core.live.close_all();
                return;
            }
            _ = ticks.tick() => {}
        }
        let watched = core.live.watched();
        let watchers: usize = watched.iter().map(|(_, s)| s.receiver_count()).sum();
        metrics::gauge!("seckill_live_watchers").set(watchers as f64);
        if watched.is_empty() {
            continue;
        }
        let reads = watched.iter().map(|(v, _)| catalog::live(&core, *v));
        let figures = futures::future::join_all(reads).await;
        for ((voucher, sender), read) in watched.into_iter().zip(figures) {
            match read {
                Ok(now) => publish(&sender, now),
                // A store out of reach: pages keep the last figures (and fall back to asking).
                Err(e) => tracing::debug!(%voucher, error = %e, "reading a watched sale"),
            }
        }
    }
}
