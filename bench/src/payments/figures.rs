//! The payments run's figures, read at quiescence, and their report.

use std::collections::BTreeMap;

use seckill::domain::VoucherId;

use super::{Intent, Outcome};
use crate::{
    report::{self, Report},
    scratch::Scratch,
};

pub(super) struct Figures {
    /// From a payment on the hosted page to its order reading "paid".
    paid: hdrhistogram::Histogram<u64>,
    /// Paid after the cancellation: money Stripe took late.
    pub late_paid: usize,
    refunded: i64,
    pub refund_failed: i64,
    /// The longest a unit was held past its deadline.
    held_ms: Option<f64>,
    stripe_calls: usize,
}

impl Figures {
    pub async fn read(
        scratch: &Scratch,
        voucher: VoucherId,
        outcomes: &BTreeMap<String, (Intent, Outcome)>,
        stripe_calls: usize,
    ) -> anyhow::Result<Self> {
        let mut paid = report::histogram()?;
        for (_, o) in outcomes.values() {
            if let Some(us) = o.paid_after_us {
                paid.record(us.max(1))?;
            }
        }
        let late_paid = outcomes.values().filter(|(_, o)| o.paid_late).count();
        let (refunded, refund_failed): (i64, i64) = sqlx::query_as(
            "SELECT count(*) FILTER (WHERE state = 'refunded'),
                    count(*) FILTER (WHERE state = 'refund_failed') FROM payments",
        )
        .fetch_one(&scratch.core.db)
        .await?;
        let held_ms: Option<f64> = sqlx::query_scalar(
            "SELECT (extract(epoch FROM max(cancelled_at - pay_by)) * 1000)::float8
             FROM orders WHERE voucher_id = $1 AND cancelled_by = 'deadline'",
        )
        .bind(voucher.get())
        .fetch_one(&scratch.core.db)
        .await?;
        Ok(Self {
            paid,
            late_paid,
            refunded,
            refund_failed,
            held_ms,
            stripe_calls,
        })
    }

    pub fn report(
        &self,
        shoppers: usize,
        stock: usize,
        orders: usize,
        settled_after: f64,
        violations: &[String],
    ) -> anyhow::Result<Report> {
        let Self {
            paid,
            late_paid,
            refunded,
            refund_failed,
            held_ms,
            stripe_calls,
        } = self;
        Ok(Report {
            name: "payments",
            title: format!(
                "Payments under Stripe's misbehaviour: {shoppers} shoppers, stock {stock}, {orders} orders"
            ),
            rows: vec![
                (
                    "payment on the hosted page → order paid".into(),
                    report::latency_row(paid),
                ),
                ("orders paid".into(), paid.len().to_string()),
                (
                    "paid after the cancellation (money Stripe took late)".into(),
                    late_paid.to_string(),
                ),
                (
                    "refunds made / refused for good".into(),
                    format!("{refunded} / {refund_failed}"),
                ),
                (
                    "longest a unit was held past its deadline".into(),
                    held_ms.map_or("none cancelled".into(), |ms| format!("{ms:.0} ms")),
                ),
                (
                    "Stripe API calls (every 10th answered 500)".into(),
                    stripe_calls.to_string(),
                ),
                (
                    "from the shoppers' first act to quiescence".into(),
                    format!("{settled_after:.1} s"),
                ),
                (
                    "invariants (I1–I4, M1–M3)".into(),
                    if violations.is_empty() {
                        "hold".into()
                    } else {
                        format!("{} broken", violations.len())
                    },
                ),
            ],
            notes: violations.iter().map(|v| format!("- {v}")).collect(),
            json: serde_json::json!({
                "paid": report::latency_json(paid),
                "late_paid": late_paid,
                "refunded": refunded,
                "refund_failed": refund_failed,
                "held_past_deadline_ms": held_ms,
                "stripe_calls": stripe_calls,
                "violations": violations,
            }),
        })
    }
}
