//! What an admin lists, and what the provider says later of money it took (found by its
//! reference).

use chrono::{DateTime, Utc};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use super::PaymentState;
use crate::domain::{OrderId, VoucherId};

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
