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

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, MutexGuard},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use axum::{
    extract::{Form, Path, State},
    http::{HeaderMap, StatusCode},
    response::{Html, IntoResponse, Redirect, Response},
    routing::{get, post},
    Json, Router,
};
use hmac::{KeyInit, Mac};
use serde_json::{json, Value};

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

/// `t=<t>,v1=<hex HMAC-SHA256 of "{t}.{body}" keyed by secret>`: Stripe's signature header.
pub fn signature_header(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
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

fn new_event(f: &mut Inner, kind: &str, object: Value) -> Value {
    f.counter += 1;
    let event = json!({
        "id": format!("evt_test_{}", f.counter),
        "object": "event",
        "type": kind,
        "created": now(),
        "data": { "object": object },
    });
    if let Some(id) = event["id"].as_str() {
        f.events.insert(id.to_owned(), event.clone());
    }
    event
}

/// Completes an open session as paid; the `checkout.session.completed` event to send.
fn complete(fake: &Fake, id: &str, amount: Option<i64>) -> Result<Value, StatusCode> {
    let mut f = fake.lock();
    f.counter += 1;
    let intent = format!("pi_test_{}", f.counter);
    if lapsed(&mut f, id).is_some() {
        // Lapsed while the shopper looked at the page (its event goes with the next read).
        return Err(StatusCode::GONE);
    }
    let s = f.sessions.get_mut(id).ok_or(StatusCode::NOT_FOUND)?;
    if s.status != "open" {
        return Err(StatusCode::GONE);
    }
    s.status = "complete";
    s.payment_status = "paid";
    s.payment_intent = Some(intent);
    if let Some(amount) = amount {
        s.amount_total = amount;
    }
    let object = s.json();
    Ok(new_event(&mut f, "checkout.session.completed", object))
}

/// Sends `event` until the shop answers 2xx (three tries, as Stripe retries), unless webhooks
/// are dropped.
async fn deliver(fake: &Fake, http: &reqwest::Client, event: Value) {
    let (dropped, twice, late) = {
        let mut f = fake.lock();
        f.deliveries += 1;
        let (n, c) = (f.deliveries, f.chaos);
        let every = |k: u64| k > 0 && n.is_multiple_of(k);
        (
            f.drop_webhooks || every(c.drop_every),
            f.duplicate_webhooks || every(c.twice_every),
            every(c.late_every).then_some(c.late_by),
        )
    };
    if dropped {
        return;
    }
    if let Some(late) = late {
        tokio::time::sleep(late).await;
    }
    if twice {
        send_once(fake, http, &event).await;
    }
    for attempt in 0..3 {
        if send_once(fake, http, &event)
            .await
            .is_some_and(|s| (200..300).contains(&s))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200 * (attempt + 1))).await;
    }
}

async fn send_once(fake: &Fake, http: &reqwest::Client, event: &Value) -> Option<u16> {
    let (url, secret) = {
        let f = fake.lock();
        (f.webhook_url.clone()?, f.secret.clone())
    };
    let body = event.to_string();
    let signature = signature_header(&secret, now(), body.as_bytes());
    http.post(url)
        .header("content-type", "application/json")
        .header("stripe-signature", signature)
        .body(body)
        .send()
        .await
        .ok()
        .map(|r| r.status().as_u16())
}

type St = State<(Fake, reqwest::Client)>;

fn error_body(kind: &str, message: &str, code: Option<&str>) -> Value {
    let mut error = json!({ "type": kind, "message": message });
    if let Some(code) = code {
        error["code"] = Value::String(code.to_owned());
    }
    json!({ "error": error })
}

fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, Json(error_body(kind, message, None))).into_response()
}

/// What every API call goes through: the call log, the version, a hang, the key.
async fn screen(fake: &Fake, headers: &HeaderMap, call: String) -> Result<(), Response> {
    let hang = {
        let mut f = fake.lock();
        f.calls.push(call);
        let version = headers
            .get("stripe-version")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        f.versions.push(version);
        f.hang
    };
    if hang {
        tokio::time::sleep(Duration::from_secs(60)).await;
    }
    let authorised = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|k| k.starts_with("sk_") || k.starts_with("rk_"));
    if !authorised {
        return Err(error(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            "Invalid API Key provided",
        ));
    }
    Ok(())
}

