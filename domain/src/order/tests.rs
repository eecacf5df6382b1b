//! Order IDs, statuses and cancellers: their text, their wire form, their parsing.

use super::*;
use proptest::prelude::*;

#[test]
fn the_layout_puts_seconds_above_the_sequence() {
    let id = OrderId::from_parts(1, 2).expect("fits");
    assert_eq!(id.get(), (1u64 << 32) | 2);
    assert_eq!(id.seconds(), 1);
    assert_eq!(id.sequence(), 2);
    let max = OrderId::from_parts(u32::MAX >> 1, u32::MAX).expect("fits");
    assert_eq!(max.get(), i64::MAX as u64, "sign bit stays zero");
    assert_eq!(
        OrderId::from_parts(1 << 31, 0),
        Err(OrderIdError::SecondsOutOfRange)
    );
}

#[test]
fn issued_at_counts_from_2022() {
    let id = OrderId::from_parts(86_400, 7).expect("fits");
    assert_eq!(id.issued_at().to_rfc3339(), "2022-01-02T00:00:00+00:00");
}

#[test]
fn json_carries_a_decimal_string() {
    let id = OrderId::from_parts(123_456_789, 4_000_000_000).expect("fits");
    let json = serde_json::to_string(&id).expect("serializes");
    assert_eq!(json, format!("\"{}\"", id.get()));
    assert!(
        id.get() > (1u64 << 53),
        "this ID would lose precision as a JS number"
    );
    assert_eq!(serde_json::from_str::<OrderId>(&json).expect("parses"), id);
    assert!(
        serde_json::from_str::<OrderId>("12").is_err(),
        "numbers are refused"
    );
}

#[test]
fn a_failed_status_carries_its_reason_on_the_wire() {
    let failed = OrderStatus::Failed {
        reason: FailureReason::SoldOut,
    };
    let json = serde_json::to_value(failed).expect("serializes");
    assert_eq!(
        json,
        serde_json::json!({"status": "failed", "reason": "sold_out"})
    );
    assert_eq!(
        serde_json::from_value::<OrderStatus>(json).ok(),
        Some(failed)
    );
    assert!(serde_json::from_value::<OrderStatus>(
        serde_json::json!({"status": "failed", "reason": "oops"})
    )
    .is_err());
    assert!(!OrderStatus::Queued.is_final());
    let created = OrderStatus::Created {
        pay_by: DateTime::UNIX_EPOCH,
        payment_mismatch: false,
    };
    assert!(created.is_final() && failed.is_final());
    assert!(!created.is_settled() && failed.is_settled() && OrderStatus::Paid.is_settled());
}

#[test]
fn awaiting_payment_carries_its_deadline_and_a_cancellation_says_by_whom() {
    let pay_by = DateTime::parse_from_rfc3339("2030-01-01T10:15:00Z")
        .map(|t| t.with_timezone(&Utc))
        .expect("time");
    let created = OrderStatus::Created {
        pay_by,
        payment_mismatch: false,
    };
    let json = serde_json::to_value(created).expect("serializes");
    assert_eq!(
        json,
        serde_json::json!({"status": "created", "pay_by": "2030-01-01T10:15:00Z"})
    );
    assert_eq!(
        serde_json::from_value::<OrderStatus>(json).ok(),
        Some(created)
    );
    assert_eq!(created.pay_by(), Some(pay_by));
    assert!(!created.payment_mismatch());
    let mismatched = OrderStatus::Created {
        pay_by,
        payment_mismatch: true,
    };
    let json = serde_json::to_value(mismatched).expect("serializes");
    assert_eq!(
        json,
        serde_json::json!({"status": "created", "pay_by": "2030-01-01T10:15:00Z", "payment_mismatch": true})
    );
    assert_eq!(
        serde_json::from_value::<OrderStatus>(json).ok(),
        Some(mismatched)
    );
    assert!(mismatched.payment_mismatch() && mismatched.pay_by() == Some(pay_by));
    let cancelled = OrderStatus::Cancelled {
        cancelled_by: Canceller::Deadline,
        refund: Refund::None,
    };
    let json = serde_json::to_value(cancelled).expect("serializes");
    assert_eq!(
        json,
        serde_json::json!({"status": "cancelled", "cancelled_by": "deadline"})
    );
    assert_eq!(
        serde_json::from_value::<OrderStatus>(json).ok(),
        Some(cancelled)
    );
    assert_eq!(OrderStatus::Paid.pay_by(), None);
    for (refund, name) in [
        (Refund::Owed, "owed"),
        (Refund::Refunded, "refunded"),
        (Refund::Refused, "refused"),
    ] {
        let cancelled = OrderStatus::Cancelled {
            cancelled_by: Canceller::Shop,
            refund,
        };
        let json = serde_json::to_value(cancelled).expect("serializes");
        assert_eq!(
            json,
            serde_json::json!({"status": "cancelled", "cancelled_by": "shop", "refund": name})
        );
        assert_eq!(
            serde_json::from_value::<OrderStatus>(json).ok(),
            Some(cancelled)
        );
    }
    let confirmed = serde_json::to_value(OrderStatus::Confirmed).expect("serializes");
    assert_eq!(confirmed, serde_json::json!({"status": "confirmed"}));
    assert!(OrderStatus::Confirmed.is_settled() && OrderStatus::Confirmed.pay_by().is_none());
    for c in [Canceller::Shopper, Canceller::Deadline] {
        assert_eq!(c.as_str().parse::<Canceller>(), Ok(c));
    }
    assert!("admin".parse::<Canceller>().is_err());
}

#[test]
fn idempotency_keys_are_short_visible_ascii() {
    assert!(IdempotencyKey::try_from("pay-7f3a").is_ok());
    for bad in ["", "has space", "tab\t", "é", &"k".repeat(101)] {
        assert!(IdempotencyKey::try_from(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn bad_strings_are_refused() {
    for bad in ["", "-1", "1.0", "abc", "9223372036854775808", " 1"] {
        assert!(bad.parse::<OrderId>().is_err(), "{bad:?} accepted");
    }
}

proptest! {
    #[test]
    fn parts_round_trip(secs in 0u32..(1 << 31), seq in any::<u32>()) {
        let id = OrderId::from_parts(secs, seq).expect("fits");
        prop_assert_eq!((id.seconds(), id.sequence()), (secs, seq));
        prop_assert_eq!(id.to_string().parse::<OrderId>(), Ok(id));
        prop_assert_eq!(OrderId::from_redis_hex(&id.to_redis_hex()), Ok(id));
        prop_assert_eq!(OrderId::from_db(id.as_i64()), Ok(id));
    }

    #[test]
    fn later_seconds_always_sort_later(a in 0u32..(1 << 30), b in any::<u32>(), c in any::<u32>()) {
        let earlier = OrderId::from_parts(a, b).expect("fits");
        let later = OrderId::from_parts(a + 1, c).expect("fits");
        prop_assert!(earlier < later);
    }
}
