//! The `payments` table (one row per hosted payment the shop opened, design.md decisions 33
//! and 41) and `payment_events` (the provider's notifications already applied): a payment's
//! row and its checkout here; what watches it (`watch.rs`), its refunds (`refunds.rs`), and
//! what an admin lists and what the provider says later (`admin.rs`).

mod admin;
mod refunds;
mod watch;

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use chrono::{DateTime, Utc};

pub use self::{admin::*, refunds::*, watch::*};
use super::orders::lifecycle::Current;
use crate::domain::{OrderId, UserId};

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
/// `orders::payment_word`).
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
