//! After the rush, the shopper's side: paying an order before its deadline through the payment
//! provider's hosted page, or cancelling it (its unit goes back on sale, and the shopper may buy
//! again). Transitions are conditional in PostgreSQL (`store::orders::lifecycle`); what the
//! provider says of a payment is applied by [`crate::orders::payment_word`]; a cancellation's unit
//! reaches Redis through the stock-move outbox ([`crate::orders::restock`]).
//!
//! No database lock is held across a provider call: **Pay now** reads the order, opens the
//! hosted payment (its idempotency key is the order's and the attempt's, so a double click
//! opens one), then records it under the order's lock only if the order can still be paid; a
//! session opened for an order that could not (cancelled meanwhile) is expired at once. A
//! create that fails in any way moves the order's attempt on, so the next Pay now asks with a
//! new key: a provider that saved the failure against the old one (Stripe saves 500s) never
//! replays it (design.md decision 41). A cancellation that raced a Pay now expires the session
//! recorded behind its back, and the sweep expires any left open on a cancelled order.

use crate::{
    domain::{Canceller, OrderId, OrderStatus, UserId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        store::{
            self,
            orders::lifecycle::Current,
            payments::{ForCheckout, NewPayment},
        },
    },
    orders::{
        payment::{session_expiry, CheckoutRequest, Opened, PaymentError, SessionStatus},
        payment_word::{self, PaymentApplied},
        restock,
    },
    sale, Core,
};

/// How often a shopper's return from the hosted page asks the provider at most, per order (a
/// page that reloads itself must not hammer the provider).
const RETURN_LOOKUP_EVERY_MS: i64 = 2_000;

/// Why a payment or a cancellation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum CheckoutError {
    /// No such order of this shopper's (someone else's answers the same, I7).
    #[error("no such order")]
    NotFound,
    /// Not yet written: it can be paid or cancelled in a moment.
    #[error("the order is still being written")]
    StillQueued,
    /// The worker refused it: there is nothing to pay or cancel.
    #[error("the order failed")]
    Failed,
    /// Paying an order that was cancelled (by the shopper or the deadline).
    #[error("the order was cancelled")]
    Cancelled,
    /// Paying after the deadline (the sweep is about to cancel it).
    #[error("the payment deadline has passed")]
    Expired,
    /// Cancelling a paid order, or paying it again.
    #[error("the order is paid")]
    AlreadyPaid,
    /// A free voucher's order: complete, nothing to pay or cancel.
    #[error("the order is confirmed; it is free")]
    Confirmed,
    /// The provider did not answer (or none is configured): the same request may go through
    /// shortly; the order keeps its deadline.
    #[error("payment: {0}")]
    PaymentUnavailable(String),
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(CheckoutError);

impl Unavailable for CheckoutError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::PaymentUnavailable(_) => true,
            Self::NotFound
            | Self::StillQueued
            | Self::Failed
            | Self::Cancelled
            | Self::Expired
            | Self::AlreadyPaid
            | Self::Confirmed => false,
        }
    }
}

impl From<PaymentError> for CheckoutError {
    fn from(e: PaymentError) -> Self {
        if !matches!(e, PaymentError::Unavailable(_)) {
            // The provider refused a request of ours: a bad key or setting, an operator's
            // matter. The shopper hears "try again shortly" either way.
            tracing::error!(error = %e, "the payment provider refused the shop's request");
        }
        Self::PaymentUnavailable(e.to_string())
    }
}

/// Where to send the shopper to pay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentStart {
    pub redirect_url: String,
}

/// The order page's address on the shop's public origin; `returning` marks the way back from a
/// payment (the page then asks the provider if the webhook has not come).
pub fn order_url(core: &Core, order: OrderId, returning: bool) -> String {
    let origin = core.config.payments.return_origin.as_deref().unwrap_or("");
    let base = format!("{origin}/orders/{order}");
    if returning {
        format!("{base}?payment=return")
    } else {
        base
    }
}

/// **Pay now**: the hosted payment of `order` for its shopper, opened if none is (a double
/// click or a retry gets the same one).
pub async fn pay(
    core: &Core,
    shopper: UserId,
    order: OrderId,
) -> Result<PaymentStart, CheckoutError> {
    let Some(o) = store::payments::for_checkout(&core.db, order, shopper).await? else {
        return Err(not_written(core, shopper, order).await);
    };
    let (price_cents, pay_by) = match o.current {
        Current::Created {
            overdue: false,
            price_cents,
            pay_by,
            ..
        } => (price_cents, pay_by),
        other => return Err(refusal(other)),
    };
    if let Some(redirect_url) = o.open_url {
        return Ok(PaymentStart { redirect_url });
    }
    let opened = open_session(core, order, &o, price_cents, pay_by).await?;
    let redirect_url = record(core, shopper, order, &o, price_cents, &opened).await?;
    tracing::info!(%order, session = %opened.session, "payment opened");
    Ok(PaymentStart { redirect_url })
}

