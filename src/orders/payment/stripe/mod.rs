//! Stripe Checkout, spoken over its documented HTTP API with the shop's own client (no SDK):
//! form-encoded requests, `Authorization: Bearer sk_…`, JSON answers
//! (`../shared/docs/payments-notes.md`).
//!
//! | call | use |
//! | --- | --- |
//! | `POST /v1/checkout/sessions` | open: `mode=payment`, one line item (the voucher's title and price), `client_reference_id` and `metadata[order_id]`, the return addresses, an `Idempotency-Key` per order and attempt |
//! | `GET /v1/checkout/sessions/{id}` | lookup |
//! | `POST /v1/checkout/sessions/{id}/expire` | expire; a session that is no longer open answers 400, and is then looked up |
//! | `POST /v1/refunds` | refund: `payment_intent` (the whole payment), an `Idempotency-Key` |
//!
//! Each call has its own timeout (`SECKILL_STRIPE_TIMEOUT_MS`); a 5xx, a 429 or no answer is
//! tried once more with the same idempotency key, then reported unavailable.
//!
//! Webhooks: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=…]`, each `v1` the HMAC-SHA256 of
//! `"{t}.{raw body}"` keyed by the endpoint's whole secret (`whsec_…`); accepted when one
//! matches (constant-time) and `t` is within 300 s of now. The body is read only then
//! (`webhook.rs`, with what each event says). The settings an operator gives: `settings.rs`.

mod settings;
mod webhook;

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use reqwest::{header::HeaderMap, Method, StatusCode};
use serde_json::Value;

use self::webhook::{money_event, session, SESSION_EVENTS};
pub use self::{
    settings::{minimum_charge, PaymentMethods, StripeSettingError, StripeSettings},
    webhook::{signature_holds, MONEY_EVENTS, SIGNATURE_HEADER, SIGNATURE_TOLERANCE_SECS},
};
use super::{
    CheckoutRequest, Notification, NotificationError, Opened, PaymentError, PaymentProvider,
    SessionState, SessionStatus,
};

/// Stripe's API.
pub const DEFAULT_API_BASE: &str = "https://api.stripe.com";

/// The API version every call asks for (`Stripe-Version`), so the account's default version
/// never decides the shape of an answer: the one whose objects the shop reads was checked.
pub const API_VERSION: &str = "2024-06-20";

/// The pause before the one retry of a call that got no answer.
const RETRY_AFTER: Duration = Duration::from_millis(300);

/// Stripe Checkout.
pub struct Stripe {
    settings: StripeSettings,
    http: reqwest::Client,
}

impl Stripe {
    pub fn new(settings: StripeSettings, http: reqwest::Client) -> Self {
        Self { settings, http }
    }

    /// One call, tried once more after no answer, a 5xx or a 429; the JSON answer, or why not.
    async fn call(
        &self,
        method: Method,
        path: &str,
        form: &[(&str, String)],
        idempotency_key: Option<&str>,
    ) -> Result<Value, PaymentError> {
        let url = format!("{}{path}", self.settings.api_base);
        let mut last = PaymentError::Unavailable("no attempt".into());
        for attempt in 1..=2 {
            let mut request = self
                .http
                .request(method.clone(), &url)
                .timeout(self.settings.timeout)
                .bearer_auth(self.settings.secret_key.expose())
                .header("Stripe-Version", API_VERSION);
            if let Some(key) = idempotency_key {
                request = request.header("Idempotency-Key", key);
            }
            if method != Method::GET {
                request = request.form(form);
            }
            last = match request.send().await {
                Ok(r) => match answer(r).await {
                    Ok(v) => return Ok(v),
                    Err(e @ PaymentError::Unavailable(_)) => e,
                    Err(e) => return Err(e),
                },
                // Without the URL: a test's base may carry a path, the error text names it.
                Err(e) => PaymentError::Unavailable(e.without_url().to_string()),
            };
            if attempt == 1 {
                tokio::time::sleep(RETRY_AFTER).await;
            }
        }
        Err(last)
    }
}

/// A Stripe answer: its JSON when 2xx, else the error it names.
async fn answer(r: reqwest::Response) -> Result<Value, PaymentError> {
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    if status.is_success() {
        return Ok(body);
    }
    let error = &body["error"];
    let message = format!(
        "{status} {}: {}",
        error["type"].as_str().unwrap_or("error"),
        error["message"].as_str().unwrap_or("no message")
    );
    // A 409 is the same idempotency key still in flight: nothing was saved, try again.
    if status.is_server_error()
        || status == StatusCode::TOO_MANY_REQUESTS
        || status == StatusCode::CONFLICT
    {
        return Err(PaymentError::Unavailable(message));
    }
    if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
        return Err(PaymentError::Denied(message));
    }
    match error["code"].as_str() {
        Some(code) => Err(PaymentError::Declined {
            code: code.to_owned(),
            message,
        }),
        None => Err(PaymentError::Refused(message)),
    }
}

