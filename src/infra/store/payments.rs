//! The `payments` table (one row per hosted payment the shop opened, design.md decision 33)
//! and `payment_events` (the provider's notifications already applied).

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use chrono::{DateTime, Utc};

use super::orders::lifecycle::Current;
use crate::domain::{OrderId, UserId, VoucherId};

/// Where a hosted payment stands in the shop's books (the `state` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentState {
    Open,
    Paid,
    Closed,
    Flagged,
    RefundDue,
    /// The provider refused the refund for good: an admin's matter, blocking no other refund.
    RefundFailed,
    Refunded,
}

impl PaymentState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Paid => "paid",
            Self::Closed => "closed",
            Self::Flagged => "flagged",
            Self::RefundDue => "refund_due",
            Self::RefundFailed => "refund_failed",
            Self::Refunded => "refunded",
        }
    }

    fn parse(text: &str) -> Result<Self, sqlx::Error> {
        Ok(match text {
            "open" => Self::Open,
            "paid" => Self::Paid,
            "closed" => Self::Closed,
            "flagged" => Self::Flagged,
            "refund_due" => Self::RefundDue,
            "refund_failed" => Self::RefundFailed,
            "refunded" => Self::Refunded,
            other => {
                return Err(sqlx::Error::Decode(
                    format!("unknown payment state {other:?}").into(),
                ))
            }
        })
    }
}

/// An order as **Pay now** sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForCheckout {
    pub current: Current,
    /// Its voucher's title (the line item's name).
    pub title: String,
    /// Its open hosted payment's redirect address, if one is open.
    pub open_url: Option<String>,
    /// The attempt number a new hosted payment would take (moved on after each session
    /// recorded and each failed create: its idempotency key is never a saved failure's).
    pub next_attempt: i32,
}

/// `user`'s written order `order` as **Pay now** sees it (no lock: the write that follows
/// checks again under the order's lock).
pub async fn for_checkout(
    db: &PgPool,
    order: OrderId,
    user: UserId,
) -> Result<Option<ForCheckout>, sqlx::Error> {
    type Row = (
        String,
        i64,
        DateTime<Utc>,
        bool,
        i64,
        String,
        Option<String>,
        i32,
    );
    let row: Option<Row> = sqlx::query_as(
        "SELECT o.status, o.voucher_id, o.pay_by, o.pay_by <= now(), v.price_cents, v.title,
                (SELECT p.redirect_url FROM payments p WHERE p.order_id = o.id AND p.state = 'open'),
                o.checkout_attempt
         FROM orders o JOIN vouchers v ON v.id = o.voucher_id
         WHERE o.id = $1 AND o.user_id = $2",
    )
    .bind(order.as_i64())
    .bind(user.get())
    .fetch_optional(db)
    .await?;
    row.map(
        |(status, voucher, pay_by, overdue, price, title, open_url, next_attempt)| {
            Ok(ForCheckout {
                current: Current::decode(order, &status, voucher, pay_by, overdue, price)?,
                title,
                open_url,
                next_attempt,
            })
        },
    )
    .transpose()
}

/// A hosted payment just opened, to record.
#[derive(Debug, Clone)]
pub struct NewPayment<'a> {
    pub session: &'a str,
    pub order: OrderId,
    pub provider: &'a str,
    pub attempt: i32,
    pub redirect_url: &'a str,
    pub amount_cents: i64,
    pub currency: &'a str,
    /// When the provider lets it lapse by itself.
    pub expires_at: DateTime<Utc>,
}

/// Records an opened payment in the caller's transaction (which holds the order's lock) and
/// moves the order's attempt past it; the order's open payment's redirect address after it
/// (the same session when a double click opened it twice, the first one when two attempts
/// raced).
pub async fn record_open(
    tx: &mut Transaction<'_, Postgres>,
    p: &NewPayment<'_>,
) -> Result<Option<String>, sqlx::Error> {
    sqlx::query(
        "INSERT INTO payments (session_id, order_id, provider, attempt, redirect_url, amount_cents, currency, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT DO NOTHING",
    )
    .bind(p.session)
    .bind(p.order.as_i64())
    .bind(p.provider)
    .bind(p.attempt)
    .bind(p.redirect_url)
    .bind(p.amount_cents)
    .bind(p.currency)
    .bind(p.expires_at)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "UPDATE orders SET checkout_attempt = greatest(checkout_attempt, $2 + 1) WHERE id = $1",
    )
    .bind(p.order.as_i64())
    .bind(p.attempt)
    .execute(&mut **tx)
    .await?;
    sqlx::query_scalar("SELECT redirect_url FROM payments WHERE order_id = $1 AND state = 'open'")
        .bind(p.order.as_i64())
        .fetch_optional(&mut **tx)
        .await
}

