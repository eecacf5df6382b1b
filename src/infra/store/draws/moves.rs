//! The `draw_moves` table: each unit given down a drawn sale's ranking, appended once its order
//! is written or refused, chained from the draw's seed (issue #51). Rows are only ever added.

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool};

use crate::domain::{
    fair::{self, MoveReason},
    OrderId, UserId, VoucherId,
};

use super::bytes32;

/// A move as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedMove {
    /// 1 first.
    pub seq: i64,
    pub leaf: fair::Hash,
    pub order: OrderId,
    pub reason: MoveReason,
    /// When the unit was admitted (the order ID's second).
    pub moved_at: DateTime<Utc>,
    pub recorded_at: DateTime<Utc>,
    pub hash: fair::Hash,
}

type Row = (
    i32,
    Vec<u8>,
    i64,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
    Vec<u8>,
);

fn decode(
    (seq, leaf, order, reason, moved_at, recorded_at, hash): Row,
) -> Result<RecordedMove, sqlx::Error> {
    Ok(RecordedMove {
        seq: i64::from(seq),
        leaf: bytes32(leaf)?,
        order: OrderId::from_db(order).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        reason: reason_of(&reason)
            .ok_or_else(|| sqlx::Error::Decode(format!("a move's reason {reason:?}").into()))?,
        moved_at,
        recorded_at,
        hash: bytes32(hash)?,
    })
}

fn reason_of(text: &str) -> Option<MoveReason> {
    [
        MoveReason::Cancelled,
        MoveReason::Unpaid,
        MoveReason::Refunded,
        MoveReason::Added,
    ]
    .into_iter()
    .find(|r| r.as_str() == text)
}

/// `voucher`'s moves in the order recorded.
pub async fn recorded_moves(
    db: &PgPool,
    voucher: VoucherId,
) -> Result<Vec<RecordedMove>, sqlx::Error> {
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT seq, leaf, order_id, reason, moved_at, recorded_at, hash
         FROM draw_moves WHERE voucher_id = $1 ORDER BY seq",
    )
    .bind(voucher.get())
    .fetch_all(db)
    .await?;
    rows.into_iter().map(decode).collect()
}

/// The move that gave `shopper` a unit of `voucher`, if one did.
pub async fn move_of(
    db: &PgPool,
    voucher: VoucherId,
    shopper: UserId,
) -> Result<Option<RecordedMove>, sqlx::Error> {
    let row: Option<Row> = sqlx::query_as(
        "SELECT seq, leaf, order_id, reason, moved_at, recorded_at, hash
         FROM draw_moves WHERE voucher_id = $1 AND user_id = $2",
    )
    .bind(voucher.get())
    .bind(shopper.get())
    .fetch_optional(db)
    .await?;
    row.map(decode).transpose()
}

/// Appends the moves of a drawn `voucher` not recorded yet: the first order (written or refused
/// by the worker: the unit went to them all the same) of each entrant ranked past the draw's own
/// winners, in the order admitted, each with the reason of the next unit that came back since
/// the close (in the order applied) and the next link of the chain. Under the draw row's lock,
/// so instances recording at once append each move once. Returns how many were appended.
pub async fn record_moves(db: &PgPool, voucher: VoucherId) -> Result<u64, sqlx::Error> {
    let mut tx = db.begin().await?;
    let drawn: Option<(Vec<u8>, i32, DateTime<Utc>)> = sqlx::query_as(
        "SELECT draw_seed, winners, closed_at FROM draws
         WHERE voucher_id = $1 AND drawn_at IS NOT NULL FOR UPDATE",
    )
    .bind(voucher.get())
    .fetch_optional(&mut *tx)
    .await?;
    let Some((seed, winners, closed_at)) = drawn else {
        return Ok(0);
    };
    let last: Option<(i32, Vec<u8>)> = sqlx::query_as(
        "SELECT seq, hash FROM draw_moves WHERE voucher_id = $1 ORDER BY seq DESC LIMIT 1",
    )
    .bind(voucher.get())
    .fetch_optional(&mut *tx)
    .await?;
    let (mut seq, mut previous) = match last {
        Some((seq, hash)) => (seq, bytes32(hash)?),
        None => (0, bytes32(seed)?),
    };
    let new = unrecorded(&mut tx, voucher, winners).await?;
    if new.is_empty() {
        return Ok(0);
    }
    let reasons = returns_since(&mut tx, voucher, closed_at).await?;
    for (user, leaf, order) in &new {
        let reason = match reasons
            .get(usize::try_from(seq).unwrap_or(usize::MAX))
            .map(String::as_str)
        {
            Some("added") => MoveReason::Added,
            Some("deadline") => MoveReason::Unpaid,
            Some("shop") => MoveReason::Refunded,
            _ => MoveReason::Cancelled,
        };
        seq += 1;
        previous = fair::move_hash(&previous, leaf, reason);
        sqlx::query(
            "INSERT INTO draw_moves (voucher_id, seq, user_id, leaf, order_id, reason, moved_at, hash)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(voucher.get())
        .bind(seq)
        .bind(user)
        .bind(leaf.as_slice())
        .bind(order.as_i64())
        .bind(reason.as_str())
        .bind(order.issued_at())
        .bind(previous.as_slice())
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(u64::try_from(new.len()).unwrap_or(u64::MAX))
}

/// The first order of each entrant ranked past `winners` who has no move recorded, in the order
/// admitted (order IDs ascend). A later order of theirs (bought first come once every entrant
/// was reached) is not one.
async fn unrecorded(
    conn: &mut PgConnection,
    voucher: VoucherId,
    winners: i32,
) -> Result<Vec<(i64, fair::Hash, OrderId)>, sqlx::Error> {
    let rows: Vec<(i64, Option<Vec<u8>>, i64)> = sqlx::query_as(
        "SELECT user_id, leaf, id FROM (
             SELECT DISTINCT ON (e.user_id) e.user_id, e.leaf, a.id FROM draw_entries e
             JOIN (SELECT id, user_id FROM orders WHERE voucher_id = $1
                   UNION ALL
                   SELECT id, user_id FROM order_failures WHERE voucher_id = $1) a
               ON a.user_id = e.user_id
             WHERE e.voucher_id = $1 AND e.rank >= $2
               AND NOT EXISTS (SELECT 1 FROM draw_moves m
                               WHERE m.voucher_id = $1 AND m.user_id = e.user_id)
             ORDER BY e.user_id, a.id) firsts
         ORDER BY id",
    )
    .bind(voucher.get())
    .bind(i64::from(winners))
    .fetch_all(conn)
    .await?;
    rows.into_iter()
        .map(|(user, leaf, id)| {
            let order = OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
            Ok((user, bytes32(leaf.unwrap_or_default())?, order))
        })
        .collect()
}

/// Why units came back to `voucher` since `since` (its close), one per unit, in the order
/// applied: `added` for an admin's units, else the cancelled order's canceller (`shopper`,
/// `deadline`, `shop`).
async fn returns_since(
    conn: &mut PgConnection,
    voucher: VoucherId,
    since: DateTime<Utc>,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT CASE WHEN m.key LIKE 'add:%' THEN 'added'
                     ELSE coalesce(o.cancelled_by, 'shopper') END
         FROM stock_moves m
         LEFT JOIN orders o ON o.id = m.order_id
         CROSS JOIN LATERAL generate_series(1, m.units) AS unit
         WHERE m.voucher_id = $1 AND m.applied_at > $2
         ORDER BY m.applied_at, m.key, unit",
    )
    .bind(voucher.get())
    .bind(since)
    .fetch_all(conn)
    .await
}
