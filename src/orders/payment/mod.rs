//! Payment providers (design.md §2, decision 33). Real providers (Stripe Checkout, Alipay's
//! page pay, WeChat Pay) take the shopper to a page of theirs and tell the shop later, by a
//! signed notification, sometimes after the shop's deadline. So a provider does five things,
//! and the shop builds its one payment path on them:
//!
//! | call | when |
//! | --- | --- |
//! | [`PaymentProvider::open`] | **Pay now**: a hosted payment for the order, answered with where to send the shopper |
//! | [`PaymentProvider::notification`] | the provider's webhook: verified before anything is read, then what it says of a session |
//! | [`PaymentProvider::lookup`] | the shopper is back, or the webhook is late: the session as the provider knows it |
//! | [`PaymentProvider::expire`] | the deadline (or the shopper cancels): the session can no longer be paid; if it was paid first, its state says so and the payment wins |
//! | [`PaymentProvider::refund`] | money that arrived for an order that cannot take it (cancelled, or paid twice) goes back, idempotently |
//!
//! What the provider answers is applied to the order in one place ([`crate::orders::payment_word`]).
//! Providers: [`dev::DevPayments`] (its "hosted page" approves at once: the shopper is sent
//! straight back and the lookup finds the session paid; `SECKILL_DEV_PAYMENTS=true`),
//! [`stripe::Stripe`] (`SECKILL_STRIPE_*`), and [`NoPayments`] when neither is set (start-up
//! refuses that; it remains for tools that build a core without a provider).

pub mod dev;
pub mod stripe;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use reqwest::header::HeaderMap;

use crate::domain::{Currency, OrderId};

/// What the shop asks a provider to collect for one order.
#[derive(Debug, Clone)]
pub struct CheckoutRequest<'a> {
    pub order: OrderId,
    /// The order's payment attempts so far, this one included: the idempotency key of the
    /// session is the order's and this number's, so a double click or a retry opens one session.
    pub attempt: i32,
    /// The voucher's title, the line item's name on the hosted page.
    pub title: &'a str,
    pub amount_cents: i64,
    pub currency: &'a Currency,
    /// Where the provider sends the shopper after paying, and after giving up.
    pub success_url: String,
    pub cancel_url: String,
    /// When the provider is to let the session lapse by itself, should the shop never expire
    /// it ([`session_expiry`]).
    pub expires_at: DateTime<Utc>,
}

/// How long past its order's deadline a hosted payment lives at the provider unless the shop
/// expires it first: Stripe's shortest `expires_at` is 30 minutes after creation, and Pay now
/// opens one only before the deadline; a minute more absorbs clock skew. The deadline expires
/// it sooner; this bounds a session the shop could not expire (Stripe unreachable then), or
/// whose creation's answer never arrived.
pub const SESSION_LIFETIME: chrono::Duration = chrono::Duration::minutes(31);

/// Stripe's longest `expires_at` is 24 hours after creation; an hour less absorbs skew.
const SESSION_LIFETIME_MAX: chrono::Duration = chrono::Duration::hours(23);

/// When a hosted payment of an order due at `pay_by`, opened at `now` (before `pay_by`), lapses
/// at the provider: [`SESSION_LIFETIME`] after the deadline, the same for every request under
/// one idempotency key. From the clock it was `now + SESSION_LIFETIME`, so a double click that
/// straddled a second sent the same key with other parameters, which Stripe refuses
/// (`idempotency_error`): the shopper was told the payment was unavailable. Only a deadline
/// more than 22 hours off (`SECKILL_PAY_WITHIN_MS`) is brought within Stripe's 24 hours.
pub fn session_expiry(pay_by: DateTime<Utc>, now: DateTime<Utc>) -> DateTime<Utc> {
    (pay_by + SESSION_LIFETIME).min(now + SESSION_LIFETIME_MAX)
}

impl CheckoutRequest<'_> {
    /// The idempotency key of this session: one per order and attempt.
    pub fn idempotency_key(&self) -> String {
        format!("seckill-checkout-{}-{}", self.order, self.attempt)
    }
}

/// A hosted payment, opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    /// The provider's name for it (Stripe: `cs_…`).
    pub session: String,
    /// Where to send the shopper.
    pub redirect_url: String,
    /// When it lapses at the provider by itself.
    pub expires_at: DateTime<Utc>,
}

