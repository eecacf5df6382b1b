//! Refunds owed, made, retried with backoff, or refused for good.

use sqlx::{PgConnection, PgPool};

use crate::domain::OrderId;

/// A refund owed: the reference of its money and its idempotency key's generation (see
/// [`refund_later`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefundOwed {
    pub payment_ref: Option<String>,
    pub key_gen: i32,
}

/// The refund owed for payment `session`, if one is.
pub async fn refund_owed_of(db: &PgPool, session: &str) -> Result<Option<RefundOwed>, sqlx::Error> {
    let row: Option<(Option<String>, i32)> = sqlx::query_as(
        "SELECT payment_ref, refund_key_gen FROM payments
         WHERE session_id = $1 AND state = 'refund_due'",
    )
    .bind(session)
    .fetch_optional(db)
    .await?;
    Ok(row.map(|(payment_ref, key_gen)| RefundOwed {
        payment_ref,
        key_gen,
    }))
}

/// `provider`'s refunds owed whose turn has come, the longest waiting first.
pub async fn refunds_due(
    db: &PgPool,
    provider: &str,
    limit: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT session_id FROM payments
         WHERE state = 'refund_due' AND provider = $1 AND refund_next_at <= now()
         ORDER BY refund_next_at LIMIT $2",
    )
    .bind(provider)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// The refund owed for `session` did not go through: it is tried again after a backoff that
/// doubles with each try (1 s, 2 s, … at most an hour), behind every other refund whose turn
/// has come. `indeterminate`: the provider may have saved the failure against the key (a 5xx,
/// no answer), so the next try takes a new key; a second refund of the same payment is then
/// refused by the provider itself (it never refunds more than was taken).
pub async fn refund_later(
    db: &PgPool,
    session: &str,
    indeterminate: bool,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET refund_tries = refund_tries + 1,
                refund_key_gen = refund_key_gen + CASE WHEN $2 THEN 1 ELSE 0 END,
                refund_next_at = now() + make_interval(secs => least(3600, power(2, least(refund_tries, 12)))),
                refund_error = $3
         WHERE session_id = $1 AND state = 'refund_due'",
    )
    .bind(session)
    .bind(indeterminate)
    .bind(error)
    .execute(db)
    .await?;
    Ok(())
}

/// The provider refused the refund owed for `session` for good, or a refund it had taken
/// failed later: `refund_failed`, for an admin.
pub async fn refund_refused(
    db: impl sqlx::PgExecutor<'_>,
    session: &str,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET state = 'refund_failed', refund_tries = refund_tries + 1,
                refund_error = $2, updated_at = now()
         WHERE session_id = $1 AND state IN ('refund_due', 'refunded')",
    )
    .bind(session)
    .bind(error)
    .execute(db)
    .await?;
    Ok(())
}

/// Refunds the provider refused for good (an admin's matter).
pub async fn refunds_failed(db: &PgPool) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar("SELECT count(*) FROM payments WHERE state = 'refund_failed'")
        .fetch_one(db)
        .await
}

/// Refunds owed and not yet made, and the oldest one's age in seconds (0 when none).
pub async fn refunds_owed(db: &PgPool) -> Result<(i64, f64), sqlx::Error> {
    sqlx::query_as(
        "SELECT count(*), coalesce(extract(epoch FROM now() - min(updated_at)), 0)::float8
         FROM payments WHERE state = 'refund_due'",
    )
    .fetch_one(db)
    .await
}

/// A refund owed was made (or one refused for good was made after all, by an admin in the
/// provider's dashboard).
pub async fn mark_refunded(
    db: impl sqlx::PgExecutor<'_>,
    session: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET state = 'refunded', updated_at = now()
         WHERE session_id = $1 AND state IN ('refund_due', 'refund_failed')",
    )
    .bind(session)
    .execute(db)
    .await?;
    Ok(())
}

/// Money held that did not pay its order (flagged) is owed back, due at once: an admin
/// refunded some or all of it by hand.
pub async fn owe_back_session(
    db: impl sqlx::PgExecutor<'_>,
    session: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET state = 'refund_due', refund_next_at = now(), updated_at = now()
         WHERE session_id = $1 AND state = 'flagged'",
    )
    .bind(session)
    .execute(db)
    .await?;
    Ok(())
}

/// Money held for `orders` that did not pay them (flagged) is owed back now they cannot take
/// it (cancelled, or paid another way). Their sessions.
pub async fn owe_back_flagged(
    conn: &mut PgConnection,
    orders: &[i64],
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "UPDATE payments SET state = 'refund_due', updated_at = now()
         WHERE order_id = ANY($1) AND state = 'flagged'
         RETURNING session_id",
    )
    .bind(orders)
    .fetch_all(conn)
    .await
}

/// Where the money taken for `order` stands: `(owed back or refused, refunded)` payments.
pub async fn refunds_of_order(db: &PgPool, order: OrderId) -> Result<(i64, i64), sqlx::Error> {
    sqlx::query_as(
        "SELECT count(*) FILTER (WHERE state IN ('refund_due', 'refund_failed')),
                count(*) FILTER (WHERE state = 'refunded')
         FROM payments WHERE order_id = $1",
    )
    .bind(order.as_i64())
    .fetch_one(db)
    .await
}

/// The sessions of `order` whose refund is owed.
pub async fn refunds_due_of_order(db: &PgPool, order: OrderId) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT session_id FROM payments WHERE order_id = $1 AND state = 'refund_due'",
    )
    .bind(order.as_i64())
    .fetch_all(db)
    .await
}
