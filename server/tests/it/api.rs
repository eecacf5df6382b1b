//! The HTTP surface over real HTTP, against the real Redis and PostgreSQL: every error code of
//! design.md §5 is produced by a real request, and the pages work as plain HTML forms.

use crate::support::{
    client, expect_error, get_json, planted_order_id, spawn_app, user_id, written,
};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;

#[sqlx::test]
async fn sign_in_errors(db: PgPool) {
    let app = spawn_app(db).await;
    let c = client();
    expect_error(
        app.request_code(&c, &json!({ "phone": "12ab" })).await,
        StatusCode::BAD_REQUEST,
        "invalid_phone",
    )
    .await;
    let ok = app
        .request_code(&c, &json!({ "phone": "13900000001" }))
        .await;
    assert_eq!(ok.status(), StatusCode::OK);
    let again = app
        .request_code(&c, &json!({ "phone": "13900000001" }))
        .await;
    // The refusal says when to try again (the default resend window is 30 s).
    let wait: u64 = again.headers()["retry-after"]
        .to_str()
        .expect("ascii")
        .parse()
        .expect("seconds");
    assert!((29..=30).contains(&wait), "Retry-After {wait}");
    let body = expect_error(again, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains(&format!("in {wait} s"))),
        "{body}"
    );
    expect_error(
        app.post_login(&c, &json!({ "phone": "13900000001", "code": "000000x" }))
            .await,
        StatusCode::BAD_REQUEST,
        "invalid_code",
    )
    .await;
    expect_error(
        c.post(format!("{}/api/login", app.base))
            .body("{not json")
            .header("content-type", "application/json")
            .send()
            .await
            .expect("send"),
        StatusCode::BAD_REQUEST,
        "bad_request",
    )
    .await;
    expect_error(
        app.request_code(&c, &json!({ "phone": 42 })).await,
        StatusCode::BAD_REQUEST,
        "bad_request",
    )
    .await;
    let health = app.health(&c).await;
    assert_eq!(health.status(), StatusCode::OK);
}