/// A create of attempt `attempt` failed: the next Pay now takes the next attempt (a new
/// idempotency key), unless another Pay now moved it already.
pub async fn attempt_failed(db: &PgPool, order: OrderId, attempt: i32) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE orders SET checkout_attempt = $2 + 1 WHERE id = $1 AND checkout_attempt = $2",
    )
    .bind(order.as_i64())
    .bind(attempt)
    .execute(db)
    .await?;
    Ok(())
}

/// A recorded hosted payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentRow {
    pub session: String,
    pub order: OrderId,
    pub provider: String,
    pub state: PaymentState,
    pub amount_cents: i64,
    pub currency: String,
    pub payment_ref: Option<String>,
}

type PaymentTuple = (String, i64, String, String, i64, String, Option<String>);

fn payment_row(
    (session, order, provider, state, amount_cents, currency, payment_ref): PaymentTuple,
) -> Result<PaymentRow, sqlx::Error> {
    Ok(PaymentRow {
        session,
        order: OrderId::from_db(order).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
        provider,
        state: PaymentState::parse(&state)?,
        amount_cents,
        currency,
        payment_ref,
    })
}

const PAYMENT_COLUMNS: &str =
    "session_id, order_id, provider, state, amount_cents, currency, payment_ref";

/// The order payment `session` is for (unlocked: it never changes).
pub async fn order_of(
    tx: &mut Transaction<'_, Postgres>,
    session: &str,
) -> Result<Option<OrderId>, sqlx::Error> {
    let order: Option<i64> =
        sqlx::query_scalar("SELECT order_id FROM payments WHERE session_id = $1")
            .bind(session)
            .fetch_optional(&mut **tx)
            .await?;
    order
        .map(|id| OrderId::from_db(id).map_err(|e| sqlx::Error::Decode(Box::new(e))))
        .transpose()
}

/// Locks the payment `session` in the caller's transaction (after its order's row: see
/// `orders::settle`).
pub async fn lock(
    tx: &mut Transaction<'_, Postgres>,
    session: &str,
) -> Result<Option<PaymentRow>, sqlx::Error> {
    let row: Option<PaymentTuple> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT {PAYMENT_COLUMNS} FROM payments WHERE session_id = $1 FOR UPDATE"
    )))
    .bind(session)
    .fetch_optional(&mut **tx)
    .await?;
    row.map(payment_row).transpose()
}

/// Moves payment `session` to `state`, with the reference of its money and why it was flagged
/// when known (a value already recorded is kept).
pub async fn set_state(
    conn: &mut PgConnection,
    session: &str,
    state: PaymentState,
    payment_ref: Option<&str>,
    mismatch: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET state = $2, payment_ref = coalesce($3, payment_ref),
                mismatch = coalesce($4, mismatch), updated_at = now(), checked_at = now()
         WHERE session_id = $1",
    )
    .bind(session)
    .bind(state.as_str())
    .bind(payment_ref)
    .bind(mismatch)
    .execute(conn)
    .await?;
    Ok(())
}

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

/// Money held for `orders` that did not pay them (flagged) is owed back now they are
/// cancelled.
pub async fn owe_refunds_of_cancelled(
    conn: &mut PgConnection,
    orders: &[i64],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE payments SET state = 'refund_due', updated_at = now()
         WHERE order_id = ANY($1) AND state = 'flagged'",
    )
    .bind(orders)
    .execute(conn)
    .await?;
    Ok(())
}