/// Where a hosted payment stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStatus {
    /// The shopper may still pay.
    Open,
    /// The shopper finished on the hosted page (paid, or an asynchronous method still pending
    /// or failed: see [`SessionState::paid`]).
    Complete,
    /// It can no longer be paid.
    Expired,
}

/// A hosted payment as the provider knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionState {
    pub session: String,
    pub status: SessionStatus,
    /// The money was taken (Stripe: `payment_status` `paid`).
    pub paid: bool,
    /// What was taken, in minor units and the currency's lower-case code: checked against the
    /// order before it counts.
    pub amount_cents: i64,
    pub currency: String,
    /// The provider's reference of the payment (Stripe: the payment intent `pi_…`), which a
    /// refund names.
    pub payment_ref: Option<String>,
}

/// What a verified notification says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The provider's ID of the event: each is applied once.
    pub event_id: String,
    /// Its type, as the provider names it (for the log and the record).
    pub kind: String,
    /// The hosted payment it is about, when it is one of the session events the shop acts on.
    pub session: Option<SessionState>,
    /// What it says of money already taken (a refund, a dispute), when it is one of those.
    pub money: Option<MoneyEvent>,
}

/// What the provider says of money after it was taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoneyEvent {
    /// A refund of the payment `payment_ref` (Stripe: `charge.refunded`, `refund.updated`).
    Refund {
        payment_ref: String,
        outcome: RefundOutcome,
    },
    /// A dispute of the payment `payment_ref` (Stripe: `charge.dispute.created`, `.closed`).
    Dispute {
        payment_ref: String,
        status: DisputeStatus,
    },
}

impl MoneyEvent {
    /// The payment it is about.
    pub fn payment_ref(&self) -> &str {
        match self {
            Self::Refund { payment_ref, .. } | Self::Dispute { payment_ref, .. } => payment_ref,
        }
    }
}

/// Where a refund stands at the provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefundOutcome {
    /// The money went back.
    Succeeded,
    /// It did not (the card was closed, …): the shop still owes it, an admin must act.
    Failed,
    /// Not known yet.
    Pending,
}

/// Where a dispute stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisputeStatus {
    Open,
    Won,
    Lost,
}

impl DisputeStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Won => "won",
            Self::Lost => "lost",
        }
    }
}

/// A provider call that did not go through.
#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// The provider answered that the request is wrong (a 4xx without an error code): a fault
    /// of this shop's (a bad parameter), or, for an expiry, a session that is no longer open.
    #[error("the payment provider refused: {0}")]
    Refused(String),
    /// The provider refused for good, naming why (Stripe's `error.code`:
    /// `charge_already_refunded`, `charge_disputed`, …): asking again changes nothing.
    #[error("the payment provider declined ({code}): {message}")]
    Declined { code: String, message: String },
    /// The provider refused the shop's key (401, 403: a revoked key, a restricted key without
    /// the right): an operator's matter; the same call goes through once the key is fixed.
    #[error("the payment provider refused the shop's key: {0}")]
    Denied(String),
    /// No answer in time, a 5xx, a 429 or a 409 (the same idempotency key still in flight):
    /// the same call may go through shortly.
    #[error("the payment provider did not answer: {0}")]
    Unavailable(String),
}

impl PaymentError {
    /// The provider refused the request itself (no retry of it can go through).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Self::Refused(_) | Self::Declined { .. })
    }
}

/// A notification that is not taken.
#[derive(Debug, thiserror::Error)]
pub enum NotificationError {
    /// This shop takes no notifications from that provider (it is not the configured one).
    #[error("no such payment provider here")]
    NotHere,
    /// Its signature or timestamp does not hold, or its body is not the provider's format:
    /// nothing is read from it and nothing changes.
    #[error("refused notification: {0}")]
    Refused(&'static str),
}

/// A payment provider (see the module's table). Futures are boxed so the core can hold the
/// configured one behind `Arc<dyn …>`.
pub trait PaymentProvider: Send + Sync {
    /// Its name in URLs (`/api/payments/{name}/webhook`) and records: `stripe`, `dev`.
    fn name(&self) -> &'static str;

    fn open<'a>(
        &'a self,
        request: CheckoutRequest<'a>,
    ) -> BoxFuture<'a, Result<Opened, PaymentError>>;

