//! The development provider (`SECKILL_DEV_PAYMENTS=true`): its "hosted page" approves at once.
//! Opening a payment sends the shopper straight back to the order's return address, and the
//! session is paid from the moment it exists, so the return's lookup (or the sweep's) marks the
//! order paid through the same path a real provider's payment takes. It keeps no state: a
//! session's name carries what it charged (`dev_<order>_<attempt>_<amount>_<currency>`).
//! Nothing is charged; start-up logs a WARN and every page says "Development mode".

use futures::future::BoxFuture;

use super::{CheckoutRequest, Opened, PaymentError, PaymentProvider, SessionState, SessionStatus};

/// The development provider.
#[derive(Debug, Default)]
pub struct DevPayments;

/// The state of a session this provider named, which is always paid.
fn state(session: &str) -> Result<SessionState, PaymentError> {
    let not_ours = || PaymentError::Refused(format!("{session:?} is not a dev payment session"));
    let mut parts = session
        .strip_prefix("dev_")
        .ok_or_else(not_ours)?
        .split('_');
    let (Some(order), Some(attempt), Some(amount), Some(currency), None) = (
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
        parts.next(),
    ) else {
        return Err(not_ours());
    };
    Ok(SessionState {
        session: session.to_owned(),
        status: SessionStatus::Complete,
        paid: true,
        amount_cents: amount.parse().map_err(|_| not_ours())?,
        currency: currency.to_owned(),
        payment_ref: Some(format!("dev_pay_{order}_{attempt}")),
    })
}

impl PaymentProvider for DevPayments {
    fn name(&self) -> &'static str {
        "dev"
    }

    fn open<'a>(&'a self, r: CheckoutRequest<'a>) -> BoxFuture<'a, Result<Opened, PaymentError>> {
        Box::pin(async move {
            Ok(Opened {
                session: format!(
                    "dev_{}_{}_{}_{}",
                    r.order, r.attempt, r.amount_cents, r.currency
                ),
                redirect_url: r.success_url,
                expires_at: r.expires_at,
            })
        })
    }

    fn lookup<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>> {
        Box::pin(async move { state(session) })
    }

    fn expire<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>> {
        // Paid the moment it opened: too late to expire, the payment wins.
        Box::pin(async move { state(session) })
    }

    fn refund<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), PaymentError>> {
        Box::pin(async { Ok(()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::{Currency, OrderId};

    #[tokio::test]
    async fn a_dev_session_is_paid_what_it_was_opened_for() {
        let order = OrderId::from_parts(1, 2).expect("id");
        let cny: Currency = "cny".parse().expect("currency");
        let opened = DevPayments
            .open(CheckoutRequest {
                order,
                attempt: 1,
                title: "t",
                amount_cents: 990,
                currency: &cny,
                success_url: "http://shop/orders/1?payment=return".into(),
                cancel_url: "http://shop/orders/1".into(),
                expires_at: chrono::Utc::now(),
            })
            .await
            .expect("opened");
        assert_eq!(opened.redirect_url, "http://shop/orders/1?payment=return");
        let s = DevPayments.lookup(&opened.session).await.expect("known");
        assert!(s.paid && s.status == SessionStatus::Complete);
        assert_eq!((s.amount_cents, s.currency.as_str()), (990, "cny"));
        assert!(DevPayments.lookup("cs_test_1").await.is_err());
    }
}
