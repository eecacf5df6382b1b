//! The `reminders` table: who asked to be reminded of which sale, and the outbox the sender
//! claims from (migration 16).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sqlx::PgPool;

use crate::domain::{ReminderCounts, UserId, VoucherId};

/// Records that `user` asks to be reminded of `voucher`; `true` when the ask is new.
pub async fn ask(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
    lang: &str,
) -> Result<bool, sqlx::Error> {
    let added = sqlx::query(
        "INSERT INTO reminders (voucher_id, user_id, id, lang) VALUES ($1, $2, $3, $4)
         ON CONFLICT (voucher_id, user_id) DO NOTHING",
    )
    .bind(voucher.get())
    .bind(user.get())
    .bind(uuid::Uuid::new_v4().to_string())
    .bind(lang)
    .execute(db)
    .await?
    .rows_affected();
    Ok(added == 1)
}

/// Forgets `user`'s reminder of `voucher` if it waits and no sender holds it at `now`; `true`
/// when one was forgotten. A sender's claim takes the row's lock first: a cancel arriving
/// meanwhile reads the claim once it commits and leaves the row.
pub async fn cancel(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    let gone = sqlx::query(
        "DELETE FROM reminders WHERE voucher_id = $1 AND user_id = $2 AND state = 'waiting'
            AND (claimed_until IS NULL OR claimed_until <= $3)",
    )
    .bind(voucher.get())
    .bind(user.get())
    .bind(now)
    .execute(db)
    .await?
    .rows_affected();
    Ok(gone == 1)
}

/// The state of `user`'s reminder of `voucher` (`waiting`, `sent`, `failed`, `late`), if asked,
/// and whether a sender holds it at `now` (it is being sent).
pub async fn state(
    db: &PgPool,
    voucher: VoucherId,
    user: UserId,
    now: DateTime<Utc>,
) -> Result<Option<(String, bool)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT state, coalesce(claimed_until > $3, false) FROM reminders
          WHERE voucher_id = $1 AND user_id = $2",
    )
    .bind(voucher.get())
    .bind(user.get())
    .bind(now)
    .fetch_optional(db)
    .await
}

/// A reminder claimed for sending.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Due {
    pub id: String,
    pub voucher_id: i64,
    pub lang: String,
    pub tries: i32,
    pub phone: String,
    pub title: String,
    /// When the sale opens to the shopper (a draw: its entries).
    pub opens_at: DateTime<Utc>,
    /// Until when this sender holds it: after that another may claim it, so it must not be
    /// posted past this, and an outcome is recorded only while the claim is still this one.
    pub claimed_until: DateTime<Utc>,
}

/// Claims at most `batch` reminders whose moment (`lead` before their sale opens) has come at
/// `now`, and that are neither held by another sender nor waiting to be tried again: each is
/// held for `lease` and counted as one more try, the sales opening soonest first. Rows another
/// transaction holds are skipped.
pub async fn claim(
    db: &PgPool,
    now: DateTime<Utc>,
    lead: std::time::Duration,
    lease: std::time::Duration,
    batch: i64,
) -> Result<Vec<Due>, sqlx::Error> {
    let ms = |d: std::time::Duration| i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
    sqlx::query_as::<_, Due>(
        "WITH due AS (
             SELECT r.voucher_id, r.user_id FROM reminders r JOIN vouchers v ON v.id = r.voucher_id
             WHERE r.state = 'waiting'
               AND least(coalesce(v.entries_open_at, v.begins_at), v.ends_at) - $2 * interval '1 millisecond' <= $1
               AND (r.next_try_at IS NULL OR r.next_try_at <= $1)
               AND (r.claimed_until IS NULL OR r.claimed_until <= $1)
             ORDER BY least(coalesce(v.entries_open_at, v.begins_at), v.ends_at)
             LIMIT $4
             FOR UPDATE OF r SKIP LOCKED)
         UPDATE reminders r
            SET claimed_until = $1 + $3 * interval '1 millisecond', tries = r.tries + 1
           FROM due, vouchers v, users u
          WHERE r.voucher_id = due.voucher_id AND r.user_id = due.user_id
            AND v.id = r.voucher_id AND u.id = r.user_id
         RETURNING r.id, r.voucher_id, r.lang, r.tries, u.phone, v.title,
                   least(coalesce(v.entries_open_at, v.begins_at), v.ends_at) AS opens_at,
                   r.claimed_until",
    )
    .bind(now)
    .bind(ms(lead))
    .bind(ms(lease))
    .bind(batch)
    .fetch_all(db)
    .await
}

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Sent,
    /// The sale opened before it could go: not sent.
    Late,
    /// Failed for good (refused, or out of tries), with why.
    Failed(String),
    /// Failed for now: tried again at this instant.
    Retry(DateTime<Utc>, String),
    /// Not posted (the shop's pace could not be counted, or the claim would run out before
    /// the relay answered): not a try; looked at again from this instant.
    NotTried(DateTime<Utc>, String),
}

