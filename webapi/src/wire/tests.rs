//! The wire types: what the islands read, as the server writes it.

use super::*;
use domain::FailureReason;

#[test]
fn countdowns_drop_empty_leading_units() {
    assert_eq!(format_countdown(5), "00:05");
    assert_eq!(format_countdown(-3), "00:00");
    assert_eq!(format_countdown(3_725), "01:02:05");
    assert_eq!(format_countdown(90_061), "1d 01:01:01");
}

#[test]
fn the_wire_shapes_stay_those_of_design_md() {
    let begins = DateTime::parse_from_rfc3339("2030-01-01T10:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .expect("time");
    let window = SaleWindow::new(begins, begins + chrono::Duration::hours(1)).expect("window");
    let v = VoucherView {
        id: VoucherId::from_db(4),
        title: "t".into(),
        description: String::new(),
        price_cents: 1,
        stock: 5,
        remaining: 3,
        window,
        opening: Opening::Draw {
            entries_open_at: begins - chrono::Duration::minutes(10),
        },
        status: VoucherStatus::Upcoming,
    };
    let json = serde_json::to_value(&v).expect("serializes");
    assert_eq!(json["id"], 4);
    assert_eq!(json["opening"], "draw");
    assert_eq!(json["entries_open_at"], "2030-01-01T09:50:00Z");
    assert_eq!(json["begins_at"], "2030-01-01T10:00:00Z");
    assert_eq!(json["status"], "upcoming");
    assert_eq!(
        serde_json::from_value::<VoucherView>(json).ok(),
        Some(v.clone())
    );
    assert_eq!(v.status_at(begins), VoucherStatus::OnSale);

    let o = OrderView {
        order_id: OrderId::from_parts(1, 2).expect("fits"),
        voucher_id: VoucherId::from_db(4),
        status: OrderStatus::Failed {
            reason: FailureReason::SoldOut,
        },
        created_at: begins,
    };
    let json = serde_json::to_value(o).expect("serializes");
    assert_eq!(json["order_id"], "4294967298");
    assert_eq!(json["status"], "failed");
    assert_eq!(json["reason"], "sold_out");
    assert_eq!(serde_json::from_value::<OrderView>(json).ok(), Some(o));
}

/// The flat twins read back every status and opening as written, and keep the checks of
/// the types they build.
#[test]
fn every_status_and_opening_reads_back_as_written() {
    let at = DateTime::parse_from_rfc3339("2030-01-01T10:00:00Z")
        .map(|t| t.with_timezone(&Utc))
        .expect("time");
    let statuses = [
        OrderStatus::Queued,
        OrderStatus::Created {
            pay_by: at,
            payment_mismatch: false,
        },
        OrderStatus::Created {
            pay_by: at,
            payment_mismatch: true,
        },
        OrderStatus::Paid,
        OrderStatus::Confirmed,
        OrderStatus::Cancelled {
            cancelled_by: Canceller::Deadline,
            refund: Refund::Refunded,
        },
        OrderStatus::Cancelled {
            cancelled_by: Canceller::Shop,
            refund: Refund::Owed,
        },
        OrderStatus::Cancelled {
            cancelled_by: Canceller::Shop,
            refund: Refund::Refused,
        },
        OrderStatus::Cancelled {
            cancelled_by: Canceller::Shopper,
            refund: Refund::None,
        },
        OrderStatus::Failed {
            reason: FailureReason::SoldOut,
        },
    ];
    for status in statuses {
        let o = OrderView {
            order_id: OrderId::from_parts(7, 1).expect("fits"),
            voucher_id: VoucherId::from_db(9),
            status,
            created_at: at,
        };
        let json = serde_json::to_string(&o).expect("serializes");
        assert_eq!(
            serde_json::from_str::<OrderView>(&json).ok(),
            Some(o),
            "{json}"
        );
    }
    let cancelled_by_shop = |refund| {
        serde_json::to_value(OrderView {
            order_id: OrderId::from_parts(7, 1).expect("fits"),
            voucher_id: VoucherId::from_db(9),
            status: OrderStatus::Cancelled {
                cancelled_by: Canceller::Shop,
                refund,
            },
            created_at: at,
        })
        .expect("serializes")
    };
    let refunded = cancelled_by_shop(Refund::Refunded);
    assert_eq!(
        (&refunded["refund"], &refunded["refunded"]),
        (&"refunded".into(), &true.into())
    );
    for (refund, name) in [(Refund::Owed, "owed"), (Refund::Refused, "refused")] {
        let json = cancelled_by_shop(refund);
        assert_eq!(json["refund"], name);
        assert!(json.get("refunded").is_none(), "{json}");
    }
    let created_without_deadline =
        r#"{"order_id":"1","voucher_id":1,"status":"created","created_at":"2030-01-01T10:00:00Z"}"#;
    assert!(serde_json::from_str::<OrderView>(created_without_deadline).is_err());

    let v = VoucherView {
        id: VoucherId::from_db(4),
        title: "t".into(),
        description: "d".into(),
        price_cents: 0,
        stock: 1,
        remaining: 1,
        window: SaleWindow::new(at, at + chrono::Duration::hours(1)).expect("window"),
        opening: Opening::FirstCome,
        status: VoucherStatus::OnSale,
    };
    let mut json = serde_json::to_value(&v).expect("serializes");
    assert_eq!(json["opening"], "first_come");
    assert_eq!(
        serde_json::from_value::<VoucherView>(json.clone()).ok(),
        Some(v)
    );
    json["ends_at"] = json["begins_at"].clone();
    assert!(
        serde_json::from_value::<VoucherView>(json.clone()).is_err(),
        "an empty window"
    );
    json["ends_at"] = "2030-01-01T11:00:00Z".into();
    json["opening"] = "draw".into();
    assert!(
        serde_json::from_value::<VoucherView>(json).is_err(),
        "a draw without entries_open_at"
    );
}
