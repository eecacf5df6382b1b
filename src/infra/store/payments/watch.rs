//! The payments still able to take money: closed by the shop without the provider's word
//! (watched), looked up when their webhook may be lost, expired at their order's deadline.

use sqlx::{PgConnection, PgPool};

use crate::domain::{OrderId, UserId};

/// Closes payment `session` if it is still open (the shop gave up on it: the deadline, a
/// cancellation); money that still arrives for it is then refunded if its order is gone.
/// `watched`: closed without the provider's word that it is over, so it is still looked up
/// until it is (or its `expires_at` has passed).
pub async fn close_if_open(db: &PgPool, session: &str, watched: bool) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET state = 'closed', watched = $2, updated_at = now()
         WHERE session_id = $1 AND state = 'open'",
    )
    .bind(session)
    .bind(watched)
    .execute(db)
    .await?;
    Ok(())
}

/// The provider said payment `session` is over (expired, or paid and applied): no more
/// lookups.
pub async fn unwatch(conn: &mut PgConnection, session: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE payments SET watched = false WHERE session_id = $1 AND watched")
        .bind(session)
        .execute(conn)
        .await?;
    Ok(())
}

/// Notes that payment `session` was just asked of the provider.
pub async fn checked(db: &PgPool, session: &str) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE payments SET checked_at = now() WHERE session_id = $1")
        .bind(session)
        .execute(db)
        .await?;
    Ok(())
}

/// `user`'s order's open payment, if it was never asked of the provider or last asked more
/// than `older_than_ms` ago (the shopper's return is looked up at most that often).
pub async fn open_of(
    db: &PgPool,
    order: OrderId,
    user: UserId,
    older_than_ms: i64,
) -> Result<Option<String>, sqlx::Error> {
    payable_of(db, order, user, older_than_ms, false).await
}

/// Like [`open_of`], also a payment closed without the provider's word while it is watched
/// (the shopper coming back after paying a page the shop had given up on: asked at once, so
/// the money goes back without waiting for the sweep's lookups).
pub async fn payable_of(
    db: &PgPool,
    order: OrderId,
    user: UserId,
    older_than_ms: i64,
    watched_too: bool,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT p.session_id FROM payments p JOIN orders o ON o.id = p.order_id
         WHERE p.order_id = $1 AND o.user_id = $2
           AND (p.state = 'open' OR ($4 AND p.watched AND now() < p.expires_at + interval '1 minute'))
           AND (p.checked_at = p.created_at
                OR p.checked_at <= now() - make_interval(secs => $3::float8 / 1000))
         ORDER BY p.created_at DESC LIMIT 1",
    )
    .bind(order.as_i64())
    .bind(user.get())
    .bind(older_than_ms as f64)
    .bind(watched_too)
    .fetch_optional(db)
    .await
}

/// `provider`'s payments that may still take money and were not asked of it for
/// `older_than_ms` (their webhook may be lost), least recently asked first: the open ones, and
/// those closed without the provider's word until their `expires_at` has passed (and a
/// minute more, for a payment finishing as it lapses).
pub async fn stale_open(
    db: &PgPool,
    provider: &str,
    older_than_ms: i64,
    limit: i64,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT session_id FROM payments
         WHERE (state = 'open' OR (watched AND now() < expires_at + interval '1 minute'))
           AND provider = $1
           AND checked_at <= now() - make_interval(secs => $2::float8 / 1000)
         ORDER BY checked_at LIMIT $3",
    )
    .bind(provider)
    .bind(older_than_ms as f64)
    .bind(limit)
    .fetch_all(db)
    .await
}

/// An open payment of an order past its deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenPastDeadline {
    pub session: String,
    pub provider: String,
    /// How long past the deadline its order is.
    pub late_ms: i64,
}

/// Open payments of orders past their deadline, which the provider must close before the
/// orders are cancelled, and of orders already cancelled (a Pay now that raced the
/// cancellation), which must not stay payable. `late_ms` counts from the deadline or the
/// cancellation.
pub async fn open_past_deadline(
    db: &PgPool,
    limit: i64,
) -> Result<Vec<OpenPastDeadline>, sqlx::Error> {
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT p.session_id, p.provider,
                (extract(epoch FROM now() - coalesce(o.cancelled_at, o.pay_by)) * 1000)::int8
         FROM payments p JOIN orders o ON o.id = p.order_id
         WHERE p.state = 'open'
           AND ((o.status = 'created' AND o.pay_by <= now()) OR o.status = 'cancelled')
         ORDER BY coalesce(o.cancelled_at, o.pay_by) LIMIT $1",
    )
    .bind(limit)
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(session, provider, late_ms)| OpenPastDeadline {
            session,
            provider,
            late_ms,
        })
        .collect())
}
