//! Real payments (issue #32) over real HTTP, against a Stripe stand-in on loopback
//! (`fakes::stripe`, speaking Stripe's Checkout calls, hosted page and signed webhooks): paying
//! on the hosted page, one session per order, webhooks that do not hold, a wrong amount, a lost
//! webhook, a payment just after the deadline, money after the cancellation, Stripe failing or
//! slow, and free vouchers. Units are counted after each (I1: Redis's stock plus the live
//! orders is the stock; I2: one live order per shopper).

use std::time::Duration;

use fakes::stripe::{signature_header, FakeStripe};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{
    buy_order, expect_error, get_json, spawn_app_setting, units_hold, written, TestApp,
};

const WHSEC: &str = "whsec_test_0123456789";
const ORIGIN: &str = "http://shop.test";

/// A shop taking payments through the stand-in, whose webhooks reach the shop. Its sweep runs
/// only when a test asks.
async fn shop(db: PgPool, extra: &[(&'static str, &str)]) -> (TestApp, FakeStripe) {
    let fake = FakeStripe::start(WHSEC).await.expect("fake Stripe");
    let base = fake.base();
    let mut vars = vec![
        ("SECKILL_DEV_PAYMENTS", "false"),
        ("SECKILL_STRIPE_SECRET_KEY", "sk_test_shop"),
        ("SECKILL_STRIPE_WEBHOOK_SECRET", WHSEC),
        ("SECKILL_STRIPE_API_BASE", base.as_str()),
        ("SECKILL_STRIPE_TIMEOUT_MS", "500"),
        ("SECKILL_PUBLIC_ORIGIN", ORIGIN),
        ("SECKILL_SWEEP_MS", "3600000"),
    ];
    vars.extend_from_slice(extra);
    let app = spawn_app_setting(db, &vars).await;
    fake.set_webhook(&format!("{}/api/payments/stripe/webhook", app.base));
    (app, fake)
}

/// A shop taking payments through the stand-in, with a voucher on sale now priced
/// `price_cents`: the shop, the stand-in, the voucher.
async fn shop_selling(
    db: PgPool,
    extra: &[(&'static str, &str)],
    price_cents: i64,
    stock: i64,
) -> (TestApp, FakeStripe, i64) {
    let (app, fake) = shop(db, extra).await;
    let admin = app.sign_in("13800000000").await;
    let v = app
        .create_priced(&admin, -5, 3600, stock, price_cents)
        .await;
    (app, fake, v)
}

/// A written order of a new shopper on `v`: (the shopper, the order).
async fn written_order(app: &TestApp, v: i64, phone: &str) -> (Client, String) {
    let c = app.sign_in(phone).await;
    let order = buy_order(app, &c, v).await;
    let body = written(app, &c, &order).await;
    assert!(
        ["created", "confirmed"].contains(&body["status"].as_str().unwrap_or_default()),
        "{body}"
    );
    (c, order)
}

async fn pay(app: &TestApp, c: &Client, order: &str) -> reqwest::Response {
    c.post(format!("{}/api/orders/{order}/pay", app.base))
        .send()
        .await
        .expect("send")
}

/// Pay now, answered with the hosted page; the session's ID.
async fn open_session(app: &TestApp, c: &Client, order: &str, fake: &FakeStripe) -> String {
    let r = pay(app, c, order).await;
    assert_eq!(r.status(), StatusCode::OK);
    let url = r.json::<Value>().await.expect("json")["redirect_url"]
        .as_str()
        .expect("redirect_url")
        .to_owned();
    let id = url
        .strip_prefix(&format!("{}/pay/", fake.base()))
        .unwrap_or_else(|| panic!("{url} is not the stand-in's hosted page"));
    id.to_owned()
}

async fn order(app: &TestApp, c: &Client, order: &str) -> Value {
    get_json(c, &format!("{}/api/orders/{order}", app.base)).await
}

/// Polls the order until `done` holds of it (10 s at most); the last body.
async fn until(app: &TestApp, c: &Client, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = order(app, c, id).await;
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("order {id} stayed {last}")
}

async fn sweep(app: &TestApp) -> seckill::jobs::sweeper::SweepReport {
    for _ in 0..100 {
        match seckill::jobs::sweeper::sweep_once(&app.core)
            .await
            .expect("sweep")
        {
            seckill::jobs::sweeper::SweepOutcome::Ran(r) => return r,
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    panic!("the sweep never ran")
}

/// Voucher `v`'s figures as the admin console counts them.
async fn console_row(app: &TestApp, v: i64) -> seckill::catalog::console::VoucherCounts {
    seckill::catalog::console::overview(&app.core, 10)
        .await
        .expect("console")
        .into_iter()
        .find(|r| r.state.voucher.id.get() == v)
        .expect("the voucher's row")
}

async fn payment_state(app: &TestApp, session: &str) -> String {
    sqlx::query_scalar("SELECT state FROM payments WHERE session_id = $1")
        .bind(session)
        .fetch_one(&app.core.db)
        .await
        .expect("payment row")
}

#[sqlx::test]
async fn a_shopper_pays_on_the_hosted_page_and_the_webhook_marks_the_order_paid(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 990, 2).await;
    let (c, id) = written_order(&app, v, "13900000101").await;

    // A double click (or a retry) opens one session.
    let (first, second) = tokio::join!(pay(&app, &c, &id), pay(&app, &c, &id));
    let first: Value = first.json().await.expect("json");
    let second: Value = second.json().await.expect("json");
    assert_eq!(
        first["redirect_url"], second["redirect_url"],
        "{first} {second}"
    );
    let opened = open_session(&app, &c, &id, &fake).await;
    let sessions = fake.sessions();
    assert_eq!(
        sessions.len(),
        1,
        "one Checkout Session per order: {sessions:?}"
    );
    let s = &sessions[0];
    assert_eq!(s.id, opened);
    assert_eq!((s.amount, s.currency.as_str()), (990, "cny"));
    assert_eq!(s.name, "API voucher");
    assert_eq!(
        (s.order.as_str(), s.client_reference_id.as_str()),
        (id.as_str(), id.as_str())
    );
    assert_eq!(
        s.success_url,
        format!("{ORIGIN}/orders/{id}?payment=return")
    );
    assert_eq!(s.cancel_url, format!("{ORIGIN}/orders/{id}"));
    assert_eq!(
        order(&app, &c, &id).await["status"],
        "created",
        "not paid before Stripe says so"
    );

    fake.pay(&s.id).await.expect("paid on the hosted page");
    until(&app, &c, &id, |o| o["status"] == "paid").await;
    assert_eq!(payment_state(&app, &s.id).await, "paid");
    let reference: String = sqlx::query_scalar("SELECT payment_ref FROM orders WHERE id = $1")
        .bind(id.parse::<i64>().expect("id"))
        .fetch_one(&app.core.db)
        .await
        .expect("ref");
    assert!(
        reference.starts_with("pi_test_"),
        "Stripe's payment reference: {reference}"
    );
    expect_error(
        pay(&app, &c, &id).await,
        StatusCode::CONFLICT,
        "already_paid",
    )
    .await;
    expect_error(
        c.post(format!("{}/api/orders/{id}/cancel", app.base))
            .send()
            .await
            .expect("send"),
        StatusCode::CONFLICT,
        "already_paid",
    )
    .await;
    assert!(fake.refunds().is_empty());
    // The console counts the money: revenue from the paid order.
    let row = console_row(&app, v).await;
    assert_eq!(
        (row.paid, row.revenue_cents, row.refunded, row.flagged),
        (1, 990, 0, 0)
    );
    units_hold(&app, v, 2).await;
}

#[sqlx::test]
async fn a_webhook_whose_signature_does_not_hold_changes_nothing(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 500, 1).await;
    let (c, id) = written_order(&app, v, "13900000102").await;
    fake.drop_webhooks(true);
    let session = open_session(&app, &c, &id, &fake).await;
    fake.pay(&session).await.expect("paid, webhook held back");
    let s = fake.session(&session).expect("session");
    let event = json!({
        "id": "evt_forged_1", "type": "checkout.session.completed", "created": 0,
        "data": { "object": {
            "id": s.id, "status": "complete", "payment_status": "paid",
            "amount_total": 500, "currency": "cny", "payment_intent": s.payment_intent,
        }},
    })
    .to_string();
    let hook = format!("{}/api/payments/stripe/webhook", app.base);
    let now = chrono::Utc::now().timestamp();
    let send = |signature: Option<String>, body: String| {
        let (hook, http) = (hook.clone(), crate::support::client());
        async move {
            let mut r = http.post(hook).header("content-type", "application/json");
            if let Some(sig) = signature {
                r = r.header("stripe-signature", sig);
            }
            r.body(body).send().await.expect("send")
        }
    };
    let forged = [
        (None, event.clone(), "no header"),
        (
            Some(signature_header(
                "whsec_someone_else",
                now,
                event.as_bytes(),
            )),
            event.clone(),
            "another secret",
        ),
        (
            Some(signature_header(WHSEC, now - 301, event.as_bytes())),
            event.clone(),
            "an old timestamp",
        ),
        (
            Some(signature_header(WHSEC, now, b"{}")),
            event.clone(),
            "the signature of another body",
        ),
        (
            Some(signature_header(WHSEC, now, event.as_bytes())),
            event.replace("500", "5"),
            "the body altered after signing",
        ),
        (Some(format!("t={now},v1=zz")), event.clone(), "no hex"),
        (
            Some(format!("v1={}", "0".repeat(64))),
            event.clone(),
            "no timestamp",
        ),
    ];
    for (signature, body, what) in forged {
        let r = send(signature, body).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{what}");
        let body: Value = r.json().await.expect("json");
        assert_eq!(body["error"], "bad_signature", "{what}: {body}");
    }
    assert_eq!(
        order(&app, &c, &id).await["status"],
        "created",
        "nothing changed"
    );
    let events: i64 = sqlx::query_scalar("SELECT count(*) FROM payment_events")
        .fetch_one(&app.core.db)
        .await
        .expect("count");
    assert_eq!(events, 0, "nothing recorded from a forgery");
    // A cross-site page cannot reach it either way, but the webhook is not refused for its
    // origin: Stripe sends none, and its signature is its guard.
    let r = send(
        Some(signature_header(WHSEC, now, event.as_bytes())),
        event.clone(),
    )
    .await;
    assert_eq!(r.status(), StatusCode::OK);
    until(&app, &c, &id, |o| o["status"] == "paid").await;
    // A replay (Stripe delivers some events more than once) is acknowledged and applied once.
    for _ in 0..2 {
        let r = send(
            Some(signature_header(WHSEC, now, event.as_bytes())),
            event.clone(),
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK);
    }
    let events: i64 =
        sqlx::query_scalar("SELECT count(*) FROM payment_events WHERE event_id = 'evt_forged_1'")
            .fetch_one(&app.core.db)
            .await
            .expect("count");
    assert_eq!(events, 1);
    assert!(
        fake.refunds().is_empty(),
        "a replay is not a second payment"
    );
    // Another provider's path is no endpoint here.
    let r = crate::support::client()
        .post(format!("{}/api/payments/alipay/webhook", app.base))
        .body("x")
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    units_hold(&app, v, 1).await;
}

#[sqlx::test]
async fn a_payment_of_another_amount_is_flagged_not_paid_and_refunded_with_the_cancellation(
    db: PgPool,
) {
    let (app, fake, v) = shop_selling(db, &[("SECKILL_PAY_WITHIN_MS", "1500")], 800, 1).await;
    let (c, id) = written_order(&app, v, "13900000103").await;
    let session = open_session(&app, &c, &id, &fake).await;
    fake.pay_reporting(&session, Some(1))
        .await
        .expect("paid 0.01");
    for _ in 0..100 {
        if payment_state(&app, &session).await == "flagged" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(payment_state(&app, &session).await, "flagged");
    assert_eq!(order(&app, &c, &id).await["status"], "created", "not paid");
    let row = console_row(&app, v).await;
    assert_eq!(
        (row.paid, row.revenue_cents, row.flagged),
        (0, 0, 1),
        "admins see it flagged"
    );
    // At the deadline the order is cancelled and the money held is given back.
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let report = sweep(&app).await;
    assert_eq!(report.expired, 1, "{report:?}");
    let _ = sweep(&app).await;
    let refunds = fake.refunds();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(
        refunds[0].amount, 1,
        "what was taken goes back, not what was due"
    );
    let body = order(&app, &c, &id).await;
    assert_eq!(
        (body["status"].as_str(), body["refunded"].as_bool()),
        (Some("cancelled"), Some(true)),
        "{body}"
    );
    units_hold(&app, v, 1).await;
}

#[sqlx::test]
async fn a_lost_webhook_is_found_by_the_shoppers_return_and_by_the_sweep(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 300, 3).await;
    fake.drop_webhooks(true);

    // The return to success_url asks Stripe.
    let (a, first) = written_order(&app, v, "13900000104").await;
    let session = open_session(&app, &a, &first, &fake).await;
    fake.pay(&session).await.expect("paid");
    assert_eq!(
        order(&app, &a, &first).await["status"],
        "created",
        "no webhook came"
    );
    let page = a
        .get(format!("{}/orders/{first}?payment=return", app.base))
        .header("accept", "text/html")
        .send()
        .await
        .expect("send");
    assert_eq!(page.status(), StatusCode::OK);
    assert_eq!(order(&app, &a, &first).await["status"], "paid");

    // The order page's island asks the same through the API (`?payment=return`).
    let (r, returned) = written_order(&app, v, "13900000150").await;
    let session = open_session(&app, &r, &returned, &fake).await;
    fake.pay(&session).await.expect("paid");
    assert_eq!(order(&app, &r, &returned).await["status"], "created");
    let url = format!("{}/api/orders/{returned}?payment=return", app.base);
    let answer = get_json(&r, &url).await;
    assert_eq!(answer["status"], "paid", "{answer}");

    // No return either: the sweep looks up payments not heard of for a minute.
    let (b, second) = written_order(&app, v, "13900000105").await;
    let session = open_session(&app, &b, &second, &fake).await;
    fake.pay(&session).await.expect("paid");
    let report = sweep(&app).await;
    assert_eq!(
        report.payments.looked_up, 0,
        "heard of moments ago: {report:?}"
    );
    sqlx::query(
        "UPDATE payments SET checked_at = now() - interval '2 minutes' WHERE session_id = $1",
    )
    .bind(&session)
    .execute(&app.core.db)
    .await
    .expect("a minute passes");
    let report = sweep(&app).await;
    assert_eq!(
        (report.payments.looked_up, report.payments.paid_late),
        (1, 1),
        "{report:?}"
    );
    assert_eq!(order(&app, &b, &second).await["status"], "paid");
    assert!(fake.refunds().is_empty());
    units_hold(&app, v, 3).await;
}

#[sqlx::test]
async fn a_payment_completed_just_after_the_deadline_wins_over_the_cancellation(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[("SECKILL_PAY_WITHIN_MS", "1500")], 300, 2).await;
    fake.drop_webhooks(true);
    let (c, id) = written_order(&app, v, "13900000106").await;
    let session = open_session(&app, &c, &id, &fake).await;
    tokio::time::sleep(Duration::from_millis(1600)).await;
    // Past the shop's deadline, Stripe's page (which lives 30 min at least) still takes it.
    fake.pay(&session).await.expect("paid late");
    expect_error(
        pay(&app, &c, &id).await,
        StatusCode::CONFLICT,
        "payment_expired",
    )
    .await;
    let report = sweep(&app).await;
    assert_eq!(
        (report.payments.paid_late, report.expired),
        (1, 0),
        "{report:?}"
    );
    assert_eq!(order(&app, &c, &id).await["status"], "paid");
    assert!(
        fake.calls()
            .iter()
            .any(|c| c.ends_with(&format!("{session}/expire"))),
        "the sweep tried to expire it first: {:?}",
        fake.calls()
    );

    // An order whose session is expired in time is cancelled, and its page cannot be paid.
    let (d, other) = written_order(&app, v, "13900000107").await;
    let session = open_session(&app, &d, &other, &fake).await;
    tokio::time::sleep(Duration::from_millis(1600)).await;
    let report = sweep(&app).await;
    assert_eq!(
        (report.payments.closed, report.expired),
        (1, 1),
        "{report:?}"
    );
    assert!(
        fake.pay(&session).await.is_err(),
        "Stripe refuses an expired session"
    );
    let body = order(&app, &d, &other).await;
    assert_eq!(
        (body["status"].as_str(), body["cancelled_by"].as_str()),
        (Some("cancelled"), Some("deadline"))
    );
    units_hold(&app, v, 2).await;
}

#[sqlx::test]
async fn money_arriving_after_the_cancellation_is_refunded_and_the_unit_is_sold_once(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 700, 1).await;
    let (c, id) = written_order(&app, v, "13900000108").await;
    let session = open_session(&app, &c, &id, &fake).await;
    // Stripe is out of reach past the deadline and its grace: the order is cancelled anyway.
    sqlx::query("UPDATE orders SET pay_by = now() - interval '11 minutes' WHERE id = $1")
        .bind(id.parse::<i64>().expect("id"))
        .execute(&app.core.db)
        .await
        .expect("the deadline long past");
    fake.fail_next(1_000);
    let report = sweep(&app).await;
    assert_eq!(
        (report.payments.closed, report.expired),
        (1, 1),
        "{report:?}"
    );
    fake.fail_next(0);
    // The unit is sold again, to someone else.
    let (other, theirs) = written_order(&app, v, "13900000109").await;
    // Then the first shopper's payment arrives: refunded, and the order stays cancelled.
    fake.pay(&session)
        .await
        .expect("paid on a page still open at Stripe");
    let body = until(&app, &c, &id, |o| o["refunded"] == true).await;
    assert_eq!(
        body["status"], "cancelled",
        "a cancelled order never comes back to life"
    );
    for _ in 0..100 {
        if !fake.refunds().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refunds = fake.refunds();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert_eq!(
        (refunds[0].amount, refunds[0].payment_intent.as_str()),
        (
            700,
            fake.session(&session)
                .and_then(|s| s.payment_intent)
                .as_deref()
                .unwrap_or_default()
        )
    );
    assert_eq!(payment_state(&app, &session).await, "refunded");
    // The refund is made once, however often the event comes.
    let _ = sweep(&app).await;
    assert_eq!(fake.refunds().len(), 1);
    assert_eq!(order(&app, &other, &theirs).await["status"], "created");
    let row = console_row(&app, v).await;
    assert_eq!((row.refunded, row.revenue_cents), (1, 0));
    units_hold(&app, v, 1).await;
}

#[sqlx::test]
async fn stripe_failing_or_slow_answers_503_and_leaves_no_stuck_order(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 300, 1).await;
    let (c, id) = written_order(&app, v, "13900000110").await;

    fake.fail_next(2);
    let r = pay(&app, &c, &id).await;
    assert_eq!(
        r.headers().get("retry-after").map(|h| h.as_bytes()),
        Some(&b"2"[..])
    );
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "payment_unavailable").await;
    assert!(fake.sessions().is_empty());

    fake.hang(true);
    let started = std::time::Instant::now();
    let r = pay(&app, &c, &id).await;
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "payment_unavailable").await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "bounded by the timeout: {:?}",
        started.elapsed()
    );
    fake.hang(false);

    let body = order(&app, &c, &id).await;
    assert_eq!(
        body["status"], "created",
        "the order keeps its deadline: {body}"
    );
    let open: i64 = sqlx::query_scalar("SELECT count(*) FROM payments WHERE state = 'open'")
        .fetch_one(&app.core.db)
        .await
        .expect("count");
    assert_eq!(open, 0, "no payment left open by a failed call");
    // Once Stripe answers, Pay now works (with the same idempotency key, one session).
    let session = open_session(&app, &c, &id, &fake).await;
    fake.pay(&session).await.expect("paid");
    until(&app, &c, &id, |o| o["status"] == "paid").await;
    units_hold(&app, v, 1).await;
}

#[sqlx::test]
async fn a_free_voucher_is_confirmed_once_written_and_asks_no_provider(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[("SECKILL_PAY_WITHIN_MS", "300")], 0, 2).await;
    let (c, id) = written_order(&app, v, "13900000111").await;
    let body = order(&app, &c, &id).await;
    assert_eq!(body["status"], "confirmed", "{body}");
    assert!(body.get("pay_by").is_none(), "no deadline: {body}");
    expect_error(
        pay(&app, &c, &id).await,
        StatusCode::CONFLICT,
        "order_confirmed",
    )
    .await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let report = sweep(&app).await;
    assert_eq!(report.expired, 0, "a free order never expires: {report:?}");
    assert_eq!(order(&app, &c, &id).await["status"], "confirmed");
    assert!(
        fake.calls().is_empty(),
        "no provider asked: {:?}",
        fake.calls()
    );
    let page = c
        .get(format!("{}/orders/{id}", app.base))
        .header("accept", "text/html")
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("Confirmed") && !page.contains(r#"data-testid="pay""#),
        "{page}"
    );
    units_hold(&app, v, 2).await;
}
