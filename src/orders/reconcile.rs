//! The money invariants M1–M3 (design.md §1), checked against what the payment provider says
//! it took and gave back: the tests and `bench payments` call it with their stand-in's word,
//! an operator could with the provider's exports.

use std::collections::BTreeMap;

use crate::{infra::backend::Backend, Core};

/// A payment the provider captured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// The hosted payment that took it.
    pub session: String,
    /// The provider's reference of the money (Stripe: the payment intent).
    pub payment_ref: Option<String>,
    pub amount_cents: i64,
}

impl From<(String, Option<String>, i64)> for Captured {
    /// `(session, payment_ref, amount_cents)`.
    fn from((session, payment_ref, amount_cents): (String, Option<String>, i64)) -> Self {
        Self {
            session,
            payment_ref,
            amount_cents,
        }
    }
}

/// A refund the provider made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refunded {
    pub payment_ref: String,
    pub amount_cents: i64,
}

impl From<(String, i64)> for Refunded {
    /// `(payment_ref, amount_cents)`.
    fn from((payment_ref, amount_cents): (String, i64)) -> Self {
        Self {
            payment_ref,
            amount_cents,
        }
    }
}

/// Every way the books break M1–M3, in words (empty: they hold).
pub async fn money_violations(
    core: &Core,
    captured: &[Captured],
    refunded: &[Refunded],
) -> Result<Vec<String>, Backend> {
    let mut broken = Vec::new();
    for c in captured {
        let row: Option<(String, String)> = sqlx::query_as(
            "SELECT p.state, o.status FROM payments p JOIN orders o ON o.id = p.order_id
             WHERE p.session_id = $1",
        )
        .bind(&c.session)
        .fetch_optional(&core.db)
        .await?;
        let accounted = matches!(
            row.as_ref().map(|(p, o)| (p.as_str(), o.as_str())),
            Some(("paid", "paid"))
                | Some(("refunded" | "refund_due" | "refund_failed", _))
                // Held for the admins only while its order can still be paid.
                | Some(("flagged", "created"))
        );
        if !accounted {
            broken.push(format!("M1: {}'s money is {row:?}", c.session));
        }
    }
    let (cancelled_paid, paid_without_one): (i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE o.status = 'cancelled' AND p.n > 0),
                count(*) FILTER (WHERE o.status = 'paid' AND p.n <> 1)
         FROM orders o CROSS JOIN LATERAL (
             SELECT count(*) AS n FROM payments WHERE order_id = o.id AND state = 'paid'
         ) p",
    )
    .fetch_one(&core.db)
    .await?;
    if cancelled_paid + paid_without_one > 0 {
        broken.push(format!(
            "M2: {cancelled_paid} cancelled orders paid, {paid_without_one} paid orders without exactly one paying session"
        ));
    }
    let mut per_payment: BTreeMap<&str, (usize, i64)> = BTreeMap::new();
    for r in refunded {
        let e = per_payment.entry(&r.payment_ref).or_default();
        e.0 += 1;
        e.1 += r.amount_cents;
    }
    for (payment, (n, amount)) in per_payment {
        let took = captured
            .iter()
            .find(|c| c.payment_ref.as_deref() == Some(payment))
            .map_or(0, |c| c.amount_cents);
        if n != 1 || amount > took {
            broken.push(format!(
                "M3: {payment} refunded {n} times, {amount} of {took}"
            ));
        }
    }
    Ok(broken)
}
