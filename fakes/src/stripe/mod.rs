//! A Stripe stand-in: the Checkout calls the shop makes, the hosted payment page a shopper
//! pays on, and the signed webhooks Stripe sends (`../shared/docs/payments-notes.md`).
//!
//! | Stripe | here |
//! | --- | --- |
//! | `POST /v1/checkout/sessions` (form) | a session `cs_test_N`, its `url` this server's `/pay/cs_test_N`; `expires_at` between 30 minutes and 24 hours ahead (default 24 h), after which it lapses (`checkout.session.expired` is sent) |
//! | `GET /v1/checkout/sessions/{id}` | the session |
//! | `POST /v1/checkout/sessions/{id}/expire` | an open session expires (and `checkout.session.expired` is sent); any other answers 400 `invalid_request_error` |
//! | `POST /v1/refunds` (form `payment_intent`, `amount`) | a refund `re_N`; more than the payment took answers 400 `charge_already_refunded`; a payment the test marks refuses with the code it names (`charge_disputed`, …) |
//!
//! **Idempotency as Stripe documents it**: the first answer for an `Idempotency-Key` is saved
//! with its parameters, **5xx included**, and replayed to every later request with the key;
//! the same key with other parameters answers 400 `idempotency_error`; a request while one
//! with the same key is still running answers 409; a validation failure (400 without a code)
//! and an unauthorised request are not saved.
//! | the hosted page `GET /pay/{id}`, `POST /pay/{id}` | a plain form (no JavaScript needed): paying completes the session, sends `checkout.session.completed` signed, and answers 303 to `success_url` |
//!
//! Every API call needs `Authorization: Bearer sk_…`; errors are `{"error": {"type",
//! "message"}}`. Webhooks carry `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
//! "{t}.{body}">` keyed by the whole `whsec_…` secret, and are retried (three tries) until the
//! shop answers 2xx, as Stripe does (sooner). Tests steer it: answer 500 to the next calls,
//! answer every call after a latency, hang, drop webhooks or deliver each twice, pay a session
//! with another amount, refuse a payment's refunds, send or replay an event. Every call's
//! `Stripe-Version` is recorded.
//!
//! Here the state and the handle the tests steer; the API's handlers in `api.rs`, the hosted
//! page in `hosted.rs`, the webhooks (signed, delivered, or not) in `webhooks.rs`.

mod api;
mod dashboard;
mod hosted;
mod webhooks;

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::{
    extract::State,
    http::StatusCode,
    routing::{get, post},
    Router,
};
use serde_json::{json, Value};

pub use self::webhooks::signature_header;
use self::{
    api::{create_refund, create_session, expire_session, read_session},
    hosted::{hosted_page, hosted_pay},
    webhooks::{complete, deliver, new_event, send_once},
};

/// A Checkout Session as this stand-in keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: String,
    /// `metadata[order_id]` (and `client_reference_id`).
    pub order: String,
    pub client_reference_id: String,
    pub name: String,
    pub amount: i64,
    pub currency: String,
    pub success_url: String,
    pub cancel_url: String,
    /// `open`, `complete` or `expired`.
    pub status: &'static str,
    /// `unpaid` or `paid`.
    pub payment_status: &'static str,
    pub payment_intent: Option<String>,
    /// What the session reports as `amount_total` once paid (another amount: a mismatch test).
    pub amount_total: i64,
    /// When it lapses unless paid or expired first (unix seconds).
    pub expires_at: i64,
}

impl Session {
    fn json(&self) -> Value {
        json!({
            "id": self.id,
            "object": "checkout.session",
            "url": if self.status == "open" { Value::String(String::new()) } else { Value::Null },
            "status": self.status,
            "payment_status": self.payment_status,
            "amount_total": self.amount_total,
            "currency": self.currency,
            "client_reference_id": self.client_reference_id,
            "metadata": { "order_id": self.order },
            "payment_intent": self.payment_intent,
            "success_url": self.success_url,
            "cancel_url": self.cancel_url,
            "expires_at": self.expires_at,
        })
    }
}

/// How a load run's stand-in misbehaves: each field "every n-th" (0: never).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Chaos {
    pub fail_every: u64,
    pub drop_every: u64,
    pub twice_every: u64,
    pub late_every: u64,
    pub late_by: Duration,
}

/// A saved answer to an idempotent request.
#[derive(Debug, Clone)]
struct Saved {
    /// The request: its path and its form, sorted.
    request: String,
    status: StatusCode,
    body: Value,
}

/// A refund made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refund {
    pub id: String,
    pub payment_intent: String,
    pub amount: i64,
}

