//! Paying: the hosted page, signatures, a failing or hanging Stripe, free vouchers, prices
//! Stripe cannot charge, the webhook's quick answer.

use super::*;

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
        app.cancel(&c, &id).await,
        StatusCode::CONFLICT,
        "already_paid",
    )
    .await;
    assert!(fake.refunds().is_empty());
    // The console counts the money: revenue from the paid order.
    let row = console_row(&app, v).await;
    assert_eq!(
        (
            row.counts.paid,
            row.counts.revenue_cents,
            row.counts.refunded,
            row.counts.flagged
        ),
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
    let pay_by: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT pay_by FROM orders WHERE id = $1")
            .bind(id.parse::<i64>().expect("id"))
            .fetch_one(&app.core.db)
            .await
            .expect("pay_by");
    assert_eq!(
        s.expires_at,
        pay_by.timestamp() + 31 * 60,
        "sessions lapse 31 minutes after the order's deadline (the same for every click), not \
         at Stripe's 24 h default"
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
    let page = html(&c, &format!("{}/orders/{id}", app.base)).await;
    assert!(
        page.contains("Confirmed") && !page.contains(r#"data-testid="pay""#),
        "{page}"
    );
    units_hold(&app, v, 2).await;
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
async fn a_plain_pay_now_refused_on_my_orders_is_shown_on_that_orders_page_only(db: PgPool) {
    let (app, _fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create_priced(&admin, -5, 3600, 2, 990).await;
    let w = app.create_priced(&admin, -5, 3600, 2, 990).await;
    let (c, late) = written_order(&app, v, "13900000141").await;
    let on_time = buy_order(&app, &c, w).await;
    written(&app, &c, &on_time).await;
    past_deadline(&app, &late, 1).await;

    // Pay now on "My orders" without JavaScript, for the order whose time has passed: the
    // refusal goes to that order's page, not back to the list, where every unpaid row's Pay
    // now would have shown it.
    let r = c
        .post(format!("{}/sf/pay_order", app.base))
        .header("accept", "text/html")
        .header("referer", format!("{}/orders", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("order_id={late}"))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let to = r.headers()["location"].to_str().expect("ascii").to_owned();
    assert!(
        to.starts_with(&format!("/orders/{late}?")) && to.contains("__err="),
        "{to}"
    );
    let html = html(&c, &format!("{}{to}", app.base)).await;
    assert_eq!(
        html.matches(r#"data-testid="error""#).count(),
        1,
        "the refusal once, on its order: {html}"
    );
    assert!(
        html.contains(r#"data-testid="order-action-error" data-code="payment_expired""#),
        "{html}"
    );

    // The app's own call (JSON) is answered as before, with no redirect.
    let r = pay(&app, &c, &late).await;
    expect_error(r, StatusCode::CONFLICT, "payment_expired").await;
    // And the other order still pays.
    assert_eq!(pay(&app, &c, &on_time).await.status(), StatusCode::OK);
}