/// Asks the provider for a hosted payment of `order` under its next attempt's key; a create
/// that fails moves the attempt on.
async fn open_session(
    core: &Core,
    order: OrderId,
    o: &ForCheckout,
    price_cents: i64,
    pay_by: chrono::DateTime<chrono::Utc>,
) -> Result<Opened, CheckoutError> {
    let opened = core
        .payments
        .open(CheckoutRequest {
            order,
            attempt: o.next_attempt,
            title: &o.title,
            amount_cents: price_cents,
            currency: &core.config.payments.currency,
            success_url: order_url(core, order, true),
            cancel_url: order_url(core, order, false),
            expires_at: session_expiry(pay_by, chrono::Utc::now()),
        })
        .await;
    let opened = match opened {
        Ok(opened) => opened,
        Err(e) => {
            // Whatever the provider saved against this attempt's key stays there: the next
            // Pay now takes the next attempt. (A session created behind a lost answer was
            // never shown to anyone and lapses at its `expires_at`.)
            store::payments::attempt_failed(&core.db, order, o.next_attempt).await?;
            return Err(e.into());
        }
    };
    if !redirectable(&opened.redirect_url) {
        return Err(CheckoutError::PaymentUnavailable(format!(
            "the provider's payment page {:?} is not an address to send a shopper to",
            opened.redirect_url
        )));
    }
    Ok(opened)
}

/// Records `opened` under the order's lock if the order can still be paid (else expires it);
/// where the shopper goes: this session, or one recorded first by a racing Pay now.
async fn record(
    core: &Core,
    shopper: UserId,
    order: OrderId,
    o: &ForCheckout,
    price_cents: i64,
    opened: &Opened,
) -> Result<String, CheckoutError> {
    let mut tx = core.db.begin().await?;
    let refused = match store::orders::lifecycle::lock_for_update(&mut tx, order, shopper).await? {
        Some(Current::Created { overdue: false, .. }) => None,
        Some(other) => Some(refusal(other)),
        None => Some(CheckoutError::Cancelled),
    };
    if let Some(refused) = refused {
        drop(tx);
        // Opened for an order that can no longer take it: closed before anyone pays.
        if let Err(e) = core.payments.expire(&opened.session).await {
            tracing::warn!(%order, error = %e, "expiring a session opened too late");
        }
        return Err(refused);
    }
    let recorded = store::payments::record_open(
        &mut tx,
        &NewPayment {
            session: &opened.session,
            order,
            provider: core.payments.name(),
            attempt: o.next_attempt,
            redirect_url: &opened.redirect_url,
            amount_cents: price_cents,
            currency: core.config.payments.currency.as_str(),
            expires_at: opened.expires_at,
        },
    )
    .await?;
    tx.commit().await?;
    Ok(match recorded {
        Some(url) if url != opened.redirect_url => {
            // Another attempt's session was recorded first (two Pay now raced across a failed
            // create): the shopper goes there, and this one, shown to nobody, is closed.
            if let Err(e) = core.payments.expire(&opened.session).await {
                tracing::warn!(%order, error = %e, "expiring a session that lost a race; it lapses by itself");
            }
            url
        }
        Some(url) => url,
        None => opened.redirect_url.clone(),
    })
}

/// Why an order that is not awaiting payment in time cannot be paid.
fn refusal(current: Current) -> CheckoutError {
    match current {
        Current::Created { .. } => CheckoutError::Expired,
        Current::Paid => CheckoutError::AlreadyPaid,
        Current::Confirmed => CheckoutError::Confirmed,
        Current::Cancelled => CheckoutError::Cancelled,
    }
}

/// An absolute http(s) address or a path on the shop, of visible ASCII only (it becomes a
/// `Location` header).
fn redirectable(url: &str) -> bool {
    let absolute = url.starts_with("https://") || url.starts_with("http://");
    let path = url.starts_with('/') && !url.starts_with("//");
    (absolute || path) && url.bytes().all(|b| b.is_ascii_graphic())
}