#[derive(Default)]
struct Inner {
    base: String,
    secret: String,
    webhook_url: Option<String>,
    sessions: BTreeMap<String, Session>,
    /// Idempotency-Key → the first answer (5xx included) and the request it answered.
    idempotent: HashMap<String, Saved>,
    /// Idempotency-Keys whose first request is still running.
    in_flight: std::collections::HashSet<String>,
    /// Sessions whose payment's refunds are refused, with the code.
    refuse_refunds: HashMap<String, String>,
    /// Every API call waits this long before it is answered.
    latency: Duration,
    /// Each webhook is delivered twice (Stripe may deliver an event more than once).
    duplicate_webhooks: bool,
    /// The `Stripe-Version` of each API call (`None`: the account's default).
    versions: Vec<Option<String>>,
    /// Chaos for a load run, each "every n-th" (0: never): API calls answering 500, webhooks
    /// dropped, webhooks delivered twice, webhooks delivered late (after `late_by`, so after
    /// events that came later: out of order).
    chaos: Chaos,
    /// API calls past the screen, and webhooks delivered, counted for the chaos.
    steered_calls: u64,
    deliveries: u64,
    /// Webhooks sent on Stripe's own schedule not yet answered (or given up on).
    webhooks_pending: u64,
    /// Every API call answers 500 until then (an outage).
    outage_until: Option<std::time::Instant>,
    refunds: Vec<Refund>,
    /// Events sent, by ID (a replay sends one again).
    events: BTreeMap<String, Value>,
    counter: u64,
    /// Answer 500 to this many next API calls.
    fail_next: u32,
    /// Answer no API call (the client's timeout is what ends it).
    hang: bool,
    /// Send no webhooks (a lost notification).
    drop_webhooks: bool,
    /// API calls received, as `METHOD path`.
    calls: Vec<String>,
}

#[derive(Clone)]
struct Fake(Arc<Mutex<Inner>>);

