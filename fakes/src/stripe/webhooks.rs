//! Events: made, signed as Stripe signs them, and delivered (retried, or lost, doubled or
//! late as a test or a load run asks).

use std::time::Duration;

use axum::http::StatusCode;
use hmac::{KeyInit, Mac};
use serde_json::{json, Value};

use super::{now, Fake, Inner};

/// `t=<t>,v1=<hex HMAC-SHA256 of "{t}.{body}" keyed by secret>`: Stripe's signature header.
pub fn signature_header(secret: &str, t: i64, body: &[u8]) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC takes any key length"));
    mac.update(t.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

pub(super) fn new_event(f: &mut Inner, kind: &str, object: Value) -> Value {
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
pub(super) fn complete(fake: &Fake, id: &str, amount: Option<i64>) -> Result<Value, StatusCode> {
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
pub(super) async fn deliver(fake: &Fake, http: &reqwest::Client, event: Value) {
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

pub(super) async fn send_once(fake: &Fake, http: &reqwest::Client, event: &Value) -> Option<u16> {
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

/// Lets session `id` lapse if its `expires_at` has passed; the `checkout.session.expired`
/// event to send when it just did.
pub(super) fn lapsed(f: &mut Inner, id: &str) -> Option<Value> {
    let s = f.sessions.get_mut(id)?;
    if s.status != "open" || now() < s.expires_at {
        return None;
    }
    s.status = "expired";
    let object = s.json();
    Some(new_event(f, "checkout.session.expired", object))
}

/// Sends `event` on Stripe's own schedule: in a task of its own, counted in flight until done.
pub(super) fn send_later(fake: &Fake, http: &reqwest::Client, event: Option<Value>) {
    if let Some(event) = event {
        let (fake, http) = (fake.clone(), http.clone());
        fake.lock().webhooks_pending += 1;
        tokio::spawn(async move {
            deliver(&fake, &http, event).await;
            fake.lock().webhooks_pending -= 1;
        });
    }
}