/// The shopper is back from the hosted page: its open payment (or one the shop closed without
/// the provider's word, still watched) is asked of the provider (at most every 2 s per
/// order), so a lost webhook neither keeps a paid order waiting nor keeps money paid too late.
/// A provider out of reach changes nothing here (the sweep asks again).
pub async fn returned(core: &Core, shopper: UserId, order: OrderId) -> Result<(), CheckoutError> {
    let Some(session) =
        store::payments::payable_of(&core.db, order, shopper, RETURN_LOOKUP_EVERY_MS, true).await?
    else {
        return Ok(());
    };
    store::payments::checked(&core.db, &session).await?;
    match core.payments.lookup(&session).await {
        Ok(state) => {
            payment_word::apply(core, &state, None).await?;
        }
        Err(e) => {
            tracing::warn!(%order, error = %e, "looking up a payment on the shopper's return")
        }
    }
    Ok(())
}

/// Cancels `order` for its shopper; cancelling a cancelled order changes nothing (success).
/// An open hosted payment is expired first: if the shopper paid meanwhile, the payment wins
/// and the cancellation answers `AlreadyPaid`. The unit is given back in PostgreSQL in the same
/// transaction as the cancellation, then in Redis at once (or by the sweep, if this process
/// dies first).
pub async fn cancel(core: &Core, shopper: UserId, order: OrderId) -> Result<(), CheckoutError> {
    close_open_payment(core, shopper, order).await?;
    let mut tx = core.db.begin().await?;
    let voucher = match store::orders::lifecycle::lock_for_update(&mut tx, order, shopper).await? {
        None => return Err(not_written(core, shopper, order).await),
        Some(Current::Cancelled) => return Ok(()),
        Some(Current::Paid) => return Err(CheckoutError::AlreadyPaid),
        Some(Current::Confirmed) => return Err(CheckoutError::Confirmed),
        Some(Current::Created { voucher, .. }) => voucher,
    };
    let step = store::orders::lifecycle::cancel_locked(
        &mut tx,
        order,
        shopper,
        voucher,
        Canceller::Shopper,
    )
    .await?;
    tx.commit().await?;
    metrics::counter!("seckill_orders_cancelled_total", "by" => "shopper").increment(1);
    if let Err(e) = restock::apply(core, voucher, &step).await {
        tracing::warn!(%order, error = %e, "returning a cancelled unit to Redis; the sweep will");
    }
    // A Pay now that raced this cancellation may have recorded a session after the first
    // close: it must not stay payable (money it still takes is refunded; the sweep closes it
    // if the provider does not answer now).
    if let Err(e) = close_open_payment(core, shopper, order).await {
        tracing::warn!(%order, error = %e, "closing a session opened during the cancellation; the sweep will");
    }
    Ok(())
}

/// Expires the order's open hosted payment, if any, applying what the provider says.
async fn close_open_payment(
    core: &Core,
    shopper: UserId,
    order: OrderId,
) -> Result<(), CheckoutError> {
    let Some(session) = store::payments::open_of(&core.db, order, shopper, 0).await? else {
        return Ok(());
    };
    let state = core.payments.expire(&session).await?;
    match payment_word::apply(core, &state, None).await? {
        PaymentApplied::Paid => Err(CheckoutError::AlreadyPaid),
        _ if state.status == SessionStatus::Open => Err(CheckoutError::PaymentUnavailable(
            "the payment session could not be closed".into(),
        )),
        _ => {
            // Complete but not paid (an asynchronous method pending): closed here; money that
            // still arrives for the cancelled order is refunded.
            if !state.paid {
                store::payments::close_if_open(
                    &core.db,
                    &session,
                    state.status != SessionStatus::Expired,
                )
                .await?;
            }
            Ok(())
        }
    }
}

/// Why PostgreSQL has no written order `order` of `shopper`'s: still queued, failed, or none.
async fn not_written(core: &Core, shopper: UserId, order: OrderId) -> CheckoutError {
    match sale::order_status(core, shopper, order).await {
        Ok(Some(v)) => match v.status {
            OrderStatus::Queued => CheckoutError::StillQueued,
            OrderStatus::Failed { .. } => CheckoutError::Failed,
            // Written meanwhile: the client may simply try again.
            OrderStatus::Created { .. }
            | OrderStatus::Paid
            | OrderStatus::Confirmed
            | OrderStatus::Cancelled { .. } => CheckoutError::StillQueued,
        },
        Ok(None) => CheckoutError::NotFound,
        Err(e) => CheckoutError::Backend(e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_plain_addresses_are_redirected_to() {
        for ok in [
            "https://checkout.stripe.com/c/pay/cs_1",
            "/orders/1?payment=return",
        ] {
            assert!(super::redirectable(ok), "{ok}");
        }
        for bad in [
            "//evil.example",
            "javascript:alert(1)",
            "https://a b",
            "https://a\r\n",
            "",
        ] {
            assert!(!super::redirectable(bad), "{bad:?}");
        }
    }
}