    fn lookup<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>>;

    /// Closes `session` so it can no longer be paid and answers its state after: `Expired`,
    /// or `Complete` when the shopper finished first.
    fn expire<'a>(&'a self, session: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>>;

    /// Gives back the whole payment `payment_ref` (what was taken, which may not be what was
    /// due); `key` makes a retry refund once.
    fn refund<'a>(
        &'a self,
        payment_ref: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<(), PaymentError>>;

    /// The smallest amount it takes in `currency` (minor units), if it has one: a voucher
    /// priced above 0 and below it could never be paid, so its creation is refused.
    fn minimum_charge(&self, currency: &Currency) -> Option<i64> {
        let _ = currency;
        None
    }

    /// Verifies a notification's raw bytes (nothing is read before) and says what it is about.
    /// A provider that sends none takes none.
    fn notification(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> Result<Notification, NotificationError> {
        let _ = (headers, body, now);
        Err(NotificationError::NotHere)
    }
}

/// No provider configured: nothing can be paid.
#[derive(Debug, Default)]
pub struct NoPayments;

const NO_PROVIDER: &str =
    "no payment provider is configured (SECKILL_STRIPE_SECRET_KEY, or SECKILL_DEV_PAYMENTS=true)";

impl PaymentProvider for NoPayments {
    fn name(&self) -> &'static str {
        "none"
    }

    fn open<'a>(&'a self, _: CheckoutRequest<'a>) -> BoxFuture<'a, Result<Opened, PaymentError>> {
        Box::pin(async { Err(PaymentError::Unavailable(NO_PROVIDER.into())) })
    }

    fn lookup<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>> {
        Box::pin(async { Err(PaymentError::Unavailable(NO_PROVIDER.into())) })
    }

    fn expire<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>> {
        Box::pin(async { Err(PaymentError::Unavailable(NO_PROVIDER.into())) })
    }

    fn refund<'a>(&'a self, _: &'a str, _: &'a str) -> BoxFuture<'a, Result<(), PaymentError>> {
        Box::pin(async { Err(PaymentError::Unavailable(NO_PROVIDER.into())) })
    }
}

/// Which provider the configuration names.
#[derive(Debug, Clone)]
pub enum ProviderSettings {
    /// Neither: start-up refuses it (a shop that cannot be paid cancels every order).
    None,
    /// `SECKILL_DEV_PAYMENTS=true`.
    Dev,
    /// `SECKILL_STRIPE_SECRET_KEY` and `SECKILL_STRIPE_WEBHOOK_SECRET`.
    Stripe(stripe::StripeSettings),
}

/// The provider the configuration asks for, speaking over `http` (which has TLS).
pub fn from_settings(
    settings: &ProviderSettings,
    http: reqwest::Client,
) -> Arc<dyn PaymentProvider> {
    match settings {
        ProviderSettings::None => Arc::new(NoPayments),
        ProviderSettings::Dev => Arc::new(dev::DevPayments),
        ProviderSettings::Stripe(s) => Arc::new(stripe::Stripe::new(s.clone(), http)),
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone, Utc};

    use super::session_expiry;

    #[test]
    fn a_sessions_expiry_is_the_same_for_every_click_and_within_stripes_bounds() {
        let pay_by = Utc
            .with_ymd_and_hms(2026, 11, 30, 12, 15, 0)
            .single()
            .expect("a time");
        // A double click that straddles a second.
        let first = pay_by - Duration::minutes(14) - Duration::milliseconds(1);
        let second = first + Duration::milliseconds(2);
        assert_ne!(first.timestamp(), second.timestamp());
        assert_eq!(
            session_expiry(pay_by, first),
            session_expiry(pay_by, second)
        );
        // Opened any time before the deadline: 30 minutes to 24 hours ahead.
        for before in [Duration::minutes(15), Duration::seconds(1)] {
            let now = pay_by - before;
            let ahead = session_expiry(pay_by, now) - now;
            assert!(
                ahead >= Duration::minutes(30) && ahead <= Duration::hours(24),
                "{ahead}"
            );
        }
        // A deadline two days off is brought within 24 hours.
        let far = pay_by + Duration::days(2);
        assert!(session_expiry(far, pay_by) - pay_by <= Duration::hours(24));
    }
}
