//! Stripe's API as the shop calls it: sessions, their expiry, refunds, under Stripe's
//! idempotency rules and the steered failures.

use std::{
    collections::{BTreeMap, HashMap},
    time::Duration,
};

use axum::{
    extract::{Form, Path, State},
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use serde_json::{json, Value};

use super::{
    now,
    webhooks::{lapsed, new_event, send_later},
    Fake, Inner, Refund, Saved, Session, St,
};

pub(super) fn error_body(kind: &str, message: &str, code: Option<&str>) -> Value {
    let mut error = json!({ "type": kind, "message": message });
    if let Some(code) = code {
        error["code"] = Value::String(code.to_owned());
    }
    json!({ "error": error })
}

pub(super) fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    (status, Json(error_body(kind, message, None))).into_response()
}

/// What every API call goes through: the call log, the version, a hang, the key.
pub(super) async fn screen(fake: &Fake, headers: &HeaderMap, call: String) -> Result<(), Response> {
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
pub(super) async fn steered(fake: &Fake) -> Option<(StatusCode, Value)> {
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

pub(super) fn idempotency_key(headers: &HeaderMap) -> Option<String> {
    headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A request as its idempotency record compares it: the path and the sorted form.
pub(super) fn request_text(path: &str, form: &HashMap<String, String>) -> String {
    let sorted: BTreeMap<&String, &String> = form.iter().collect();
    format!("{path} {sorted:?}")
}

/// A POST answered under Stripe's idempotency rules; `first` computes a first answer.
pub(super) async fn idempotent(
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

/// Stripe's bounds on `expires_at`: 30 minutes to 24 hours after creation.
pub(super) const EXPIRES_MIN_SECS: i64 = 30 * 60;

pub(super) const EXPIRES_MAX_SECS: i64 = 24 * 3600;

pub(super) async fn create_session(
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

pub(super) fn new_session(f: &mut Inner, form: &HashMap<String, String>) -> (StatusCode, Value) {
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

pub(super) fn with_url(f: &Inner, s: &Session) -> Value {
    let mut body = s.json();
    if s.status == "open" {
        body["url"] = Value::String(format!("{}/pay/{}", f.base, s.id));
    }
    body
}

pub(super) async fn read_session(
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

pub(super) async fn expire_session(
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

pub(super) async fn create_refund(
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

pub(super) fn new_refund(f: &mut Inner, form: &HashMap<String, String>) -> (StatusCode, Value) {
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
