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
//! matches (constant-time) and `t` is within 300 s of now. The body is read only then.

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::future::BoxFuture;
use reqwest::{header::HeaderMap, Method, StatusCode};
use serde_json::Value;

use super::{
    CheckoutRequest, DisputeStatus, MoneyEvent, Notification, NotificationError, Opened,
    PaymentError, PaymentProvider, RefundOutcome, SessionState, SessionStatus,
};
use crate::{secret::Secret, signing};

/// Stripe's API.
pub const DEFAULT_API_BASE: &str = "https://api.stripe.com";
/// How far a webhook's timestamp may be from now (Stripe's libraries' default).
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;
/// The webhook's signature header.
pub const SIGNATURE_HEADER: &str = "stripe-signature";
/// The API version every call asks for (`Stripe-Version`), so the account's default version
/// never decides the shape of an answer: the one whose objects the shop reads was checked.
pub const API_VERSION: &str = "2024-06-20";
/// The pause before the one retry of a call that got no answer.
const RETRY_AFTER: Duration = Duration::from_millis(300);

/// The events the shop acts on; any other is acknowledged and recorded.
const SESSION_EVENTS: [&str; 4] = [
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "checkout.session.async_payment_failed",
    "checkout.session.expired",
];

/// The events about money already taken that the shop acts on (register them too).
pub const MONEY_EVENTS: [&str; 5] = [
    "charge.refunded",
    "refund.updated",
    "charge.refund.updated",
    "charge.dispute.created",
    "charge.dispute.closed",
];

/// Stripe's smallest charge in `currency`, in its minor units ("Minimum and maximum charge
/// amounts"). A currency Stripe does not settle in (`cny` among them) must come to at least
/// the settlement currency's minimum, $0.50 or €0.50, once converted: for those the shop asks
/// the equivalent of US$0.60 at a cautious rate, so a rate's swing does not refuse a payment.
pub fn minimum_charge(currency: &str) -> i64 {
    match currency {
        "usd" | "aud" | "brl" | "cad" | "chf" | "eur" | "inr" | "nzd" | "sgd" => 50,
        "gbp" => 30,
        "jpy" => 50,
        "hkd" => 400,
        "dkk" => 250,
        "nok" | "sek" => 300,
        "pln" | "ron" | "myr" | "aed" => 200,
        "bgn" => 100,
        "czk" => 1_500,
        "huf" => 17_500,
        "mxn" | "thb" => 1_000,
        "cny" => 400,
        // Any other: the US$0.50 minimum is a few hundred minor units at most of them; the
        // provider itself refuses less, and Pay now says so.
        _ => 50,
    }
}

/// What a refund, charge or dispute event says of the money, if the shop acts on it.
fn money_event(kind: &str, object: &Value) -> Option<MoneyEvent> {
    // The payment intent is its ID, or the object when expanded.
    let intent = &object["payment_intent"];
    let payment_ref = intent
        .as_str()
        .or_else(|| intent["id"].as_str())?
        .to_owned();
    match kind {
        // A charge fully refunded (a partial refund leaves `refunded` false: not the shop's).
        "charge.refunded" => {
            (object["refunded"].as_bool() == Some(true)).then_some(MoneyEvent::Refund {
                payment_ref,
                outcome: RefundOutcome::Succeeded,
            })
        }
        "refund.updated" | "charge.refund.updated" => {
            let outcome = match object["status"].as_str()? {
                "succeeded" => RefundOutcome::Succeeded,
                "failed" | "canceled" => RefundOutcome::Failed,
                _ => RefundOutcome::Pending,
            };
            Some(MoneyEvent::Refund {
                payment_ref,
                outcome,
            })
        }
        "charge.dispute.created" => Some(MoneyEvent::Dispute {
            payment_ref,
            status: DisputeStatus::Open,
        }),
        "charge.dispute.closed" => {
            let status = match object["status"].as_str()? {
                "won" | "warning_closed" => DisputeStatus::Won,
                "lost" => DisputeStatus::Lost,
                _ => DisputeStatus::Open,
            };
            Some(MoneyEvent::Dispute {
                payment_ref,
                status,
            })
        }
        _ => None,
    }
}

