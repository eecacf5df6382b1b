//! The deadline and money after it: lost webhooks, a payment just after the deadline, money
//! after the cancellation (forced close included), sessions left open, a hanging Stripe at the
//! deadline.

use super::*;

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
    forced_close(&app, &fake, &id).await;
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
    assert_eq!((row.counts.refunded, row.counts.revenue_cents), (1, 0));
    units_hold(&app, v, 1).await;
    money_holds(&app, &fake).await;
}

#[sqlx::test]
async fn money_paid_after_a_forced_close_is_refunded_though_its_webhook_is_lost(db: PgPool) {
    let (app, fake, v) = shop_selling(db, &[], 800, 1).await;
    let (c, id) = written_order(&app, v, "13900000122").await;
    let session = open_session(&app, &c, &id, &fake).await;
    forced_close(&app, &fake, &id).await;
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

/// Order `id`'s deadline long past while Stripe is out of reach, past its grace too: the sweep
/// closes its session without Stripe's word and cancels it anyway; then Stripe answers again.
async fn forced_close(app: &TestApp, fake: &FakeStripe, id: &str) {
    past_deadline(app, id, 11).await;
    fake.fail_next(1_000);
    let report = sweep(app).await;
    assert_eq!(
        (report.payments.closed, report.expired),
        (1, 1),
        "{report:?}"
    );
    fake.fail_next(0);
}