/// Records `outcome` of reminder `d`, unless it is no longer waiting (cancelled rows are gone)
/// or no longer this sender's (its claim ran out and another sender holds it).
pub async fn record(db: &PgPool, d: &Due, outcome: &Outcome) -> Result<(), sqlx::Error> {
    let (state, next, error, tried) = match outcome {
        Outcome::Sent => ("sent", None, None, 0),
        Outcome::Late => ("late", None, None, 0),
        Outcome::Failed(why) => ("failed", None, Some(why.as_str()), 0),
        Outcome::Retry(at, why) => ("waiting", Some(*at), Some(why.as_str()), 0),
        Outcome::NotTried(at, why) => ("waiting", Some(*at), Some(why.as_str()), 1),
    };
    sqlx::query(
        "UPDATE reminders SET state = $2, next_try_at = $3, last_error = coalesce($4, last_error),
                tries = tries - $6, claimed_until = NULL,
                done_at = CASE WHEN $2 = 'waiting' THEN NULL ELSE now() END
          WHERE id = $1 AND state = 'waiting' AND claimed_until = $5",
    )
    .bind(&d.id)
    .bind(state)
    .bind(next)
    .bind(error)
    .bind(d.claimed_until)
    .bind(tried)
    .execute(db)
    .await?;
    Ok(())
}

/// Reminders asked, sent and failed, per voucher among `ids`.
pub async fn tallies(
    db: &PgPool,
    ids: &[VoucherId],
) -> Result<HashMap<VoucherId, ReminderCounts>, sqlx::Error> {
    let ids: Vec<i64> = ids.iter().map(|v| v.get()).collect();
    let rows: Vec<(i64, i64, i64, i64)> = sqlx::query_as(
        "SELECT voucher_id, count(*), count(*) FILTER (WHERE state = 'sent'),
                count(*) FILTER (WHERE state = 'failed')
           FROM reminders WHERE voucher_id = ANY($1) GROUP BY voucher_id",
    )
    .bind(&ids)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(v, asked, sent, failed)| {
            (
                VoucherId::from_db(v),
                ReminderCounts {
                    asked,
                    sent,
                    failed,
                },
            )
        })
        .collect())
}

/// Reminders still waiting although their moment (`lead` before their sale opens) was before
/// `late`: behind the shop's pace, failing and retried, or no sender running.
pub async fn overdue(
    db: &PgPool,
    late: DateTime<Utc>,
    lead: std::time::Duration,
) -> Result<i64, sqlx::Error> {
    let lead_ms = i64::try_from(lead.as_millis()).unwrap_or(i64::MAX);
    sqlx::query_scalar(
        "SELECT count(*) FROM reminders r JOIN vouchers v ON v.id = r.voucher_id
          WHERE r.state = 'waiting'
            AND least(coalesce(v.entries_open_at, v.begins_at), v.ends_at)
                - $2 * interval '1 millisecond' < $1",
    )
    .bind(late)
    .bind(lead_ms)
    .fetch_one(db)
    .await
}
