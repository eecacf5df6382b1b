//! The draws: every instance waits for the next draw sale's start and offers to run its draw
//! ([`draw::run`]; the draw's lock lets one instance run it, and a crash leaves it to the next
//! offer), and now and then gives units left on drawn sales to their next entrants
//! ([`draw::advance`]: a unit a rejected order gave back, a unit back whose own advance failed),
//! then records the moves whose orders were written since ([`draw::record_moves`]).
//!
//! Each draw runs in a task of its own, owned by the job: a draw waiting for a round the relay
//! withholds (or serves forged) waits alone, and every other draw due runs beside it (issue
//! #51). A draw already running here is not offered again until its task ends.

use std::{collections::HashSet, time::Duration};

use chrono::Utc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::{
    domain::VoucherId,
    draw::{self, DrawError},
    infra::store,
    Core,
};

/// How often the draw sales are read again (new ones, ones recorded elsewhere), and the drawn
/// ones advanced.
const REFRESH: Duration = Duration::from_secs(2);

/// How long after a drawn sale's end its moves are still looked for (orders admitted before the
/// end are written within seconds; a day covers a worker that was down).
const MOVES_RECORDED_FOR: chrono::Duration = chrono::Duration::days(1);

/// How long after a close its outside timestamp is still asked for (`draw::witness` gives up by
/// itself once the round is emitted; this bounds the reads).
const WITNESS_ASKED_FOR: chrono::Duration = chrono::Duration::hours(1);

/// Asks the authority again for the closed lists not timestamped yet (its answer lost, an
/// instance killed just after the close).
async fn witness_closed(core: &Core, now: chrono::DateTime<Utc>) {
    let closed = match store::draws::unwitnessed(&core.db, now - WITNESS_ASKED_FOR).await {
        Ok(closed) => closed,
        Err(e) => return tracing::warn!(error = %e, "reading the closed draws"),
    };
    for (voucher, root, round) in closed {
        let (Ok(root), round) = (
            <[u8; 32]>::try_from(root),
            round.and_then(|r| u64::try_from(r).ok()),
        ) else {
            continue;
        };
        if let Err(e) = draw::witness::witness(core, voucher, &root, round).await {
            tracing::warn!(%voucher, error = %e, "the draw's list is not timestamped yet");
        }
    }
}

/// The draws this instance is running, each in its own task.
#[derive(Default)]
struct Running {
    tasks: JoinSet<(VoucherId, Result<Option<draw::DrawReport>, DrawError>)>,
    vouchers: HashSet<VoucherId>,
}

impl Running {
    /// Starts `voucher`'s draw unless it is running here already.
    fn offer(&mut self, core: &Core, voucher: VoucherId) {
        if self.vouchers.insert(voucher) {
            let core = core.clone();
            self.tasks
                .spawn(async move { (voucher, draw::run(&core, voucher).await) });
        }
    }

    /// Forgets the draws whose task ended, saying why one failed (it is offered again).
    fn reap(&mut self) {
        while let Some(ended) = self.tasks.try_join_next() {
            match ended {
                Ok((voucher, result)) => {
                    self.vouchers.remove(&voucher);
                    if let Err(e) = result {
                        tracing::warn!(%voucher, error = %e, "the draw did not run; retrying");
                    }
                }
                Err(e) => {
                    // A task that panicked names no voucher: start afresh, so none stays
                    // marked as running forever.
                    tracing::error!(error = %e, "a draw's task ended abnormally");
                    self.vouchers.clear();
                }
            }
        }
    }
}

/// Runs until `shutdown` (the draws still running are dropped with the job: a draw resumes
/// where it stood at the next offer, here or on another instance).
pub async fn run(core: Core, shutdown: CancellationToken) {
    let mut running = Running::default();
    loop {
        running.reap();
        let wait = pass(&core, &mut running).await;
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(wait) => {}
        }
    }
}

/// One pass: offers the draws due, advances the drawn sales; returns how long to sleep (until
/// the next start, at most [`REFRESH`]).
async fn pass(core: &Core, running: &mut Running) -> Duration {
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
        running.offer(core, voucher);
    }
    match store::draws::recorded_ending_after(&core.db, now).await {
        Ok(drawn) => {
            for voucher in drawn {
                if let Err(e) = draw::advance(core, voucher).await {
                    tracing::debug!(%voucher, error = %e, "advancing a drawn sale");
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "reading the drawn sales"),
    }
    if core.config.draw.tsa.is_some() {
        witness_closed(core, now).await;
    }
    match store::draws::recorded_ending_after(&core.db, now - MOVES_RECORDED_FOR).await {
        Ok(drawn) => {
            for voucher in drawn {
                if let Err(e) = draw::record_moves(core, voucher).await {
                    tracing::warn!(%voucher, error = %e, "recording a drawn sale's moves");
                }
            }
        }
        Err(e) => tracing::warn!(error = %e, "reading the drawn sales"),
    }
    wait
}