/// The steered answer to a call that got past [`screen`]: after the latency, a 500 while
/// failures are asked for.
async fn steered(fake: &Fake) -> Option<(StatusCode, Value)> {
    let latency = fake.lock().latency;
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let mut f = fake.lock();
    f.steered_calls += 1;
    let down = f
        .outage_until
        .is_some_and(|until| std::time::Instant::now() < until);
    let chaos =
        down || (f.chaos.fail_every > 0 && f.steered_calls.is_multiple_of(f.chaos.fail_every));
    if f.fail_next == 0 && !chaos {
        return None;
    }
    f.fail_next = f.fail_next.saturating_sub(1);
    Some((
        StatusCode::INTERNAL_SERVER_ERROR,
        error_body("api_error", "Something went wrong on Stripe's end.", None),
    ))
}

fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A request as its idempotency record compares it: the path and the sorted form.
fn request_text(path: &str, form: &HashMap<String, String>) -> String {
    let sorted: BTreeMap<&String, &String> = form.iter().collect();
    format!("{path} {sorted:?}")
}

/// A POST answered under Stripe's idempotency rules; `first` computes a first answer.
async fn idempotent(
    fake: &Fake,
    headers: &HeaderMap,
    request: String,
    first: impl FnOnce(&mut Inner) -> (StatusCode, Value),
) -> Response {
    let key = idempotency_key(headers);
    if let Some(k) = &key {
        let mut f = fake.lock();
        if let Some(saved) = f.idempotent.get(k) {
            if saved.request != request {
                return error(
                    StatusCode::BAD_REQUEST,
                    "idempotency_error",
                    "Keys for idempotent requests can only be used with the same parameters they were first used with.",
                );
            }
            return (saved.status, Json(saved.body.clone())).into_response();
        }
        if !f.in_flight.insert(k.clone()) {
            return error(
                StatusCode::CONFLICT,
                "idempotency_error",
                "There is currently another in-progress request using this Idempotent Key. Please try again later.",
            );
        }
    }
    let (status, body) = match steered(fake).await {
        Some(failure) => failure,
        None => first(&mut fake.lock()),
    };
    if let Some(k) = key {
        let mut f = fake.lock();
        f.in_flight.remove(&k);
        // A validation failure is not saved; any other answer is, 5xx included.
        let validation = status == StatusCode::BAD_REQUEST && body["error"]["code"].is_null();
        if !validation {
            f.idempotent.insert(
                k,
                Saved {
                    request,
                    status,
                    body: body.clone(),
                },
            );
        }
    }
    (status, Json(body)).into_response()
}

/// Lets session `id` lapse if its `expires_at` has passed; the `checkout.session.expired`
/// event to send when it just did.
fn lapsed(f: &mut Inner, id: &str) -> Option<Value> {
    let s = f.sessions.get_mut(id)?;
    if s.status != "open" || now() < s.expires_at {
        return None;
    }
    s.status = "expired";
    let object = s.json();
    Some(new_event(f, "checkout.session.expired", object))
}

fn send_later(fake: &Fake, http: &reqwest::Client, event: Option<Value>) {
    if let Some(event) = event {
        let (fake, http) = (fake.clone(), http.clone());
        tokio::spawn(async move { deliver(&fake, &http, event).await });
    }
}

/// Stripe's bounds on `expires_at`: 30 minutes to 24 hours after creation.
const EXPIRES_MIN_SECS: i64 = 30 * 60;
const EXPIRES_MAX_SECS: i64 = 24 * 3600;

async fn create_session(
    State((fake, _)): St,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if let Err(r) = screen(&fake, &headers, "POST /v1/checkout/sessions".into()).await {
        return r;
    }
    let request = request_text("/v1/checkout/sessions", &form);
    idempotent(&fake, &headers, request, |f| new_session(f, &form)).await
}

