//! The payment side of the sweep (one instance at a time, under its lock; see
//! `jobs::sweeper`), run before the deadline pass cancels what is unpaid:
//!
//! 1. **Lost webhooks**: open payments not heard of for a minute are looked up, least recently
//!    asked first, at most [`LOOKUPS_PER_PASS`] a pass (a provider limits its API's rate:
//!    Stripe's is about 100 requests a second), so a paid order is marked paid within a few
//!    sweeps even if every webhook is dropped.
//! 2. **The deadline**: an order past its deadline whose payment is still open has it expired
//!    at the provider first; if the provider answers that it was paid, the payment wins and
//!    the order is paid, not cancelled. Otherwise the payment is closed and the deadline pass
//!    cancels the order. A provider out of reach holds the cancellation back for
//!    [`GRACE_MS`] past the deadline at most (a shopper who paid in the last seconds keeps
//!    the order); after that the order is cancelled anyway, and money that still arrives is
//!    refunded.
//! 3. **Refunds owed** are made (idempotent at the provider), and retried every pass until done.

use crate::{
    infra::{backend::Backend, store},
    orders::{
        payment::{PaymentError, SessionStatus},
        settle::{self, Settled},
    },
    Core,
};

/// Lookups of open payments per pass at most.
pub const LOOKUPS_PER_PASS: i64 = 100;
/// An open payment not heard of for this long is looked up (the webhook may be lost).
pub const LOOKUP_AFTER_MS: i64 = 60_000;
/// Open payments of due orders expired per pass at most (the rest wait for the next pass).
const EXPIRIES_PER_PASS: i64 = 200;
/// Refunds made per pass at most.
const REFUNDS_PER_PASS: i64 = 100;
/// How long past its deadline an order waits for a provider out of reach to close its payment.
pub const GRACE_MS: i64 = 10 * 60_000;

/// What the payment steps of one pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PaymentsReport {
    /// Open payments asked of the provider.
    pub looked_up: usize,
    /// Orders found paid by a lookup or an expiry (their webhook had not come).
    pub paid_late: usize,
    /// Open payments of due orders closed (the orders are then cancelled).
    pub closed: usize,
    /// Due orders held back because the provider did not answer.
    pub held: usize,
    pub refunded: usize,
}

/// The three steps, in order.
pub async fn run(core: &Core) -> Result<PaymentsReport, Backend> {
    let mut report = PaymentsReport::default();
    look_up_stale(core, &mut report).await?;
    close_due(core, &mut report).await?;
    report.refunded = refund_owed(core, REFUNDS_PER_PASS).await;
    // Money the shop holds and owes back: an operator alerts on these staying up (the provider
    // refusing refunds, a key without the right to make them).
    let (owed, oldest_secs) = store::payments::refunds_owed(&core.db).await?;
    metrics::gauge!("seckill_payments_refunds_owed").set(owed as f64);
    metrics::gauge!("seckill_payments_refund_owed_oldest_seconds").set(oldest_secs);
    metrics::gauge!("seckill_payments_held_at_deadline").set(report.held as f64);
    Ok(report)
}

async fn look_up_stale(core: &Core, report: &mut PaymentsReport) -> Result<(), Backend> {
    let provider = core.payments.name();
    let stale =
        store::payments::stale_open(&core.db, provider, LOOKUP_AFTER_MS, LOOKUPS_PER_PASS).await?;
    for session in stale {
        store::payments::checked(&core.db, &session).await?;
        report.looked_up += 1;
        match core.payments.lookup(&session).await {
            Ok(state) => {
                if settle::apply(core, &state, None).await? == Settled::Paid {
                    report.paid_late += 1;
                }
            }
            Err(e) => {
                tracing::warn!(%session, error = %e, "looking up an open payment");
                // The provider is out of reach: the rest can wait for the next pass.
                break;
            }
        }
    }
    Ok(())
}

async fn close_due(core: &Core, report: &mut PaymentsReport) -> Result<(), Backend> {
    // After one call finds the provider out of reach, the rest of the pass does not wait on it
    // (each call may take its timeout twice): they are held, or closed past the grace.
    let mut reachable = true;
    for due in store::payments::open_past_deadline(&core.db, EXPIRIES_PER_PASS).await? {
        let answer = if due.provider != core.payments.name() {
            Err(format!(
                "its provider {:?} is not the configured one",
                due.provider
            ))
        } else if !reachable {
            Err("the provider did not answer earlier in this pass".to_owned())
        } else {
            let answer = core.payments.expire(&due.session).await;
            reachable = !matches!(answer, Err(PaymentError::Unavailable(_)));
            answer.map_err(|e| e.to_string())
        };
        match answer {
            Ok(state) => match settle::apply(core, &state, None).await? {
                Settled::Paid => report.paid_late += 1,
                _ if state.status == SessionStatus::Open => {
                    tracing::warn!(session = %due.session, "the provider left an expired payment open");
                    report.held += 1;
                }
                _ => {
                    store::payments::close_if_open(&core.db, &due.session).await?;
                    report.closed += 1;
                }
            },
            Err(why) if due.late_ms < GRACE_MS => {
                tracing::warn!(session = %due.session, error = %why,
                    "cannot close a payment at its order's deadline; the order waits");
                report.held += 1;
            }
            Err(why) => {
                tracing::warn!(session = %due.session, error = %why,
                    "cannot close a payment 10 min past its order's deadline; cancelling anyway (money that still arrives is refunded)");
                store::payments::close_if_open(&core.db, &due.session).await?;
                report.closed += 1;
            }
        }
    }
    Ok(())
}

/// Makes up to `limit` refunds owed; how many were made. A failure leaves the rest for the
/// next pass.
pub async fn refund_owed(core: &Core, limit: i64) -> usize {
    let due = match store::payments::refunds_due(&core.db, core.payments.name(), limit).await {
        Ok(due) => due,
        Err(e) => {
            tracing::warn!(error = %e, "reading the refunds owed");
            return 0;
        }
    };
    let mut made = 0;
    for (session, payment_ref) in due {
        match settle::refund(core, &session, payment_ref.as_deref()).await {
            Ok(()) => made += 1,
            Err(e) => {
                tracing::warn!(%session, error = %e, "a refund owed is not made yet");
                break;
            }
        }
    }
    made
}