#[sqlx::test]
async fn admin_rules_and_validation(db: PgPool) {
    let app = spawn_app(db).await;

    let body = json!({ "title": "x", "price_cents": 1, "stock": 1, "begins_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-02T00:00:00Z" });
    expect_error(
        app.create_voucher(&client(), &body).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    let shopper = app.sign_in("13900000002").await;
    expect_error(
        app.create_voucher(&shopper, &body).await,
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    let admin = app.sign_in("13800000000").await;
    let bad = json!({ "title": "", "price_cents": "lots", "stock": [1], "begins_at": "soon", "ends_at": "2020-01-01T00:00:00Z" });
    let err = expect_error(
        app.create_voucher(&admin, &bad).await,
        StatusCode::BAD_REQUEST,
        "invalid",
    )
    .await;
    for field in ["title", "price_cents", "stock", "begins_at", "ends_at"] {
        assert!(
            err["fields"][field].is_string(),
            "no message for {field}: {err}"
        );
    }
    // A value of the wrong JSON kind, or text with a NUL, is that field's message; nothing is
    // stored (PostgreSQL would refuse the NUL with a 500).
    let good = json!({ "title": "Typed", "description": "two\nlines", "price_cents": 1, "stock": 1,
        "begins_at": "2030-01-01T00:00:00Z", "ends_at": "2030-01-02T00:00:00Z" });
    let cases = [
        ("title", json!(7), "must be text"),
        ("description", json!(["x"]), "must be text"),
        (
            "description",
            json!("bad\u{0}byte"),
            "must not contain control characters",
        ),
        ("price_cents", json!("5"), "must be a number"),
        ("stock", json!({"n": 1}), "must be a number"),
        ("begins_at", json!(20300101), "must be text"),
        ("ends_at", json!(true), "must be text"),
    ];
    for (field, value, message) in cases {
        let mut body = good.clone();
        body[field] = value;
        let err = expect_error(
            app.create_voucher(&admin, &body).await,
            StatusCode::BAD_REQUEST,
            "invalid",
        )
        .await;
        assert_eq!(err["fields"][field], message, "{field}: {err}");
    }
    let before: i64 = sqlx::query_scalar("SELECT count(*) FROM vouchers")
        .fetch_one(&app.core.db)
        .await
        .expect("count");
    assert_eq!(before, 0, "no refused voucher was stored");
    let r = app.create_voucher(&admin, &good).await;
    assert_eq!(r.status(), StatusCode::CREATED, "line breaks are text");
    let id = app.create(&admin, -5, 3600, 10).await;
    let r = app.voucher(&client(), id).await;
    assert_eq!(r.status(), StatusCode::OK);
    let v: Value = r.json().await.expect("json");
    assert_eq!(
        (
            v["stock"].as_i64(),
            v["remaining"].as_i64(),
            v["status"].as_str()
        ),
        (Some(10), Some(10), Some("on_sale"))
    );
    expect_error(
        app.voucher(&client(), 424242).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.voucher(&client(), "abc").await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
}

#[sqlx::test]
async fn buying_over_http(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let open = app.create(&admin, -5, 3600, 1).await;
    let later = app.create(&admin, 3600, 3600, 1).await;
    let closing = app.create(&admin, -5, 6, 1).await;

    expect_error(
        app.buy(&client(), open).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    let alice = app.sign_in("13900000003").await;
    let bob = app.sign_in("13900000004").await;
    let r = app.buy(&alice, open).await;
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let first = r.json::<Value>().await.expect("json");
    let order_id = first["order_id"]
        .as_str()
        .expect("decimal string")
        .to_owned();
    assert!(order_id.parse::<u64>().is_ok());
    assert_eq!(first["already_bought"], false);
    // A repeated buy (a retry after a lost reply) answers the same order, says so, and takes
    // nothing.
    let again = app.buy(&alice, open).await;
    assert_eq!(again.status(), StatusCode::ACCEPTED);
    let again = again.json::<Value>().await.expect("json");
    assert_eq!(again["order_id"], order_id.as_str());
    assert_eq!(again["already_bought"], true);
    // The figures a page asks for without its stream: the unit is gone, on the server's clock.
    let figures = get_json(
        &client(),
        &format!("{}/api/vouchers/{open}/stock", app.base),
    )
    .await;
    assert_eq!(figures["remaining"], 0, "{figures}");
    assert!(figures["server_time"].is_string(), "{figures}");
    assert!(figures["ends_at"].is_string(), "{figures}");
    expect_error(
        app.stock(&client(), "abc").await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    // A well-formed ID of no voucher is not a sale with no figures.
    expect_error(
        app.stock(&client(), "999999999").await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(app.buy(&bob, open).await, StatusCode::CONFLICT, "sold_out").await;
    expect_error(
        app.buy(&bob, later).await,
        StatusCode::FORBIDDEN,
        "not_started",
    )
    .await;
    expect_error(
        app.buy(&bob, 424_242).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    // Three attempts per second are allowed: the fourth in the same second is refused. (On a
    // sale not yet open: a sold-out sale's refusals come from the instance's memory, which costs
    // Redis no script, and are not counted.)
    let mut codes = Vec::new();
    for _ in 0..6 {
        codes.push(app.buy(&bob, later).await.status());
    }
    assert!(codes.contains(&StatusCode::TOO_MANY_REQUESTS), "{codes:?}");

    // The owner sees the order reach `created`; someone else gets the 404 of an unknown ID.
    let last = written(&app, &alice, &order_id).await;
    assert_eq!(last["status"], "created", "{last}");
    assert_eq!(last["order_id"], order_id.as_str());
    expect_error(
        app.order(&bob, &order_id).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.order(&alice, 123).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    expect_error(
        app.order(&alice, "nope").await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let ended = app.buy(&bob, closing).await;
    expect_error(ended, StatusCode::FORBIDDEN, "ended").await;
    let logout = app.log_out(&alice).await;
    assert_eq!(logout.status(), StatusCode::NO_CONTENT);
    expect_error(
        app.order(&alice, &order_id).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    drop(app.core);
}

/// A browser without JavaScript: the buy form posts and is redirected to the order's page,
/// which reloads itself (a `noscript` refresh) while the order is queued and stops once it is
/// final; a refusal comes back to the voucher's page in words; guarded pages answer 302/403.
#[sqlx::test]
async fn pages_work_as_plain_html(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 5).await;
    let alice = app.sign_in("13900000005").await;
    let page = |c: &Client, path: &str| {
        c.get(format!("{}{path}", app.base))
            .header("accept", "text/html")
            .send()
    };
    let post_buy = || {
        alice
            .post(format!("{}/sf/buy", app.base))
            .header("accept", "text/html")
            .header("referer", format!("{}/vouchers/{v}", app.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("voucher_id={v}"))
            .send()
    };

    let r = post_buy().await.expect("send");
    assert_eq!(r.status(), StatusCode::SEE_OTHER, "{:?}", r.text().await);
    let location = r.headers()["location"].to_str().expect("ascii").to_owned();
    let order_id = location
        .strip_prefix("/orders/")
        .expect("to the order page")
        .to_owned();
    assert!(order_id.parse::<u64>().is_ok(), "{location}");

    // The real order gets written: its page stops refreshing.
    let mut html = String::new();
    for _ in 0..50 {
        html = page(&alice, &location)
            .await
            .expect("send")
            .text()
            .await
            .expect("html");
        if html.contains(r#"data-status="created""#) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(html.contains(r#"data-status="created""#), "{html}");
    assert!(
        !html.contains("http-equiv=\"refresh\""),
        "a final order does not refresh"
    );

    // An order still queued (planted in the queued hash, off the stream, so it stays there).
    let user = user_id(&app, "+8613900000005").await;
    let voucher = seckill::domain::VoucherId::try_from(v).expect("id");
    let queued = planted_order_id(v);
    let mut redis = app.core.redis.clone();
    let _: () = redis::cmd("HSET")
        .arg(app.core.keys.voucher(voucher).queued)
        .arg(queued.to_redis_hex())
        .arg(user)
        .query_async(&mut redis)
        .await
        .expect("HSET");
    let r = page(&alice, &format!("/orders/{queued}"))
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let html = r.text().await.expect("html");
    assert!(html.contains(r#"data-status="queued""#), "{html}");
    assert!(
        html.contains(r#"<noscript><meta http-equiv="refresh" content="1"></noscript>"#),
        "{html}"
    );

    // A refusal: back to the voucher's page, which says why.
    let r = post_buy().await.expect("send");
    assert_eq!(r.status(), StatusCode::FOUND);
    let back = r.headers()["location"].to_str().expect("ascii").to_owned();
    assert!(
        back.starts_with(&format!("{}/vouchers/{v}?", app.base)),
        "{back}"
    );
    let html = alice
        .get(&back)
        .header("accept", "text/html")
        .send()
        .await
        .expect("send");
    let html = html.text().await.expect("html");
    assert!(html.contains(r#"data-code="already_bought""#), "{html}");
    assert!(
        html.contains("You have already bought this voucher."),
        "{html}"
    );

    // Guarded and unknown pages answer with their status before any HTML.
    let r = page(&client(), "/admin").await.expect("send");
    assert_eq!(r.status(), StatusCode::FOUND);
    assert_eq!(r.headers()["location"], "/login?next=/admin");
    assert_eq!(
        page(&alice, "/admin").await.expect("send").status(),
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        page(&admin, "/admin").await.expect("send").status(),
        StatusCode::OK
    );
    assert_eq!(
        page(&alice, "/vouchers/424242")
            .await
            .expect("send")
            .status(),
        StatusCode::NOT_FOUND
    );

    // An unknown order's page and someone else's are the same 404; every page has its title.
    let title_of = |html: &str| {
        html.split_once("<title>")
            .and_then(|(_, rest)| rest.split_once("</title>"))
            .map(|(t, _)| t.to_owned())
    };
    let mallory = app.sign_in("13900000077").await;
    for (who, path) in [
        (&alice, "/orders/4242424242".to_owned()),
        (&mallory, format!("/orders/{order_id}")),
    ] {
        let r = page(who, &path).await.expect("send");
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
        let html = r.text().await.expect("html");
        assert_eq!(
            title_of(&html).as_deref(),
            Some("Order not found — Seckill")
        );
        assert!(!html.contains("data-testid=\"order\""), "no order shown");
    }
    let mine = page(&alice, &format!("/orders/{order_id}"))
        .await
        .expect("send");
    assert_eq!(mine.status(), StatusCode::OK);
    let expected = format!("Order {order_id} — Seckill");
    assert_eq!(
        title_of(&mine.text().await.expect("html")).as_deref(),
        Some(expected.as_str())
    );
    let sale = page(&alice, &format!("/vouchers/{v}")).await.expect("send");
    assert_eq!(
        title_of(&sale.text().await.expect("html")).as_deref(),
        Some("API voucher — Seckill")
    );
    for (path, title) in [
        ("/", "Flash sales — Seckill"),
        ("/login", "Sign in — Seckill"),
        ("/nowhere", "Page not found — Seckill"),
    ] {
        let html = page(&client(), path)
            .await
            .expect("send")
            .text()
            .await
            .expect("html");
        assert_eq!(title_of(&html).as_deref(), Some(title), "{path}");
    }
}