/// Records notification `event_id` of `provider` as applied in the caller's transaction;
/// `false` when it already was (a replay: apply nothing).
pub async fn first_delivery(
    tx: &mut Transaction<'_, Postgres>,
    provider: &str,
    event_id: &str,
    kind: &str,
    session: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let inserted = sqlx::query(
        "INSERT INTO payment_events (provider, event_id, kind, session_id)
         VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
    )
    .bind(provider)
    .bind(event_id)
    .bind(kind)
    .bind(session)
    .execute(&mut **tx)
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

/// A payment found by the reference of its money, locked in the caller's transaction: its
/// session and state.
pub async fn lock_by_ref(
    tx: &mut Transaction<'_, Postgres>,
    payment_ref: &str,
) -> Result<Option<(String, PaymentState)>, sqlx::Error> {
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT session_id, state FROM payments WHERE payment_ref = $1 FOR UPDATE")
            .bind(payment_ref)
            .fetch_optional(&mut **tx)
            .await?;
    row.map(|(session, state)| Ok((session, PaymentState::parse(&state)?)))
        .transpose()
}

/// Records a dispute's status on payment `session`.
pub async fn set_dispute(
    conn: &mut PgConnection,
    session: &str,
    status: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE payments SET dispute = $2, updated_at = now() WHERE session_id = $1")
        .bind(session)
        .bind(status)
        .execute(conn)
        .await?;
    Ok(())
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

/// Which payments an admin lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PaymentFilter {
    /// Flagged, refund owed or refused, disputed (open or lost).
    Attention,
    Paid,
    Refunded,
}

impl PaymentFilter {
    /// From its name in a query: `attention`, `paid`, `refunded`.
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "attention" => Some(Self::Attention),
            "paid" => Some(Self::Paid),
            "refunded" => Some(Self::Refunded),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Attention => "attention",
            Self::Paid => "paid",
            Self::Refunded => "refunded",
        }
    }
}

/// A payment as an admin sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentListed {
    pub session: String,
    pub order: OrderId,
    pub voucher: VoucherId,
    pub amount_cents: i64,
    pub currency: String,
    pub state: PaymentState,
    /// `open`, `won`, `lost`, when disputed.
    pub dispute: Option<String>,
    pub payment_ref: Option<String>,
    pub updated_at: DateTime<Utc>,
}

/// The payments `filter` selects, the newest change first: `limit` from `offset`, and how many
/// there are in all.
pub async fn list(
    db: &PgPool,
    filter: PaymentFilter,
    limit: i64,
    offset: i64,
) -> Result<(Vec<PaymentListed>, i64), sqlx::Error> {
    let condition = match filter {
        PaymentFilter::Attention => {
            "(p.state IN ('flagged', 'refund_due', 'refund_failed') OR p.dispute IN ('open', 'lost'))"
        }
        PaymentFilter::Paid => "p.state = 'paid'",
        PaymentFilter::Refunded => "p.state = 'refunded'",
    };
    type Row = (
        String,
        i64,
        i64,
        i64,
        String,
        String,
        Option<String>,
        Option<String>,
        DateTime<Utc>,
    );
    let rows: Vec<Row> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT p.session_id, p.order_id, o.voucher_id, p.amount_cents, p.currency, p.state,
                p.dispute, p.payment_ref, p.updated_at
         FROM payments p JOIN orders o ON o.id = p.order_id
         WHERE {condition}
         ORDER BY p.updated_at DESC, p.session_id LIMIT $1 OFFSET $2"
    )))
    .bind(limit)
    .bind(offset)
    .fetch_all(db)
    .await?;
    let total: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "SELECT count(*) FROM payments p WHERE {condition}"
    )))
    .fetch_one(db)
    .await?;
    let listed = rows
        .into_iter()
        .map(
            |(
                session,
                order,
                voucher,
                amount_cents,
                currency,
                state,
                dispute,
                payment_ref,
                updated_at,
            )| {
                Ok(PaymentListed {
                    session,
                    order: OrderId::from_db(order).map_err(|e| sqlx::Error::Decode(Box::new(e)))?,
                    voucher: VoucherId::from_db(voucher),
                    amount_cents,
                    currency,
                    state: PaymentState::parse(&state)?,
                    dispute,
                    payment_ref,
                    updated_at,
                })
            },
        )
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    Ok((listed, total))
}
