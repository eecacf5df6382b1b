//! Which draws are due: the ones an instance waits for, the drawn ones still live, the
//! overdue ones (health), and whether an admin's change must wait for a draw.

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::VoucherId;

/// Whether `voucher`'s entry list is committed and its ranking not yet recorded (a draw
/// waiting for its round), read under a lock on its draw's row: the close takes the same lock,
/// so an admin's change that reads `false` here commits before any close.
pub async fn awaiting_draw(
    conn: &mut sqlx::PgConnection,
    voucher: VoucherId,
) -> Result<bool, sqlx::Error> {
    let awaiting: Option<bool> = sqlx::query_scalar(
        "SELECT closed_at IS NOT NULL AND drawn_at IS NULL FROM draws
         WHERE voucher_id = $1 FOR UPDATE",
    )
    .bind(voucher.get())
    .fetch_optional(conn)
    .await?;
    Ok(awaiting.unwrap_or(false))
}

/// Draw sales whose ranking is not recorded, with their start, soonest first: the draws an
/// instance waits for. Those whose sale has not ended at `now`, and every one whose entry list
/// is committed whatever became of its sale (ended by an admin, its end passed while the round
/// was awaited): once the list is committed its ranking is published, so nobody who learns the
/// round first can abort it (issue #51).
pub async fn unrecorded(
    db: &PgPool,
    now: DateTime<Utc>,
) -> Result<Vec<(VoucherId, DateTime<Utc>)>, sqlx::Error> {
    let rows: Vec<(i64, DateTime<Utc>)> = sqlx::query_as(
        "SELECT v.id, v.begins_at FROM draws d JOIN vouchers v ON v.id = d.voucher_id
         WHERE d.drawn_at IS NULL AND (v.ends_at > $1 OR d.closed_at IS NOT NULL)
         ORDER BY v.begins_at, v.id",
    )
    .bind(now)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, begins)| (VoucherId::from_db(id), begins))
        .collect())
}

/// Draw sales whose ranking is recorded and whose sale ends after `ended_after`: with now, the
/// ones a unit coming back may still go down the ranking of; with a day ago, the ones whose
/// moves may not all be recorded yet (an order admitted just before the end is written after).
pub async fn recorded_ending_after(
    db: &PgPool,
    ended_after: DateTime<Utc>,
) -> Result<Vec<VoucherId>, sqlx::Error> {
    let ids: Vec<i64> = sqlx::query_scalar(
        "SELECT v.id FROM draws d JOIN vouchers v ON v.id = d.voucher_id
         WHERE d.drawn_at IS NOT NULL AND v.ends_at > $1 AND d.entrants > 0
         ORDER BY v.id",
    )
    .bind(ended_after)
    .fetch_all(db)
    .await?;
    Ok(ids.into_iter().map(VoucherId::from_db).collect())
}

/// Draws closed after `closed_after` whose list has no outside timestamp yet, with the root and
/// the round it covers: the ones whose witness is worth asking for again.
pub async fn unwitnessed(
    db: &PgPool,
    closed_after: DateTime<Utc>,
) -> Result<Vec<(VoucherId, Vec<u8>, Option<i64>)>, sqlx::Error> {
    let rows: Vec<(i64, Vec<u8>, Option<i64>)> = sqlx::query_as(
        "SELECT voucher_id, entries_root, beacon_round FROM draws
         WHERE closed_at > $1 AND witness_token IS NULL
         ORDER BY voucher_id",
    )
    .bind(closed_after)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, root, round)| (VoucherId::from_db(id), root, round))
        .collect())
}

/// Of `vouchers`, the draws whose list is committed and whose ranking is not recorded, with the
/// beacon round each waits for (the console shows them).
pub async fn awaiting_rounds(
    db: &PgPool,
    vouchers: &[VoucherId],
) -> Result<std::collections::HashMap<VoucherId, u64>, sqlx::Error> {
    let ids: Vec<i64> = vouchers.iter().map(|v| v.get()).collect();
    let rows: Vec<(i64, i64)> = sqlx::query_as(
        "SELECT voucher_id, beacon_round FROM draws
         WHERE voucher_id = ANY($1) AND closed_at IS NOT NULL AND drawn_at IS NULL
           AND beacon_round IS NOT NULL",
    )
    .bind(&ids)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, round)| Some((VoucherId::from_db(id), u64::try_from(round).ok()?)))
        .collect())
}

/// Draw sales that began before `began_before` and whose ranking is not recorded, while their
/// sale lasts or once their entry list is committed: draws overdue (health).
pub async fn overdue(db: &PgPool, began_before: DateTime<Utc>) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT count(*) FROM draws d JOIN vouchers v ON v.id = d.voucher_id
         WHERE d.drawn_at IS NULL AND v.begins_at < $1
           AND (v.ends_at > now() OR d.closed_at IS NOT NULL)",
    )
    .bind(began_before)
    .fetch_one(db)
    .await
}
