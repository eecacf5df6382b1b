//! `SECKILL_DURABILITY=fsync` kept after a Redis restart. Start-up sets `appendfsync always`
//! with `CONFIG SET`, which Redis does not persist: restarted by its supervisor from its own
//! configuration file, it may fsync once a second again, and the admissions this instance
//! answers would no longer be what `fsync` promises. Every [`EVERY`] this job reads the
//! setting and sets it again when it finds it weaker, with a warning; a Redis that refuses is an
//! error in the log (the promise cannot hold). Other durabilities need no watch: `everysec` is
//! what a Redis started by `scripts/services.sh` has, and `replicated` waits for its replicas on
//! every batch.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::{
    infra::durability::{self, FsyncHeld},
    Core, Durability, DurabilityError,
};

/// How often the setting is read: the longest a restarted Redis answers with its own.
pub const EVERY: Duration = Duration::from_secs(1);

pub async fn run(core: Core, shutdown: CancellationToken) {
    if core.config.durability != Durability::Fsync {
        return;
    }
    let mut every = tokio::time::interval(EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // The first tick is at once: start-up has just set it.
    every.tick().await;
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = every.tick() => match durability::hold_fsync(&core.redis).await {
                Ok(FsyncHeld::Held) => {}
                Ok(FsyncHeld::Restored { was }) => tracing::warn!(
                    was = %was,
                    "Redis had lost appendfsync always (restarted from its own configuration?): set again"
                ),
                Err(e @ DurabilityError::Weaker { .. }) => tracing::error!(error = %e, "SECKILL_DURABILITY=fsync does not hold"),
                // Redis down or loading: the health check reports it; the next tick tries again.
                Err(e) => tracing::debug!(error = %e, "reading Redis's appendfsync"),
            },
        }
    }
}
