//! Stripe's webhooks: the signature over the raw body, and what each event the shop acts on
//! says (a session's state, or money already taken: a refund, a dispute).

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::super::{DisputeStatus, MoneyEvent, RefundOutcome, SessionState, SessionStatus};
use crate::signing;

/// How far a webhook's timestamp may be from now (Stripe's libraries' default).
pub const SIGNATURE_TOLERANCE_SECS: i64 = 300;

/// The webhook's signature header.
pub const SIGNATURE_HEADER: &str = "stripe-signature";

/// The events the shop acts on; any other is acknowledged and recorded.
pub(super) const SESSION_EVENTS: [&str; 4] = [
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

/// What a refund, charge or dispute event says of the money, if the shop acts on it.
pub(super) fn money_event(kind: &str, object: &Value) -> Option<MoneyEvent> {
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

/// A Checkout Session object as the shop reads it.
pub(super) fn session(object: &Value) -> Result<SessionState, String> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
