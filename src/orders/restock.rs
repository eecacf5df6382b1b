//! Units going back on sale in Redis: a cancelled order's unit, or stock an admin added. The
//! change is first committed in PostgreSQL with a row in the `stock_moves` outbox; [`apply`]
//! then runs `lua/apply_move.lua` (idempotent by the move's key) and marks the row applied.
//! A crash between the two leaves the row pending, and the sweep's [`apply_pending`] finishes
//! it; applying twice changes nothing.
//!
//! A sale Redis does not hold (lost, or never loaded) is restored from PostgreSQL first: the
//! restore reads the stock and the moves in one snapshot and marks those moves applied, so a
//! move is counted by the restore or by the script, never by both and never by neither. A sale
//! that has ended is not restored: its Redis stock sells nothing, and a later restore reads
//! PostgreSQL's.

use chrono::Utc;

use crate::{
    catalog::{self, PreloadError, Staged},
    domain::VoucherId,
    infra::{
        backend::{backend_error, Backend, Unavailable},
        scripts::{self, MoveApplied},
        stock_move::StockMove,
        store,
    },
    Core,
};

/// A move could not be applied now; it stays pending.
#[derive(Debug, thiserror::Error)]
pub enum RestockError {
    #[error(transparent)]
    Backend(#[from] Backend),
    #[error("restoring the sale: {0}")]
    Preload(#[from] PreloadError),
    #[error("voucher {0} still has no sale state in Redis after a restore")]
    StillNotLoaded(VoucherId),
}

backend_error!(RestockError);

impl Unavailable for RestockError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::Preload(e) => e.is_unavailable(),
            Self::StillNotLoaded(_) => false,
        }
    }
}

/// Applies one committed move of `voucher` to Redis and marks it applied.
pub async fn apply(core: &Core, voucher: VoucherId, step: &StockMove) -> Result<(), RestockError> {
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    // The sale's master changed: check the sale against PostgreSQL first. The rebuild counts
    // this move if PostgreSQL's snapshot holds it; else the move applies after it.
    let mut outcome = catalog::with_sale_staged::<RestockError, _, _, _>(
        core,
        voucher,
        |o| match o {
            MoveApplied::Unreconciled => Staged::Unreconciled,
            // Restored below only while the sale is on: an ended sale sells nothing from Redis.
            _ => Staged::Ready,
        },
        || {
            let (mut redis, keys) = (redis.clone(), &keys);
            async move { scripts::apply_move(&mut redis, keys, step).await }
        },
    )
    .await?;
    if outcome == MoveApplied::Unreconciled {
        return Err(RestockError::Backend(Backend::Unreconciled));
    }
    if outcome == MoveApplied::NotLoaded {
        match store::vouchers::get(&core.db, voucher).await? {
            Some(v) if v.window.ends_at() > Utc::now() => {
                catalog::preload(core, &v).await?;
                outcome = scripts::apply_move(&mut redis, &keys, step).await?;
                if outcome == MoveApplied::NotLoaded {
                    return Err(RestockError::StillNotLoaded(voucher));
                }
            }
            // Ended (or gone): nothing sells from Redis any more; PostgreSQL has the unit.
            _ => {}
        }
    }
    if let MoveApplied::Applied { stock } = outcome {
        tracing::debug!(%voucher, key = %step.key, stock, "stock move applied");
        // On a drawn sale the unit goes to the next entrant by rank first (buys are refused
        // while it waits there); the draws job does it later if this fails.
        if let Err(e) = crate::draw::advance(core, voucher).await {
            tracing::warn!(%voucher, error = %e, "a unit back did not go down the draw's ranking yet");
        }
        crate::sale::announce_stock_back(core, voucher).await;
    }
    store::moves::mark_applied(&core.db, std::slice::from_ref(&step.key)).await?;
    Ok(())
}

/// Applies every pending move (at most `limit`, oldest first): the ones whose process died
/// between PostgreSQL and Redis. Returns how many were applied; a move that fails stays
/// pending for the next pass.
pub async fn apply_pending(core: &Core, limit: i64) -> Result<usize, RestockError> {
    let pending = store::moves::pending(&core.db, limit).await?;
    let mut applied = 0;
    for m in &pending {
        match apply(core, m.voucher, &m.step).await {
            Ok(()) => applied += 1,
            Err(e) => {
                tracing::warn!(voucher = %m.voucher, key = %m.step.key, error = %e, "stock move still pending")
            }
        }
    }
    Ok(applied)
}