impl Fake {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A test thread that panicked holding the lock leaves the state as it was: go on.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The stand-in, serving until dropped.
pub struct FakeStripe {
    fake: Fake,
    http: reqwest::Client,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeStripe {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

impl FakeStripe {
    /// On a free loopback port.
    pub async fn start(secret: &str) -> anyhow::Result<Self> {
        Self::start_on(0, secret).await
    }

    /// On 127.0.0.1:`port`; webhooks are signed with `secret` (`whsec_…`).
    pub async fn start_on(port: u16, secret: &str) -> anyhow::Result<Self> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
        let base = format!("http://{}", listener.local_addr()?);
        let fake = Fake(Arc::new(Mutex::new(Inner {
            base,
            secret: secret.to_owned(),
            ..Inner::default()
        })));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()?;
        let app = Router::new()
            .route("/v1/checkout/sessions", post(create_session))
            .route("/v1/checkout/sessions/{id}", get(read_session))
            .route("/v1/checkout/sessions/{id}/expire", post(expire_session))
            .route("/v1/refunds", post(create_refund))
            .route("/pay/{id}", get(hosted_page).post(hosted_pay))
            .with_state((fake.clone(), http.clone()));
        let task = tokio::spawn(async move {
            if let Err(e) = axum::serve(listener, app).await {
                tracing::error!(error = %e, "the fake Stripe stopped");
            }
        });
        Ok(Self { fake, http, task })
    }

    /// `http://127.0.0.1:<port>`: the shop's `SECKILL_STRIPE_API_BASE`.
    pub fn base(&self) -> String {
        self.fake.lock().base.clone()
    }

    /// Where webhooks go (the shop's `/api/payments/stripe/webhook`).
    pub fn set_webhook(&self, url: &str) {
        self.fake.lock().webhook_url = Some(url.to_owned());
    }

    /// The next `n` API calls answer 500.
    pub fn fail_next(&self, n: u32) {
        self.fake.lock().fail_next = n;
    }

    /// API calls get no answer while on.
    pub fn hang(&self, on: bool) {
        self.fake.lock().hang = on;
    }

    /// Webhooks are not sent while on (lost notifications).
    pub fn drop_webhooks(&self, on: bool) {
        self.fake.lock().drop_webhooks = on;
    }

    /// Every API call answers 500 for `length` from now (Stripe down for a while).
    pub fn outage(&self, length: Duration) {
        self.fake.lock().outage_until = Some(std::time::Instant::now() + length);
    }

    /// Misbehaves as `chaos` says from now on.
    pub fn set_chaos(&self, chaos: Chaos) {
        self.fake.lock().chaos = chaos;
    }

    /// Every webhook is delivered twice while on.
    pub fn duplicate_webhooks(&self, on: bool) {
        self.fake.lock().duplicate_webhooks = on;
    }

    /// Every API call is answered after `latency` (a slow Stripe).
    pub fn set_latency(&self, latency: Duration) {
        self.fake.lock().latency = latency;
    }

    /// Refunds of the payment `session` takes (or took) are refused with `code`
    /// (`charge_disputed`, `charge_already_refunded`: refused for good, as Stripe does).
    pub fn refuse_refunds_of(&self, session: &str, code: &str) {
        self.fake
            .lock()
            .refuse_refunds
            .insert(session.to_owned(), code.to_owned());
    }

    /// Lets session `session` lapse now, as if its `expires_at` had passed.
    pub fn lapse(&self, session: &str) {
        let mut f = self.fake.lock();
        if let Some(s) = f.sessions.get_mut(session) {
            s.expires_at = now() - 1;
        }
    }

    /// The `Stripe-Version` each API call named.
    pub fn versions(&self) -> Vec<Option<String>> {
        self.fake.lock().versions.clone()
    }

    /// Waits until every webhook the fake sent on its own schedule (a payment's, a refund's
    /// `charge.refunded`) was delivered or given up on: a test that sends its own event next
    /// then knows it arrives after them, as Stripe's later event would.
    pub async fn settled(&self) {
        while self.fake.lock().webhooks_pending > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub fn sessions(&self) -> Vec<Session> {
        self.fake.lock().sessions.values().cloned().collect()
    }

    pub fn session(&self, id: &str) -> Option<Session> {
        self.fake.lock().sessions.get(id).cloned()
    }

    pub fn refunds(&self) -> Vec<Refund> {
        self.fake.lock().refunds.clone()
    }

    /// The payments captured, as `(session, payment intent, amount)`.
    pub fn captured(&self) -> Vec<(String, Option<String>, i64)> {
        self.sessions()
            .into_iter()
            .filter(|s| s.payment_status == "paid")
            .map(|s| (s.id, s.payment_intent, s.amount_total))
            .collect()
    }

    /// The refunds made, as `(payment intent, amount)`.
    pub fn refunded(&self) -> Vec<(String, i64)> {
        self.refunds()
            .into_iter()
            .map(|r| (r.payment_intent, r.amount))
            .collect()
    }

    /// API calls received so far (`POST /v1/checkout/sessions`, …).
    pub fn calls(&self) -> Vec<String> {
        self.fake.lock().calls.clone()
    }

    /// The shopper pays `session` on the hosted page: it completes, and the signed
    /// `checkout.session.completed` goes to the shop (unless webhooks are dropped). Returns the
    /// event's ID; an error if the session cannot be paid (expired, unknown).
    pub async fn pay(&self, session: &str) -> anyhow::Result<String> {
        self.pay_reporting(session, None).await
    }

    /// Like [`Self::pay`], the session then reporting `amount_total` = `amount` (what a
    /// tampered or misconfigured payment looks like to the shop).
    pub async fn pay_reporting(
        &self,
        session: &str,
        amount: Option<i64>,
    ) -> anyhow::Result<String> {
        let event = complete(&self.fake, session, amount)
            .map_err(|status| anyhow::anyhow!("session {session} cannot be paid ({status})"))?;
        let id = event["id"].as_str().unwrap_or_default().to_owned();
        deliver(&self.fake, &self.http, event).await;
        Ok(id)
    }

    /// Sends event `event_id` again (Stripe delivers some events more than once); the shop's
    /// answer status, or `None` when nothing answered.
    pub async fn resend(&self, event_id: &str) -> Option<u16> {
        let event = self.fake.lock().events.get(event_id).cloned()?;
        send_once(&self.fake, &self.http, &event).await
    }

    /// A signed event of `kind` whose object is `object` (a refund, a charge, a dispute as
    /// Stripe shapes them), sent once; the answer status.
    pub async fn send_object(&self, kind: &str, object: Value) -> Option<u16> {
        let event = new_event(&mut self.fake.lock(), kind, object);
        send_once(&self.fake, &self.http, &event).await
    }

    /// The payment intent session `session` took, once paid.
    pub fn payment_intent(&self, session: &str) -> Option<String> {
        self.fake
            .lock()
            .sessions
            .get(session)?
            .payment_intent
            .clone()
    }

    /// A signed event of `kind` about `session` as it is now, sent once; the answer status.
    pub async fn send(&self, kind: &str, session: &str) -> Option<u16> {
        let event = {
            let mut f = self.fake.lock();
            let s = f.sessions.get(session)?.json();
            new_event(&mut f, kind, s)
        };
        send_once(&self.fake, &self.http, &event).await
    }
}

type St = State<(Fake, reqwest::Client)>;
