//! After the rush over real HTTP (design.md §5): pay through the provider's page, cancel, the 409s
//! of transitions no longer possible, someone else's order, and an admin ending a sale or adding
//! stock. Run on one Redis node and on the cluster.

use crate::support::{buy_order as buy, expect_error, remaining, spawn_app, written};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::PgPool;

#[sqlx::test]
async fn paying_and_cancelling_over_http(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 2).await;
    let a = app.sign_in("13900000001").await;
    let b = app.sign_in("13900000002").await;
    let order = buy(&app, &a, v).await;

    let body = written(&app, &a, &order).await;
    assert_eq!(body["status"], "created", "{body}");
    let pay_by = body["pay_by"].as_str().expect("pay_by while created");
    assert!(
        chrono::DateTime::parse_from_rfc3339(pay_by).is_ok(),
        "{pay_by}"
    );

    // Someone else's order answers like an unknown one.
    expect_error(
        app.pay(&b, &order).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.cancel(&b, &order).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.cancel(&a, 12345).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.cancel(&crate::support::client(), &order).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;

    // Pay now answers where to pay (the dev provider's page sends the shopper straight back to
    // the order's page); asking again answers the same payment.
    let mut redirect = String::new();
    for _ in 0..2 {
        let r = app.pay(&a, &order).await;
        assert_eq!(r.status(), StatusCode::OK, "one payment per order");
        let body = r.json::<Value>().await.expect("json");
        assert_eq!(body["order_id"], order.as_str());
        let to = body["redirect_url"]
            .as_str()
            .expect("redirect_url")
            .to_owned();
        assert!(
            redirect.is_empty() || redirect == to,
            "{redirect} then {to}"
        );
        redirect = to;
    }
    assert_eq!(redirect, format!("/orders/{order}?payment=return"));
    // The shopper's return looks the payment up: paid.
    let page = a
        .get(format!("{}{redirect}", app.base))
        .header("accept", "text/html")
        .send()
        .await
        .expect("send");
    assert_eq!(page.status(), StatusCode::OK);
    expect_error(
        app.pay(&a, &order).await,
        StatusCode::CONFLICT,
        "already_paid",
    )
    .await;
    expect_error(
        app.cancel(&a, &order).await,
        StatusCode::CONFLICT,
        "already_paid",
    )
    .await;
    let body: Value = app.order(&a, &order).await.json().await.expect("json");
    assert_eq!(body["status"], "paid");
    assert!(body.get("pay_by").is_none(), "{body}");

    // B buys, cancels (twice: the same answer), and the unit is back on sale.
    let theirs = buy(&app, &b, v).await;
    written(&app, &b, &theirs).await;
    assert_eq!(remaining(&app, v).await, 0);
    for _ in 0..2 {
        let r = app.cancel(&b, &theirs).await;
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(
            r.json::<Value>().await.expect("json"),
            json!({ "order_id": theirs, "status": "cancelled" })
        );
    }
    assert_eq!(remaining(&app, v).await, 1, "the unit is back");
    expect_error(
        app.pay(&b, &theirs).await,
        StatusCode::CONFLICT,
        "order_cancelled",
    )
    .await;
    let body: Value = app.order(&b, &theirs).await.json().await.expect("json");
    assert_eq!(body["status"], "cancelled");
    assert_eq!(body["cancelled_by"], "shopper");
    let again = buy(&app, &b, v).await;
    assert_ne!(
        again, theirs,
        "a shopper whose order was cancelled may buy again"
    );
}

#[sqlx::test]
async fn admins_end_a_sale_and_add_stock_over_http(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900000003").await;
    let v = app.create(&admin, -5, 3600, 1).await;

    expect_error(
        app.end_sale(&shopper, v).await,
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    expect_error(
        app.move_stock(&shopper, v, &json!({ "add": 1 })).await,
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    for bad in [
        json!({}),
        json!({ "add": 0 }),
        json!({ "add": "2" }),
        json!({ "add": 1.5 }),
    ] {
        let r = app.move_stock(&admin, v, &bad).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{bad}");
        let body: Value = r.json().await.expect("json");
        assert_eq!(body["error"], "invalid");
        assert!(body["fields"]["add"].is_string(), "{body}");
    }
    for _ in 0..2 {
        let r = admin
            .post(format!("{}/api/admin/vouchers/{v}/stock", app.base))
            .header("Idempotency-Key", "top-up-1")
            .json(&json!({ "add": 2 }))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), StatusCode::OK);
        let body: Value = r.json().await.expect("json");
        assert_eq!(
            (body["stock"].as_i64(), body["remaining"].as_i64()),
            (Some(3), Some(3)),
            "added once: {body}"
        );
    }

    let r = app.end_sale(&admin, v).await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.json::<Value>().await.expect("json")["status"], "ended");
    expect_error(app.buy(&shopper, v).await, StatusCode::FORBIDDEN, "ended").await;
    expect_error(
        app.move_stock(&admin, v, &json!({ "add": 1 })).await,
        StatusCode::FORBIDDEN,
        "ended",
    )
    .await;
    expect_error(
        app.end_sale(&admin, 999999).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}
