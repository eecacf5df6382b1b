//! A Stripe stand-in: the Checkout calls the shop makes, the hosted payment page a shopper
//! pays on, and the signed webhooks Stripe sends (`../shared/docs/payments-notes.md`).
//!
//! | Stripe | here |
//! | --- | --- |
//! | `POST /v1/checkout/sessions` (form) | a session `cs_test_N`, its `url` this server's `/pay/cs_test_N`; the same `Idempotency-Key` answers the first result again |
//! | `GET /v1/checkout/sessions/{id}` | the session |
//! | `POST /v1/checkout/sessions/{id}/expire` | an open session expires (and `checkout.session.expired` is sent); any other answers 400 `invalid_request_error` |
//! | `POST /v1/refunds` (form `payment_intent`, `amount`) | a refund `re_N`, once per `Idempotency-Key` |
//! | the hosted page `GET /pay/{id}`, `POST /pay/{id}` | a plain form (no JavaScript needed): paying completes the session, sends `checkout.session.completed` signed, and answers 303 to `success_url` |
//!
//! Every API call needs `Authorization: Bearer sk_…`; errors are `{"error": {"type",
//! "message"}}`. Webhooks carry `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
//! "{t}.{body}">` keyed by the whole `whsec_…` secret, and are retried (three tries) until the
//! shop answers 2xx, as Stripe does (sooner). Tests steer it: answer 500 to the next calls,
//! hang, drop webhooks, pay a session with another amount, send or replay an event.

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
        })
    }
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
    /// Idempotency-Key → the first (successful) answer's body.
    idempotent: HashMap<String, Value>,
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

    pub fn sessions(&self) -> Vec<Session> {
        self.fake.lock().sessions.values().cloned().collect()
    }

    pub fn session(&self, id: &str) -> Option<Session> {
        self.fake.lock().sessions.get(id).cloned()
    }

    pub fn refunds(&self) -> Vec<Refund> {
        self.fake.lock().refunds.clone()
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
    if fake.lock().drop_webhooks {
        return;
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

fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    (
        status,
        Json(json!({ "error": { "type": kind, "message": message } })),
    )
        .into_response()
}

/// What every API call goes through: the key, the steered failures, the call log.
async fn screen(fake: &Fake, headers: &HeaderMap, call: String) -> Result<(), Response> {
    let hang = {
        let mut f = fake.lock();
        f.calls.push(call);
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
    let mut f = fake.lock();
    if f.fail_next > 0 {
        f.fail_next -= 1;
        return Err(error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "api_error",
            "Something went wrong on Stripe's end.",
        ));
    }
    Ok(())
}

fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// The first answer to a request with this `Idempotency-Key`, as Stripe answers a retry.
fn replayed(f: &Inner, key: Option<&str>) -> Option<Response> {
    let body = f.idempotent.get(key?)?;
    Some(Json(body.clone()).into_response())
}

async fn create_session(
    State((fake, _)): St,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if let Err(r) = screen(&fake, &headers, "POST /v1/checkout/sessions".into()).await {
        return r;
    }
    let key = idempotency_key(&headers);
    let mut f = fake.lock();
    if let Some(first) = replayed(&f, key.as_deref()) {
        return first;
    }
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
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "mode=payment and quantity 1 expected",
        );
    }
    let (Some(amount), None) = (amount, missing) else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "Missing required param",
        );
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
    };
    let mut body = session.json();
    body["url"] = Value::String(format!("{}/pay/{id}", f.base));
    f.sessions.insert(id, session);
    if let Some(k) = key {
        f.idempotent.insert(k, body.clone());
    }
    Json(body).into_response()
}

fn with_url(f: &Inner, s: &Session) -> Value {
    let mut body = s.json();
    if s.status == "open" {
        body["url"] = Value::String(format!("{}/pay/{}", f.base, s.id));
    }
    body
}

async fn read_session(
    State((fake, _)): St,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Response {
    if let Err(r) = screen(&fake, &headers, format!("GET /v1/checkout/sessions/{id}")).await {
        return r;
    }
    let f = fake.lock();
    match f.sessions.get(&id) {
        Some(s) => Json(with_url(&f, s)).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            "invalid_request_error",
            "No such checkout.session",
        ),
    }
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
    let (body, event) = {
        let mut f = fake.lock();
        let Some(s) = f.sessions.get_mut(&id) else {
            return error(
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "No such checkout.session",
            );
        };
        if s.status != "open" {
            let message = format!("Only Checkout Sessions with a status in [\"open\"] can be expired. This Checkout Session has a status of \"{}\".", s.status);
            return error(StatusCode::BAD_REQUEST, "invalid_request_error", &message);
        }
        s.status = "expired";
        let object = s.json();
        let event = new_event(&mut f, "checkout.session.expired", object.clone());
        (object, event)
    };
    tokio::spawn(async move { deliver(&fake, &http, event).await });
    Json(body).into_response()
}

async fn create_refund(
    State((fake, _)): St,
    headers: HeaderMap,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    if let Err(r) = screen(&fake, &headers, "POST /v1/refunds".into()).await {
        return r;
    }
    let key = idempotency_key(&headers);
    let mut f = fake.lock();
    if let Some(first) = replayed(&f, key.as_deref()) {
        return first;
    }
    let intent = form.get("payment_intent").cloned().unwrap_or_default();
    let paid = f
        .sessions
        .values()
        .find(|s| s.payment_intent.as_deref() == Some(intent.as_str()))
        .map(|s| s.amount_total);
    let Some(paid) = paid else {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "No such payment_intent",
        );
    };
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
    if amount <= 0 || already + amount > paid {
        return error(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "Refund amount is greater than the unrefunded charge",
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
    if let Some(k) = key {
        f.idempotent.insert(k, body.clone());
    }
    Json(body).into_response()
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
