//! The draws: every instance waits for the next draw sale's start and offers to run its draw
//! ([`draw::run`]; the draw's lock lets one instance run it, and a crash leaves it to the next
//! offer), and now and then gives units left on drawn sales to their next entrants
//! ([`draw::advance`]: a unit a rejected order gave back, a unit back whose own advance failed).

use std::time::Duration;

use chrono::Utc;
use tokio_util::sync::CancellationToken;

use crate::{draw, infra::store, Core};

/// How often the draw sales are read again (new ones, ones recorded elsewhere), and the drawn
/// ones advanced.
const REFRESH: Duration = Duration::from_secs(2);

/// Runs until `shutdown`.
pub async fn run(core: Core, shutdown: CancellationToken) {
    loop {
        let wait = pass(&core).await;
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One pass: runs the draws due, advances the drawn sales; returns how long to sleep (until the
/// next start, at most [`REFRESH`]).
async fn pass(core: &Core) -> Duration {
    let now = Utc::now();
    let due = match store::draws::unrecorded(&core.db, now).await {
        Ok(due) => due,
        Err(e) => {
            tracing::warn!(error = %e, "reading the draws due");
            return REFRESH;
        }
    };
    let mut wait = REFRESH;
    for (voucher, begins) in due {
        let until = (begins - now).to_std().unwrap_or(Duration::ZERO);
        if until > Duration::ZERO {
            wait = wait.min(until);
            continue;
        }
        match draw::run(core, voucher).await {
            Ok(_) => {}
            Err(e) => tracing::warn!(%voucher, error = %e, "the draw did not run; retrying"),
        }
    }
    match store::draws::recorded_live(&core.db, now).await {
        Ok(drawn) => {
            for voucher in drawn {
                if let Err(e) = draw::advance(core, voucher).await {
                    tracing::debug!(%voucher, error = %e, "advancing a drawn sale");
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "reading the drawn sales"),
    }
    wait
}
