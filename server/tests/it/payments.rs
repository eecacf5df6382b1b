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

/// Polls the order until `done` holds of it (30 s at most: a hang guard, the work takes
/// milliseconds); the last body.
async fn until(app: &TestApp, c: &Client, id: &str, done: impl Fn(&Value) -> bool) -> Value {
    let mut last = Value::Null;
    for _ in 0..600 {
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

/// The money invariants M1–M3 (design.md §1), checked against what the stand-in says it took
/// and gave back.
async fn money_holds(app: &TestApp, fake: &FakeStripe) {
    let captured: Vec<_> = fake.captured().into_iter().map(Into::into).collect();
    let refunded: Vec<_> = fake.refunded().into_iter().map(Into::into).collect();
    let broken = seckill::orders::reconcile::money_violations(&app.core, &captured, &refunded)
        .await
        .expect("books");
    assert!(broken.is_empty(), "{broken:?}");
}

/// A payment's order cancelled behind its session's back (what a Pay now racing a cancel
/// leaves when the process dies before it closes the session it recorded).
async fn cancelled_behind(app: &TestApp, id: &str) {
    sqlx::query(
        "UPDATE orders SET status = 'cancelled', cancelled_at = now(), cancelled_by = 'shopper'
         WHERE id = $1",
    )
    .bind(id.parse::<i64>().expect("id"))
    .execute(&app.core.db)
    .await
    .expect("cancelled behind the session's back");
}

/// Sets order `id`'s deadline `minutes` in the past.
async fn past_deadline(app: &TestApp, id: &str, minutes: i32) {
    sqlx::query("UPDATE orders SET pay_by = now() - make_interval(mins => $2) WHERE id = $1")
        .bind(id.parse::<i64>().expect("id"))
        .bind(minutes)
        .execute(&app.core.db)
        .await
        .expect("the deadline past");
}

/// Waits until payment `session` is in `state` (30 s at most: a hang guard).
async fn payment_reaches(app: &TestApp, session: &str, state: &str) {
    for _ in 0..600 {
        if payment_state(app, session).await == state {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "payment {session} stayed {}",
        payment_state(app, session).await
    )
}

/// Sweeps until payment `session` is in `state` (the sweep runs every pass's due work; a
/// refund waits out its backoff); the passes' guard is a minute.
async fn sweep_until_state(app: &TestApp, session: &str, state: &str) {
    for _ in 0..120 {
        if payment_state(app, session).await == state {
            return;
        }
        let _ = sweep(app).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!(
        "payment {session} stayed {}",
        payment_state(app, session).await
    )
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
    assert!(
        fake.versions()
            .iter()
            .all(|v| v.as_deref() == Some(seckill::orders::payment::stripe::API_VERSION)),
        "every call pins the API version: {:?}",
        fake.versions()
    );
    let s = fake.session(&s.id).expect("session");
    let lifetime = s.expires_at - chrono::Utc::now().timestamp();
    assert!(
        (30 * 60..=32 * 60).contains(&lifetime),
        "sessions lapse after Stripe's shortest lifetime, not its 24 h default: {lifetime} s"
    );
    money_holds(&app, &fake).await;
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
    money_holds(&app, &fake).await;
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
    payment_reaches(&app, &session, "flagged").await;
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
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn a_lost_webhook_is_found_by_the_shoppers_return_and_by_the_sweep(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 450, 3).await;
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
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn a_payment_completed_just_after_the_deadline_wins_over_the_cancellation(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[("SECKILL_PAY_WITHIN_MS", "1500")], 450, 2).await;
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
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn money_arriving_after_the_cancellation_is_refunded_and_the_unit_is_sold_once(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 700, 1).await;
    let (c, id) = written_order(&app, v, "13900000108").await;
    let session = open_session(&app, &c, &id, &fake).await;
    // Stripe is out of reach past the deadline and its grace: the order is cancelled anyway.
    past_deadline(&app, &id, 11).await;
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
    // The refund is made beside the webhook's answer: wait until the books say so.
    payment_reaches(&app, &session, "refunded").await;
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
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn stripe_failing_or_slow_answers_503_and_leaves_no_stuck_order(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 450, 1).await;
    let (c, id) = written_order(&app, v, "13900000110").await;

    // One 500: Stripe saves it against the key, so the shop's own retry gets it replayed.
    fake.fail_next(1);
    let r = pay(&app, &c, &id).await;
    assert_eq!(
        r.headers().get("retry-after").map(|h| h.as_bytes()),
        Some(&b"2"[..])
    );
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "payment_unavailable").await;
    assert!(fake.sessions().is_empty());
    assert_eq!(
        fake.calls()
            .iter()
            .filter(|c| *c == "POST /v1/checkout/sessions")
            .count(),
        2,
        "the call and its one retry"
    );

    // A hanging Stripe (it answers after 60 s): Pay now gives up after its timeout, twice
    // 500 ms and a pause; the bound leaves that an eightfold margin on a busy machine and
    // stays far below the hang it must not wait out.
    fake.hang(true);
    let started = std::time::Instant::now();
    let r = pay(&app, &c, &id).await;
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "payment_unavailable").await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
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
    // Once Stripe answers, Pay now works: the failed attempts' keys (one holding a saved 500)
    // are not asked again, so the next one opens the session.
    let session = open_session(&app, &c, &id, &fake).await;
    fake.pay(&session).await.expect("paid");
    until(&app, &c, &id, |o| o["status"] == "paid").await;
    units_hold(&app, v, 1).await;
    money_holds(&app, &fake).await;
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
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn a_refund_refused_for_good_blocks_no_other_refund_and_is_for_an_admin(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 500, 2).await;
    let (a, first) = written_order(&app, v, "13900000120").await;
    let (b, second) = written_order(&app, v, "13900000121").await;
    let disputed = open_session(&app, &a, &first, &fake).await;
    let later = open_session(&app, &b, &second, &fake).await;
    // Both orders are cancelled while Stripe is out of reach past their grace.
    past_deadline(&app, &first, 11).await;
    past_deadline(&app, &second, 11).await;
    fake.fail_next(1_000);
    let report = sweep(&app).await;
    assert_eq!(report.expired, 2, "{report:?}");
    fake.fail_next(0);
    // The first shopper's money arrives and its refund is refused for good (a dispute).
    fake.refuse_refunds_of(&disputed, "charge_disputed");
    fake.pay(&disputed).await.expect("paid");
    sweep_until_state(&app, &disputed, "refund_failed").await;
    // The second's arrives while Stripe fails its first refund (a saved 500), and is refunded
    // all the same: after its own backoff, with a new key, never behind the refused one.
    fake.fail_next(1);
    fake.pay(&later).await.expect("paid");
    sweep_until_state(&app, &later, "refunded").await;
    assert_eq!(payment_state(&app, &disputed).await, "refund_failed");
    let refunds = fake.refunds();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    // The admins see the refused one.
    let row = console_row(&app, v).await;
    assert_eq!((row.flagged, row.refunded, row.revenue_cents), (1, 1, 0));
    for (c, id) in [(&a, &first), (&b, &second)] {
        assert_eq!(order(&app, c, id).await["status"], "cancelled");
    }
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn money_paid_after_a_forced_close_is_refunded_though_its_webhook_is_lost(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 800, 1).await;
    let (c, id) = written_order(&app, v, "13900000122").await;
    let session = open_session(&app, &c, &id, &fake).await;
    past_deadline(&app, &id, 11).await;
    fake.fail_next(1_000);
    let report = sweep(&app).await;
    assert_eq!(
        (report.payments.closed, report.expired),
        (1, 1),
        "{report:?}"
    );
    fake.fail_next(0);
    // Stripe never heard that the shop gave up: the page is still payable, and the shopper
    // pays; the webhook is lost.
    fake.drop_webhooks(true);
    fake.pay(&session).await.expect("paid");
    sqlx::query(
        "UPDATE payments SET checked_at = now() - interval '2 minutes' WHERE session_id = $1",
    )
    .bind(&session)
    .execute(&app.core.db)
    .await
    .expect("a minute passes");
    sweep_until_state(&app, &session, "refunded").await;
    assert_eq!(fake.refunds().len(), 1);
    assert_eq!(order(&app, &c, &id).await["status"], "cancelled");
    // Once Stripe's word is in, it is watched no more.
    let watched: bool = sqlx::query_scalar("SELECT watched FROM payments WHERE session_id = $1")
        .bind(&session)
        .fetch_one(&app.core.db)
        .await
        .expect("row");
    assert!(!watched);
    units_hold(&app, v, 1).await;
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn a_session_left_open_on_a_cancelled_order_is_expired_by_the_sweep(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 600, 1).await;
    let (c, id) = written_order(&app, v, "13900000123").await;
    let session = open_session(&app, &c, &id, &fake).await;
    // What a Pay now racing the shopper's cancel leaves when the process dies before it closes
    // the session it recorded: a cancelled order with a payable page.
    cancelled_behind(&app, &id).await;
    let report = sweep(&app).await;
    assert_eq!(report.payments.closed, 1, "{report:?}");
    assert_eq!(fake.session(&session).map(|s| s.status), Some("expired"));
    assert!(fake.pay(&session).await.is_err(), "no longer payable");
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn the_webhook_answers_without_waiting_for_a_refund(db: PgPool) {
    // Stripe's calls would take ten minutes to time out: a webhook that waited on one would
    // not answer within the stand-in's minute.
    let (app, fake, v) = shop_selling(db, &[("SECKILL_STRIPE_TIMEOUT_MS", "600000")], 400, 1).await;
    let (c, id) = written_order(&app, v, "13900000124").await;
    let session = open_session(&app, &c, &id, &fake).await;
    cancelled_behind(&app, &id).await;
    fake.drop_webhooks(true);
    fake.pay(&session).await.expect("paid");
    fake.hang(true);
    let answered = fake.send("checkout.session.completed", &session).await;
    assert_eq!(
        answered,
        Some(200),
        "the webhook answered while Stripe hangs"
    );
    assert_eq!(payment_state(&app, &session).await, "refund_due");
    fake.hang(false);
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn a_hanging_stripe_holds_no_cancellation_of_an_order_without_a_session(db: PgPool) {
    // A sweep every 4 s (its payment steps get 2 s) and Stripe calls of ten minutes.
    let (app, fake, v) = shop_selling(
        db,
        &[
            ("SECKILL_SWEEP_MS", "4000"),
            ("SECKILL_STRIPE_TIMEOUT_MS", "600000"),
        ],
        400,
        2,
    )
    .await;
    let (a, with_session) = written_order(&app, v, "13900000125").await;
    let (b, without) = written_order(&app, v, "13900000126").await;
    open_session(&app, &a, &with_session, &fake).await;
    fake.hang(true);
    past_deadline(&app, &with_session, 1).await;
    past_deadline(&app, &without, 1).await;
    // Every pass spends its payment budget waiting on Stripe; each still cancels what waits
    // for nobody. (Before, the pass waited on the hanging call first, holding both.)
    let b_cancelled = async {
        loop {
            if order(&app, &b, &without).await["status"] == "cancelled" {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(40), b_cancelled)
        .await
        .expect("the order without a session cancelled while Stripe hangs");
    assert_eq!(
        order(&app, &a, &with_session).await["status"],
        "created",
        "held until Stripe closes its session (or the grace ends)"
    );
    fake.hang(false);
    units_hold(&app, v, 2).await;
    money_holds(&app, &fake).await;
}

/// The payment's dispute column.
async fn dispute_of(app: &TestApp, session: &str) -> Option<String> {
    sqlx::query_scalar("SELECT dispute FROM payments WHERE session_id = $1")
        .bind(session)
        .fetch_one(&app.core.db)
        .await
        .expect("payment row")
}

#[sqlx::test]
async fn refunds_and_disputes_stripe_reports_later_reach_the_books(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 900, 2).await;
    // A paid order's payment is disputed, then the dispute is won.
    let (a, paid) = written_order(&app, v, "13900000127").await;
    let session = open_session(&app, &a, &paid, &fake).await;
    fake.pay(&session).await.expect("paid");
    until(&app, &a, &paid, |o| o["status"] == "paid").await;
    let intent = fake.payment_intent(&session).expect("intent");
    let dispute = |status: &str| json!({"id": "dp_test_1", "object": "dispute", "payment_intent": intent, "status": status});
    let answered = fake
        .send_object("charge.dispute.created", dispute("needs_response"))
        .await;
    assert_eq!(answered, Some(200));
    assert_eq!(dispute_of(&app, &session).await.as_deref(), Some("open"));
    assert_eq!(console_row(&app, v).await.flagged, 1, "the admins see it");
    fake.send_object("charge.dispute.closed", dispute("won"))
        .await;
    assert_eq!(dispute_of(&app, &session).await.as_deref(), Some("won"));
    assert_eq!(console_row(&app, v).await.flagged, 0);
    assert_eq!(payment_state(&app, &session).await, "paid");

    // Money for a cancelled order is refunded; then Stripe reports the refund failed (the
    // card was closed): the money is owed again, for an admin.
    let (b, cancelled) = written_order(&app, v, "13900000128").await;
    let late = open_session(&app, &b, &cancelled, &fake).await;
    cancelled_behind(&app, &cancelled).await;
    fake.pay(&late).await.expect("paid");
    payment_reaches(&app, &late, "refunded").await;
    let refund = json!({
        "id": "re_test_x", "object": "refund", "status": "failed",
        "payment_intent": fake.payment_intent(&late).expect("intent"),
    });
    let event_failed = fake.send_object("refund.updated", refund.clone()).await;
    assert_eq!(event_failed, Some(200));
    assert_eq!(payment_state(&app, &late).await, "refund_failed");
    assert_eq!(console_row(&app, v).await.flagged, 1);
    // An admin refunds it in Stripe's dashboard: the charge is reported refunded.
    let charge = json!({
        "id": "ch_test_x", "object": "charge", "refunded": true,
        "payment_intent": fake.payment_intent(&late).expect("intent"),
    });
    fake.send_object("charge.refunded", charge).await;
    assert_eq!(payment_state(&app, &late).await, "refunded");
    assert_eq!(console_row(&app, v).await.flagged, 0);
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn a_price_stripe_cannot_charge_is_refused_at_creation(db: PgPool) {
    let (app, _fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let now = chrono::Utc::now();
    let create = |price: i64| {
        admin
            .post(format!("{}/api/admin/vouchers", app.base))
            .json(&json!({
                "title": "Cheap", "description": "", "price_cents": price, "stock": 1,
                "begins_at": (now + chrono::Duration::seconds(60)).to_rfc3339(),
                "ends_at": (now + chrono::Duration::seconds(600)).to_rfc3339(),
            }))
            .send()
    };
    // ¥3.99 is below what Stripe charges in yuan: no shopper could ever pay it.
    let body = expect_error(
        create(399).await.expect("send"),
        StatusCode::BAD_REQUEST,
        "invalid",
    )
    .await;
    assert!(
        body["fields"]["price_cents"]
            .as_str()
            .is_some_and(|m| m.contains("400")),
        "{body}"
    );
    // The minimum itself, and a free voucher, are fine.
    for price in [400, 0] {
        assert_eq!(
            create(price).await.expect("send").status(),
            StatusCode::CREATED
        );
    }
}

#[sqlx::test]
async fn an_admin_refunds_a_paid_order_and_lists_the_payments_that_need_one(db: PgPool) {
    let (app, fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create_priced(&admin, -5, 3600, 2, 500).await;
    let refund = |c: &Client, order: &str| {
        c.post(format!("{}/api/admin/orders/{order}/refund", app.base))
            .send()
    };
    let (a, paid) = written_order(&app, v, "13900000129").await;
    let session = open_session(&app, &a, &paid, &fake).await;
    fake.pay(&session).await.expect("paid");
    until(&app, &a, &paid, |o| o["status"] == "paid").await;
    // Only admins; an order awaiting payment has nothing to refund; an unknown one is a 404.
    expect_error(
        refund(&a, &paid).await.expect("send"),
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    let (b, awaiting) = written_order(&app, v, "13900000130").await;
    expect_error(
        refund(&admin, &awaiting).await.expect("send"),
        StatusCode::CONFLICT,
        "not_paid",
    )
    .await;
    expect_error(
        refund(&admin, "4294967297").await.expect("send"),
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // The refund: the order is the shop's cancellation, its money back, its unit on sale.
    for _ in 0..2 {
        let r = refund(&admin, &paid).await.expect("send");
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        let body: Value = r.json().await.expect("json");
        assert_eq!(body, json!({"order_id": paid, "state": "refunded"}));
    }
    assert_eq!(
        fake.refunds().len(),
        1,
        "refunded once, however often asked"
    );
    let body = order(&app, &a, &paid).await;
    assert_eq!(
        (
            body["status"].as_str(),
            body["cancelled_by"].as_str(),
            body["refunded"].as_bool()
        ),
        (Some("cancelled"), Some("shop"), Some(true)),
        "{body}"
    );
    units_hold(&app, v, 2).await;
    let (_c, resold) = written_order(&app, v, "13900000131").await;
    assert!(!resold.is_empty(), "the unit sold again");

    // A refund Stripe refuses is pending for the admin, and listed for attention.
    let other = open_session(&app, &b, &awaiting, &fake).await;
    fake.refuse_refunds_of(&other, "charge_disputed");
    fake.pay(&other).await.expect("paid");
    until(&app, &b, &awaiting, |o| o["status"] == "paid").await;
    let r = refund(&admin, &awaiting).await.expect("send");
    let body: Value = r.json().await.expect("json");
    assert_eq!(body["state"], "refund_pending", "{body}");
    let listed = |state: &str| {
        let url = format!("{}/api/admin/payments?state={state}", app.base);
        let admin = admin.clone();
        async move { get_json(&admin, &url).await }
    };
    let attention = listed("attention").await;
    assert_eq!(attention.as_array().map(Vec::len), Some(1), "{attention}");
    assert_eq!(attention[0]["payment_id"], other.as_str());
    assert_eq!(attention[0]["state"], "refund_failed");
    assert_eq!(attention[0]["order_id"], awaiting.as_str());
    assert_eq!(attention[0]["amount_cents"], 500);
    let refunded = listed("refunded").await;
    assert_eq!(refunded[0]["payment_id"], session.as_str(), "{refunded}");
    assert!(refunded[0]["provider_ref"]
        .as_str()
        .is_some_and(|r| r.starts_with("pi_test_")));
    let r = admin
        .get(format!("{}/api/admin/payments?state=everything", app.base))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::BAD_REQUEST, "bad_request").await;
    let r = a
        .get(format!("{}/api/admin/payments", app.base))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    money_holds(&app, &fake).await;
}