/// How to reach Stripe (`SECKILL_STRIPE_*`), checked when the configuration is read.
#[derive(Debug, Clone)]
pub struct StripeSettings {
    /// `sk_…` (secret) or `rk_…` (restricted) key.
    pub secret_key: Secret,
    /// The webhook endpoint's signing secret, `whsec_…`.
    pub webhook_secret: Secret,
    /// `https://api.stripe.com` unless a test points it elsewhere; plain `http://` only on
    /// loopback.
    pub api_base: String,
    /// One call's bound.
    pub timeout: Duration,
    /// What the hosted page offers (`SECKILL_STRIPE_PAYMENT_METHODS`).
    pub payment_methods: PaymentMethods,
}

/// The payment methods the hosted page offers: immediate ones only, since an order is held 15
/// minutes and a delayed method (a bank debit) settles days later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaymentMethods(Vec<&'static str>);

/// Methods that confirm while the shopper is on the page.
const IMMEDIATE_METHODS: [&str; 3] = ["card", "alipay", "wechat_pay"];
/// Stripe's delayed methods, named so the refusal can say why.
const DELAYED_METHODS: [&str; 10] = [
    "sepa_debit",
    "us_bank_account",
    "bacs_debit",
    "au_becs_debit",
    "acss_debit",
    "boleto",
    "konbini",
    "oxxo",
    "customer_balance",
    "sofort",
];

impl std::str::FromStr for PaymentMethods {
    type Err = String;

    /// A comma-separated list (`card,alipay,wechat_pay`).
    fn from_str(raw: &str) -> Result<Self, String> {
        let mut methods = Vec::new();
        for name in raw.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let Some(known) = IMMEDIATE_METHODS.iter().find(|m| **m == name) else {
                return Err(if DELAYED_METHODS.contains(&name) {
                    format!("{name:?} is a delayed payment method: it settles days after the shopper leaves the page, and an order is held only until its payment deadline")
                } else {
                    format!(
                        "{name:?} is not a payment method the shop offers (one of: {})",
                        IMMEDIATE_METHODS.join(", ")
                    )
                });
            };
            if !methods.contains(known) {
                methods.push(*known);
            }
        }
        if methods.is_empty() {
            return Err("names no payment method (card, alipay, wechat_pay)".into());
        }
        Ok(Self(methods))
    }
}

impl Default for PaymentMethods {
    fn default() -> Self {
        Self(vec!["card"])
    }
}

impl PaymentMethods {
    /// The session's form fields that name them (WeChat Pay on a web page needs its client).
    fn form(&self) -> Vec<(String, String)> {
        let mut form: Vec<(String, String)> = self
            .0
            .iter()
            .enumerate()
            .map(|(i, m)| (format!("payment_method_types[{i}]"), (*m).to_owned()))
            .collect();
        if self.0.contains(&"wechat_pay") {
            form.push((
                "payment_method_options[wechat_pay][client]".into(),
                "web".into(),
            ));
        }
        form
    }
}

/// Why a Stripe setting is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StripeSettingError {
    #[error("must be a Stripe secret key (sk_…) or restricted key (rk_…)")]
    Key,
    #[error("must be a webhook signing secret (whsec_…)")]
    WebhookSecret,
    #[error("must be an https:// address (plain http:// only on loopback, for a test's stand-in), without a path")]
    Base,
}

impl StripeSettings {
    /// The secret key, checked: `sk_` or `rk_` and more.
    pub fn key(raw: &str) -> Result<Secret, StripeSettingError> {
        let ok = ["sk_", "rk_"]
            .iter()
            .any(|p| raw.starts_with(p) && raw.len() > p.len());
        if ok && !raw.contains(char::is_whitespace) {
            Ok(Secret::new(raw))
        } else {
            Err(StripeSettingError::Key)
        }
    }