fn new_session(f: &mut Inner, form: &HashMap<String, String>) -> (StatusCode, Value) {
    let invalid = |message: &str| {
        (
            StatusCode::BAD_REQUEST,
            error_body("invalid_request_error", message, None),
        )
    };
    let field = |name: &str| form.get(name).cloned().unwrap_or_default();
    let amount: Option<i64> = field("line_items[0][price_data][unit_amount]").parse().ok();
    let missing = [
        "line_items[0][price_data][currency]",
        "line_items[0][price_data][product_data][name]",
        "success_url",
        "cancel_url",
    ]
    .into_iter()
    .find(|name| field(name).is_empty());
    if field("mode") != "payment" || field("line_items[0][quantity]") != "1" {
        return invalid("mode=payment and quantity 1 expected");
    }
    let (Some(amount), None) = (amount, missing) else {
        return invalid("Missing required param");
    };
    let created = now();
    let expires_at = match form.get("expires_at") {
        None => created + EXPIRES_MAX_SECS,
        Some(t) => match t.parse::<i64>() {
            Ok(t) if (created + EXPIRES_MIN_SECS..=created + EXPIRES_MAX_SECS).contains(&t) => t,
            _ => {
                return invalid(
                    "The `expires_at` timestamp must be between 30 minutes and 24 hours from Checkout Session creation.",
                )
            }
        },
    };
    f.counter += 1;
    let id = format!("cs_test_{}", f.counter);
    let session = Session {
        id: id.clone(),
        order: field("metadata[order_id]"),
        client_reference_id: field("client_reference_id"),
        name: field("line_items[0][price_data][product_data][name]"),
        amount,
        amount_total: amount,
        currency: field("line_items[0][price_data][currency]"),
        success_url: field("success_url"),
        cancel_url: field("cancel_url"),
        status: "open",
        payment_status: "unpaid",
        payment_intent: None,
        expires_at,
    };
    let mut body = session.json();
    body["url"] = Value::String(format!("{}/pay/{id}", f.base));
    f.sessions.insert(id, session);
    (StatusCode::OK, body)
}

fn with_url(f: &Inner, s: &Session) -> Value {
    let mut body = s.json();
    if s.status == "open" {
        body["url"] = Value::String(format!("{}/pay/{}", f.base, s.id));
    }
    body
}

async fn read_session(
    State((fake, http)): St,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(r) = screen(&fake, &headers, format!("GET /v1/checkout/sessions/{id}")).await {
        return r;
    }
    if let Some((status, body)) = steered(&fake).await {
        return (status, Json(body)).into_response();
    }
    let (answer, event) = {
        let mut f = fake.lock();
        let event = lapsed(&mut f, &id);
        let answer = match f.sessions.get(&id) {
            Some(s) => Json(with_url(&f, s)).into_response(),
            None => error(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "No such checkout.session",
            ),
        };
        (answer, event)
    };
    send_later(&fake, &http, event);
    answer
}

async fn expire_session(
    State((fake, http)): St,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(r) = screen(
        &fake,
        &headers,
        format!("POST /v1/checkout/sessions/{id}/expire"),
    )
    .await
    {
        return r;
    }
    if let Some((status, body)) = steered(&fake).await {
        return (status, Json(body)).into_response();
    }
    let (body, event) = {
        let mut f = fake.lock();
        let lapsed = lapsed(&mut f, &id);
        let Some(s) = f.sessions.get_mut(&id) else {
            return error(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "No such checkout.session",
            );
        };
        if s.status != "open" {
            let message = format!("Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout Session has a status of \"{}\".", s.status);
            drop(f);
            send_later(&fake, &http, lapsed);
            return error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
        }
        s.status = "expired";
        let object = s.json();
        let event = new_event(&mut f, "checkout.session.expired", object.clone());
        (object, event)
    };
    send_later(&fake, &http, Some(event));
    Json(body).into_response()
}

async fn create_refund(
    State((fake, http)): St,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if let Err(r) = screen(&fake, &headers, "POST /v1/refunds".into()).await {
        return r;
    }
    let request = request_text("/v1/refunds", &form);
    let made = fake.lock().refunds.len();
    let answer = idempotent(&fake, &headers, request, |f| new_refund(f, &form)).await;
    // A refund made: Stripe then sends `charge.refunded` about the charge.
    let event = {
        let mut f = fake.lock();
        match f.refunds.get(made).cloned() {
            Some(r) if f.refunds.len() > made => {
                let object = json!({
                    "id": format!("ch_for_{}", r.payment_intent), "object": "charge",
                    "payment_intent": r.payment_intent, "amount_refunded": r.amount, "refunded": true,
                });
                Some(new_event(&mut f, "charge.refunded", object))
            }
            _ => None,
        }
    };
    send_later(&fake, &http, event);
    answer
}

