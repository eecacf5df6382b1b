//! The payment provider's notifications (`POST /api/payments/{provider}/webhook`): the raw
//! bytes are verified by the provider before anything is read (a forged, altered or replayed
//! one answers 400, changes nothing and leaves an audit line), then what it says of a payment is
//! applied once ([`payment_word::apply`] for a session, [`money_events::apply`] for a refund or a
//! dispute; each records the event's ID in the same transaction).

use chrono::Utc;
use reqwest::header::HeaderMap;

use crate::{
    infra::backend::{backend_error, Backend, Unavailable},
    orders::{money_events, payment::NotificationError, payment_word},
    Core,
};

/// Why a notification was not taken.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// No such provider here (the path names another than the configured one).
    #[error("no such payment provider")]
    NotHere,
    /// Not the provider's (bad or missing signature, a stale timestamp, not its format).
    #[error("{0}")]
    Refused(&'static str),
    #[error(transparent)]
    Backend(#[from] Backend),
}

backend_error!(NotifyError);

impl Unavailable for NotifyError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::NotHere | Self::Refused(_) => false,
        }
    }
}

/// Takes one notification for `provider` (its name in the path).
pub async fn receive(
    core: &Core,
    provider: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), NotifyError> {
    if provider != core.payments.name() {
        return Err(NotifyError::NotHere);
    }
    let n = match core.payments.notification(headers, body, Utc::now()) {
        Ok(n) => n,
        Err(NotificationError::NotHere) => return Err(NotifyError::NotHere),
        Err(NotificationError::Refused(why)) => {
            tracing::warn!(target: "audit", provider, action = "payment notification",
                refusal = why, bytes = body.len(), "refused");
            return Err(NotifyError::Refused(why));
        }
    };
    if let Some(money) = &n.money {
        let outcome = money_events::apply(core, money, &n).await?;
        tracing::info!(target: "audit", provider, action = "payment notification",
            event = %n.event_id, kind = %n.kind, payment = money.payment_ref(), outcome = ?outcome, "applied");
        return Ok(());
    }
    let Some(session) = &n.session else {
        // An event the shop does not act on: acknowledged, so the provider stops sending it.
        tracing::debug!(event = %n.event_id, kind = %n.kind, "payment notification ignored");
        return Ok(());
    };
    let outcome = payment_word::apply(core, session, Some(&n)).await?;
    tracing::info!(target: "audit", provider, action = "payment notification",
        event = %n.event_id, kind = %n.kind, session = %session.session, outcome = ?outcome, "applied");
    Ok(())
}
