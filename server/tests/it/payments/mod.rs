//! Real payments (issue #32) over real HTTP, against a Stripe stand-in on loopback
//! (`fakes::stripe`, speaking Stripe's Checkout calls, hosted page and signed webhooks): paying
//! on the hosted page, one session per order, webhooks that do not hold, a wrong amount, a lost
//! webhook, a payment just after the deadline, money after the cancellation, Stripe failing or
//! slow, and free vouchers; then (issue #41) what Stripe really does: saved failures, refusals,
//! lapsed sessions, late and lost webhooks, disputes, and the admin's refund. Units are counted
//! after each (I1: Redis's stock plus the live orders is the stock; I2: one live order per
//! shopper), and so is the money (M1–M3). The shop and its helpers here; the tests in
//! `checkout.rs` (paying), `deadline.rs` (the deadline and money after it), `mismatch.rs`
//! (money that does not match its order) and `refunds.rs`.

mod books;
mod checkout;
mod deadline;
mod mismatch;
mod refunds;

use std::time::Duration;

use fakes::stripe::{signature_header, FakeStripe};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{
    buy_order, expect_error, get_json, html, spawn_app_setting, units_hold, written, TestApp,
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
        // Shoppers sign in by dev login, which a shop others reach only runs when told so.
        ("SECKILL_DEV_LOGIN_PUBLIC", "true"),
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
    app.pay(c, order).await
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