    /// The webhook secret, checked: `whsec_` and more.
    pub fn webhook_secret(raw: &str) -> Result<Secret, StripeSettingError> {
        match raw.strip_prefix("whsec_") {
            Some(rest) if !rest.is_empty() && !raw.contains(char::is_whitespace) => {
                Ok(Secret::new(raw))
            }
            _ => Err(StripeSettingError::WebhookSecret),
        }
    }

    /// The API's base address: `https://host[:port]`, or `http://` on a loopback host.
    pub fn api_base(raw: &str) -> Result<String, StripeSettingError> {
        let raw = raw.trim().trim_end_matches('/');
        let (tls, host) = match (raw.strip_prefix("https://"), raw.strip_prefix("http://")) {
            (Some(host), _) => (true, host),
            (None, Some(host)) => (false, host),
            (None, None) => return Err(StripeSettingError::Base),
        };
        if host.is_empty() || host.contains(['/', '?', '#', '@']) {
            return Err(StripeSettingError::Base);
        }
        if !tls && !is_loopback_host(host) {
            return Err(StripeSettingError::Base);
        }
        Ok(raw.to_owned())
    }
}

/// Whether `host[:port]` names this machine (`127.x.x.x`, `localhost`, `[::1]`).
fn is_loopback_host(host_port: &str) -> bool {
    let host = if let Some(rest) = host_port.strip_prefix('[') {
        rest.split(']').next().unwrap_or_default()
    } else {
        host_port.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

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

/// A Checkout Session object as the shop reads it.
fn session(object: &Value) -> Result<SessionState, String> {
    let id = object["id"].as_str().ok_or("a session without an id")?;
    let status = match object["status"].as_str() {
        Some("open") => SessionStatus::Open,
        Some("complete") => SessionStatus::Complete,
        Some("expired") => SessionStatus::Expired,
        other => return Err(format!("session {id}: unknown status {other:?}")),
    };
    // The payment intent is its ID, or the object when a caller expanded it.
    let intent = &object["payment_intent"];
    let payment_ref = intent
        .as_str()
        .or_else(|| intent["id"].as_str())
        .map(str::to_owned);
    Ok(SessionState {
        session: id.to_owned(),
        status,
        paid: object["payment_status"].as_str() == Some("paid"),
        amount_cents: object["amount_total"].as_i64().unwrap_or(0),
        currency: object["currency"]
            .as_str()
            .unwrap_or_default()
            .to_ascii_lowercase(),
        payment_ref,
    })
}

/// Whether `header` (`t=…,v1=…[,v1=…]`) signs `body` under `secret` within the tolerance of
/// `now`.
pub fn signature_holds(
    secret: &str,
    header: &str,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<(), &'static str> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for item in header.split(',') {
        match item.trim().split_once('=') {
            Some(("t", t)) => timestamp = Some(t),
            Some(("v1", sig)) => signatures.push(sig),
            // `v0` (a test-mode scheme) and anything newer are ignored, as Stripe's libraries do.
            _ => {}
        }
    }
    let t = timestamp.ok_or("the signature header has no timestamp")?;
    let seconds: i64 = t
        .parse()
        .map_err(|_| "the signature's timestamp is not a number")?;
    // Checked: a timestamp near i64's ends must not overflow (it is the sender's to choose).
    let off = now.timestamp().checked_sub(seconds).map(i64::unsigned_abs);
    if off.is_none_or(|off| off > SIGNATURE_TOLERANCE_SECS.unsigned_abs()) {
        return Err("the signature's timestamp is too far from now (a replay?)");
    }
    if signatures.is_empty() {
        return Err("the signature header has no v1 signature");
    }
    let key = secret.as_bytes();
    let parts: [&[u8]; 3] = [t.as_bytes(), b".", body];
    if signatures
        .iter()
        .any(|s| signing::verify_hex(key, &parts, s))
    {
        Ok(())
    } else {
        Err("no v1 signature matches the body")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_and_secrets_are_checked_by_their_prefix() {
        assert!(StripeSettings::key("sk_test_123").is_ok());
        assert!(StripeSettings::key("rk_live_123").is_ok());
        for bad in ["", "sk_", "pk_test_123", "whsec_1", "sk_test 1"] {
            assert_eq!(
                StripeSettings::key(bad).err(),
                Some(StripeSettingError::Key),
                "{bad:?}"
            );
        }
        assert!(StripeSettings::webhook_secret("whsec_abc").is_ok());
        assert!(StripeSettings::webhook_secret("sk_test_1").is_err());
        assert!(StripeSettings::webhook_secret("whsec_").is_err());
    }

    #[test]
    fn only_immediate_payment_methods_are_offered() {
        let m: PaymentMethods = "card, alipay,wechat_pay,card".parse().expect("immediate");
        assert_eq!(m.0, ["card", "alipay", "wechat_pay"]);
        assert!(m.form().contains(&(
            "payment_method_options[wechat_pay][client]".into(),
            "web".into()
        )));
        let delayed = "card,sepa_debit"
            .parse::<PaymentMethods>()
            .expect_err("delayed");
        assert!(delayed.contains("delayed"), "{delayed}");
        assert!("paypal".parse::<PaymentMethods>().is_err());
        assert!(" , ".parse::<PaymentMethods>().is_err());
        assert_eq!(PaymentMethods::default().form().len(), 1);
    }

    #[test]
    fn plain_http_is_only_for_loopback() {
        assert_eq!(
            StripeSettings::api_base("https://api.stripe.com/").as_deref(),
            Ok("https://api.stripe.com")
        );
        for ok in [
            "http://127.0.0.1:12111",
            "http://localhost:1",
            "http://[::1]:8",
        ] {
            assert!(StripeSettings::api_base(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://api.stripe.com",
            "http://10.0.0.1:80",
            "http://127.0.0.1.evil.example",
            "ftp://x",
            "https://x/v1",
            "https://user@host",
            "",
        ] {
            assert_eq!(
                StripeSettings::api_base(bad),
                Err(StripeSettingError::Base),
                "{bad}"
            );
        }
    }

    fn header(secret: &str, t: i64, body: &[u8]) -> String {
        let sig = signing::sign_hex(secret.as_bytes(), &[t.to_string().as_bytes(), b".", body]);
        format!("t={t},v1={sig}")
    }

    #[test]
    fn a_webhook_signature_holds_only_for_its_body_secret_and_time() {
        let now = Utc::now();
        let t = now.timestamp();
        let body = br#"{"id":"evt_1"}"#;
        assert!(signature_holds("whsec_a", &header("whsec_a", t, body), body, now).is_ok());
        // Several v1 (a rolled secret): one matching is enough.
        let two = format!(
            "t={t},v1=00ff,{}",
            &header("whsec_a", t, body)[format!("t={t},").len()..]
        );
        assert!(signature_holds("whsec_a", &two, body, now).is_ok());
        assert!(signature_holds("whsec_b", &header("whsec_a", t, body), body, now).is_err());
        assert!(signature_holds("whsec_a", &header("whsec_a", t, body), b"{}", now).is_err());
        let old = t - SIGNATURE_TOLERANCE_SECS - 1;
        assert!(signature_holds("whsec_a", &header("whsec_a", old, body), body, now).is_err());
        assert!(signature_holds("whsec_a", "v1=abc", body, now).is_err());
        // A timestamp at either end of i64 is refused, not an overflow.
        for t in [i64::MIN, i64::MAX, -1] {
            let header = format!("t={t},v1=00");
            assert!(
                signature_holds("whsec_a", &header, body, now).is_err(),
                "{t}"
            );
        }
        assert!(signature_holds("whsec_a", &format!("t={t}"), body, now).is_err());
    }

    #[test]
    fn a_session_is_read_with_its_payment_intent_either_way() {
        let s = session(&serde_json::json!({
            "id": "cs_1", "status": "complete", "payment_status": "paid",
            "amount_total": 990, "currency": "CNY", "payment_intent": {"id": "pi_1"}
        }))
        .expect("readable");
        assert_eq!(s.payment_ref.as_deref(), Some("pi_1"));
        assert_eq!(s.currency, "cny");
        assert!(s.paid);
        assert!(session(&serde_json::json!({"id": "cs_1", "status": "weird"})).is_err());
    }
}