fn new_refund(f: &mut Inner, form: &HashMap<String, String>) -> (StatusCode, Value) {
    let refused = |message: &str, code: Option<&str>| {
        (
            StatusCode::BAD_REQUEST,
            error_body("invalid_request_error", message, code),
        )
    };
    let intent = form.get("payment_intent").cloned().unwrap_or_default();
    let paid = f
        .sessions
        .values()
        .find(|s| s.payment_intent.as_deref() == Some(intent.as_str()))
        .map(|s| (s.id.clone(), s.amount_total));
    let Some((session, paid)) = paid else {
        return refused("No such payment_intent", Some("resource_missing"));
    };
    if let Some(code) = f.refuse_refunds.get(&session) {
        let message = format!("This charge cannot be refunded ({code}).");
        return refused(&message, Some(&code.clone()));
    }
    let amount = form
        .get("amount")
        .and_then(|a| a.parse().ok())
        .unwrap_or(paid);
    let already: i64 = f
        .refunds
        .iter()
        .filter(|r| r.payment_intent == intent)
        .map(|r| r.amount)
        .sum();
    if already >= paid {
        return refused(
            "Charge has already been refunded.",
            Some("charge_already_refunded"),
        );
    }
    if amount <= 0 || already + amount > paid {
        return refused(
            "Refund amount is greater than the unrefunded charge",
            Some("amount_too_large"),
        );
    }
    f.counter += 1;
    let refund = Refund {
        id: format!("re_test_{}", f.counter),
        payment_intent: intent,
        amount,
    };
    let body = json!({ "id": refund.id, "object": "refund", "amount": amount, "payment_intent": refund.payment_intent, "status": "succeeded" });
    f.refunds.push(refund);
    (StatusCode::OK, body)
}

/// Escapes text for HTML.
fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

async fn hosted_page(State((fake, _)): St, Path(id): Path<String>) -> Response {
    let f = fake.lock();
    let Some(s) = f.sessions.get(&id) else {
        return (
            StatusCode::NOT_FOUND,
            Html("<h1>No such payment</h1>".to_owned()),
        )
            .into_response();
    };
    if s.status != "open" {
        return (
            StatusCode::GONE,
            Html(format!(
                "<!doctype html><title>Payment closed</title><h1 data-testid=\"stripe-closed\">This payment is {}</h1><a href=\"{}\">Back to the shop</a>",
                s.status,
                esc(&s.cancel_url)
            )),
        )
            .into_response();
    }
    let price = format!(
        "{}.{:02} {}",
        s.amount / 100,
        s.amount % 100,
        s.currency.to_uppercase()
    );
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Pay {name} (test)</title></head>\
         <body><main><h1>Test payment</h1><p data-testid=\"stripe-item\">{name}: <strong data-testid=\"stripe-amount\">{price}</strong></p>\
         <form method=\"post\" action=\"/pay/{id}\"><button type=\"submit\" data-testid=\"stripe-pay\">Pay {price}</button></form>\
         <p><a href=\"{cancel}\" data-testid=\"stripe-back\">Back to the shop</a></p></main></body></html>",
        name = esc(&s.name),
        id = esc(&s.id),
        cancel = esc(&s.cancel_url),
    ))
    .into_response()
}

async fn hosted_pay(State((fake, http)): St, Path(id): Path<String>) -> Response {
    let success = match fake.lock().sessions.get(&id) {
        Some(s) => s.success_url.replace("{CHECKOUT_SESSION_ID}", &id),
        None => return StatusCode::NOT_FOUND.into_response(),
    };
    match complete(&fake, &id, None) {
        Ok(event) => {
            // Stripe sends the webhook on its own schedule; the shopper is sent back at once.
            tokio::spawn(async move { deliver(&fake, &http, event).await });
            Redirect::to(&success).into_response()
        }
        Err(status) => (
            status,
            Html("<h1>This payment cannot be paid</h1>".to_owned()),
        )
            .into_response(),
    }
}
