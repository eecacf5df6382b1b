//! Payment providers. An order's payment goes through [`PaymentProvider`]; the only provider
//! here is [`DevPayments`], which approves at once (like the dev login's codes, for running and
//! testing the product without a payment service; `SECKILL_DEV_PAYMENTS=true`). Without it,
//! [`NoPayments`] refuses every charge as unavailable.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::domain::{IdempotencyKey, OrderId};

/// One charge: the order, its amount and the client's idempotency key, which a real provider
/// uses to charge once however often it is asked.
#[derive(Debug, Clone)]
pub struct Charge<'a> {
    pub order: OrderId,
    pub amount_cents: i64,
    pub key: &'a IdempotencyKey,
}

/// Why a charge did not go through.
#[derive(Debug, thiserror::Error)]
pub enum PaymentError {
    /// The provider said no (the shopper may try another way to pay).
    #[error("the payment was declined: {0}")]
    Declined(String),
    /// The provider could not be reached, or none is configured.
    #[error("no payment provider answered: {0}")]
    Unavailable(String),
}

/// Something that charges a shopper and answers with its reference for the charge.
pub trait PaymentProvider: Send + Sync {
    fn charge<'a>(&'a self, charge: Charge<'a>) -> BoxFuture<'a, Result<String, PaymentError>>;
}

/// The development provider: approves every charge at once, with a reference derived from the
/// order and the key.
#[derive(Debug, Default)]
pub struct DevPayments;

impl PaymentProvider for DevPayments {
    fn charge<'a>(&'a self, charge: Charge<'a>) -> BoxFuture<'a, Result<String, PaymentError>> {
        Box::pin(async move { Ok(format!("dev-{}-{}", charge.order, charge.key.as_str())) })
    }
}

/// No provider configured: every charge is unavailable.
#[derive(Debug, Default)]
pub struct NoPayments;

impl PaymentProvider for NoPayments {
    fn charge<'a>(&'a self, _: Charge<'a>) -> BoxFuture<'a, Result<String, PaymentError>> {
        Box::pin(async {
            Err(PaymentError::Unavailable(
                "no payment provider is configured (SECKILL_DEV_PAYMENTS=true for the dev one)"
                    .into(),
            ))
        })
    }
}

/// The provider the configuration asks for.
pub fn from_config(config: &crate::config::PaymentsConfig) -> Arc<dyn PaymentProvider> {
    if config.dev_provider {
        Arc::new(DevPayments)
    } else {
        Arc::new(NoPayments)
    }
}