impl PaymentProvider for Stripe {
    fn name(&self) -> &'static str {
        "stripe"
    }

    fn open<'a>(&'a self, r: CheckoutRequest<'a>) -> BoxFuture<'a, Result<Opened, PaymentError>> {
        Box::pin(async move {
            let order = r.order.to_string();
            let methods = self.settings.payment_methods.form();
            let mut form = vec![
                ("mode", "payment".to_owned()),
                ("line_items[0][quantity]", "1".to_owned()),
                (
                    "line_items[0][price_data][currency]",
                    r.currency.to_string(),
                ),
                (
                    "line_items[0][price_data][unit_amount]",
                    r.amount_cents.to_string(),
                ),
                (
                    "line_items[0][price_data][product_data][name]",
                    r.title.to_owned(),
                ),
                ("client_reference_id", order.clone()),
                ("metadata[order_id]", order),
                ("success_url", r.success_url.clone()),
                ("cancel_url", r.cancel_url.clone()),
                ("expires_at", r.expires_at.timestamp().to_string()),
            ];
            form.extend(methods.iter().map(|(k, v)| (k.as_str(), v.clone())));
            let key = r.idempotency_key();
            let v = self
                .call(Method::POST, "/v1/checkout/sessions", &form, Some(&key))
                .await?;
            match (v["id"].as_str(), v["url"].as_str()) {
                (Some(id), Some(url)) => Ok(Opened {
                    session: id.to_owned(),
                    redirect_url: url.to_owned(),
                    expires_at: v["expires_at"]
                        .as_i64()
                        .and_then(|t| DateTime::from_timestamp(t, 0))
                        .unwrap_or(r.expires_at),
                }),
                _ => Err(PaymentError::Refused(
                    "the new session has no id or url".into(),
                )),
            }
        })
    }

    fn lookup<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>> {
        Box::pin(async move {
            let path = format!("/v1/checkout/sessions/{}", path_segment(id)?);
            let v = self.call(Method::GET, &path, &[], None).await?;
            session(&v).map_err(PaymentError::Refused)
        })
    }

    fn expire<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<SessionState, PaymentError>> {
        Box::pin(async move {
            let path = format!("/v1/checkout/sessions/{}/expire", path_segment(id)?);
            match self.call(Method::POST, &path, &[], None).await {
                Ok(v) => session(&v).map_err(PaymentError::Refused),
                // Only an open session can be expired: this one completed (or expired) first,
                // and its state says which.
                Err(e) if e.is_refusal() => {
                    let now = self.lookup(id).await?;
                    if now.status == SessionStatus::Open {
                        return Err(e);
                    }
                    Ok(now)
                }
                Err(e) => Err(e),
            }
        })
    }

    fn refund<'a>(
        &'a self,
        payment_ref: &'a str,
        key: &'a str,
    ) -> BoxFuture<'a, Result<(), PaymentError>> {
        Box::pin(async move {
            // No amount: Stripe refunds what the payment took, which for a flagged payment is
            // not what the order was due.
            let form = [("payment_intent", payment_ref.to_owned())];
            self.call(Method::POST, "/v1/refunds", &form, Some(key))
                .await
                .map(drop)
        })
    }

    fn minimum_charge(&self, currency: &crate::domain::Currency) -> Option<i64> {
        Some(minimum_charge(currency.as_str()))
    }

    fn notification(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now: DateTime<Utc>,
    ) -> Result<Notification, NotificationError> {
        let header = headers
            .get(SIGNATURE_HEADER)
            .and_then(|v| v.to_str().ok())
            .ok_or(NotificationError::Refused("no Stripe-Signature header"))?;
        signature_holds(self.settings.webhook_secret.expose(), header, body, now)
            .map_err(NotificationError::Refused)?;
        let event: Value = serde_json::from_slice(body)
            .map_err(|_| NotificationError::Refused("the signed body is not JSON"))?;
        let (Some(id), Some(kind)) = (event["id"].as_str(), event["type"].as_str()) else {
            return Err(NotificationError::Refused("the event has no id or type"));
        };
        let session = if SESSION_EVENTS.contains(&kind) {
            let mut s = session(&event["data"]["object"])
                .map_err(|_| NotificationError::Refused("the event's session is unreadable"))?;
            // A failed asynchronous payment ends its session: it can no longer be paid.
            if kind == "checkout.session.async_payment_failed" {
                s.status = SessionStatus::Expired;
                s.paid = false;
            }
            Some(s)
        } else {
            None
        };
        let money = MONEY_EVENTS
            .contains(&kind)
            .then(|| money_event(kind, &event["data"]["object"]))
            .flatten();
        Ok(Notification {
            event_id: id.to_owned(),
            kind: kind.to_owned(),
            session,
            money,
        })
    }
}

/// A session ID as a path segment: Stripe's are `cs_` and letters, digits and `_`; anything
/// else is no session of theirs (and must not reshape the request's path).
fn path_segment(id: &str) -> Result<&str, PaymentError> {
    if !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        Ok(id)
    } else {
        Err(PaymentError::Refused(format!("{id:?} is not a session ID")))
    }
}
