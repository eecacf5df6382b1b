//! [`advance`]: units that come back after a draw (a winner's order cancelled or unpaid or
//! refunded, units an admin adds) go to the next entrants by rank. Each such unit is a *move* of
//! the transcript (`transcript.rs`): the order of an entrant ranked past the draw's own winners.

use crate::{
    domain::VoucherId,
    infra::{
        scripts::{self, DrawAdmit},
        store,
    },
    Core,
};

use super::{run::SLICE, DrawError};

/// Gives units left on a drawn sale to its next entrants by rank (after a winner's order was
/// cancelled or expired, or an admin added units), reading the ranking from PostgreSQL. Does
/// nothing for a sale whose ranking was exhausted or is not recorded yet (the draw's own run
/// admits then). Returns the orders admitted; safe on several instances at once (the cursor
/// decides).
pub async fn advance(core: &Core, voucher: VoucherId) -> Result<i64, DrawError> {
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let mut admitted = 0;
    loop {
        let ((cursor, entrants), stock): ((Option<i64>, Option<i64>), Option<i64>) = redis::pipe()
            .hmget(&keys.sale, &["draw_cursor", "draw_entrants"])
            .get(&keys.stock)
            .query_async(&mut redis)
            .await?;
        let (Some(cursor), Some(entrants), Some(stock)) = (cursor, entrants, stock) else {
            return Ok(admitted);
        };
        if cursor >= entrants || stock <= 0 {
            return Ok(admitted);
        }
        let n = stock.clamp(1, i64::try_from(SLICE).unwrap_or(i64::MAX));
        let next = store::draws::ranks(&core.db, voucher, cursor, n).await?;
        if next.is_empty() {
            return Ok(admitted);
        }
        match scripts::draw_admit(&mut redis, &core.keys, voucher, cursor, &next).await? {
            DrawAdmit::Advanced { admitted: n, .. } => {
                admitted += n;
                if n > 0 {
                    tracing::info!(%voucher, admitted = n, "units went down the draw's ranking");
                }
            }
            DrawAdmit::Moved { .. } => {}
            DrawAdmit::Ended | DrawAdmit::IdsExhausted { .. } => return Ok(admitted),
            DrawAdmit::NotOpened | DrawAdmit::NotLoaded | DrawAdmit::Unreconciled => {
                return Ok(admitted)
            }
        }
    }
}

/// Records the moves of a drawn `voucher` whose orders were written (or refused) since the last
/// call, each with its reason and the next link of the chain; returns how many. Safe on several
/// instances at once (the draw's row is locked while appending).
pub async fn record_moves(core: &Core, voucher: VoucherId) -> Result<u64, DrawError> {
    let recorded = store::draws::record_moves(&core.db, voucher).await?;
    if recorded > 0 {
        tracing::info!(%voucher, recorded, "draw moves recorded");
    }
    Ok(recorded)
}
