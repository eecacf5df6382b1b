//! An admin's edit of a sale before it opens (issue #55), over real HTTP on three instances of
//! one deployment: every instance answers the new title, price, times and stock at once (their
//! memory and page cache follow), the new window and stock reach Redis in one step while
//! shoppers are buying, an edit once the sale has opened is refused with its reason, and a
//! draw's published commitment never changes.

use std::time::Duration;

use chrono::{SecondsFormat, Utc};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{expect_error, get_json, spawn_app, spawn_instances, units_hold, TestApp};

fn at(secs: i64) -> String {
    (Utc::now() + chrono::Duration::seconds(secs)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

async fn edited(app: &TestApp, admin: &Client, v: i64, body: Value) -> Value {
    let r = app.edit_voucher(admin, v, &body).await;
    let status = r.status();
    let answer: Value = r.json().await.expect("json");
    assert_eq!(status, StatusCode::OK, "{body} -> {answer}");
    answer
}

#[sqlx::test]
async fn an_edit_before_the_start_is_seen_by_every_instance_at_once(db: PgPool) {
    let apps = spawn_instances(db.clone(), 3).await;
    let admin = apps[0].sign_in("13800000000").await;
    let v = apps[0].create(&admin, 3600, 3600, 10).await;
    // Every instance reads the sale (its memory and page cache hold the old one).
    for app in &apps {
        let page = reqwest::get(format!("{}/vouchers/{v}", app.base))
            .await
            .expect("page");
        assert!(page.text().await.expect("html").contains("API voucher"));
        assert_eq!(
            get_json(&admin, &format!("{}/api/vouchers/{v}", app.base)).await["title"],
            "API voucher"
        );
    }
    let (begins, ends) = (at(7200), at(9000));
    let answer = edited(
        &apps[1],
        &admin,
        v,
        json!({
            "title": "Spring tea, fixed", "price_cents": 1990, "stock": 7,
            "begins_at": begins, "ends_at": ends,
        }),
    )
    .await;
    assert_eq!(
        (answer["title"].as_str(), answer["price_cents"].as_i64()),
        (Some("Spring tea, fixed"), Some(1990))
    );
    let begins_ms = chrono::DateTime::parse_from_rfc3339(&begins)
        .expect("time")
        .timestamp_millis();
    let ends_ms = chrono::DateTime::parse_from_rfc3339(&ends)
        .expect("time")
        .timestamp_millis();
    for app in &apps {
        let seen = get_json(&admin, &format!("{}/api/vouchers/{v}", app.base)).await;
        assert_eq!(
            (
                seen["title"].as_str(),
                seen["price_cents"].as_i64(),
                seen["stock"].as_i64(),
                seen["remaining"].as_i64()
            ),
            (Some("Spring tea, fixed"), Some(1990), Some(7), Some(7)),
            "{}: {seen}",
            app.base
        );
        let seen_begins =
            chrono::DateTime::parse_from_rfc3339(seen["begins_at"].as_str().expect("begins"))
                .expect("time");
        assert_eq!(seen_begins.timestamp_millis(), begins_ms, "{}", app.base);
        let page = reqwest::get(format!("{}/vouchers/{v}", app.base))
            .await
            .expect("page")
            .text()
            .await
            .expect("html");
        assert!(
            page.contains("Spring tea, fixed") && !page.contains("API voucher"),
            "{}: the sale page",
            app.base
        );
        // Redis's window follows (the live figures read Redis alone).
        let live = get_json(&admin, &format!("{}/api/vouchers/{v}/stock", app.base)).await;
        let live_ends =
            chrono::DateTime::parse_from_rfc3339(live["ends_at"].as_str().expect("ends"))
                .expect("time");
        assert_eq!(
            (live["remaining"].as_i64(), live_ends.timestamp_millis()),
            (Some(7), ends_ms),
            "{live}"
        );
    }
    let (begins_ms_redis, stock_redis) = redis_sale(&apps[0], v).await;
    assert_eq!((begins_ms_redis, stock_redis), (begins_ms, 7));
    // Naming nothing changes nothing; the stored values come back.
    let same = edited(&apps[2], &admin, v, json!({})).await;
    assert_eq!(
        (same["title"].as_str(), same["stock"].as_i64()),
        (Some("Spring tea, fixed"), Some(7))
    );
    let audited: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM admin_actions WHERE action = 'edit voucher' AND target = $1 AND refusal IS NULL",
    )
    .bind(v.to_string())
    .fetch_one(&db)
    .await
    .expect("audit");
    assert_eq!(audited, 2, "one audit row per edit");
}

/// The sale's `begins_ms` and stock as Redis holds them.
async fn redis_sale(app: &TestApp, v: i64) -> (i64, i64) {
    let mut c = app.core.redis.clone();
    let keys = app
        .core
        .keys
        .voucher(seckill::domain::VoucherId::try_from(v).expect("id"));
    redis::pipe()
        .hget(&keys.sale, "begins_ms")
        .get(&keys.stock)
        .query_async(&mut c)
        .await
        .expect("sale")
}

#[sqlx::test]
async fn shoppers_buying_through_an_edit_that_opens_the_sale_see_it_whole(db: PgPool) {
    let app = std::sync::Arc::new(spawn_app(db).await);
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, 3600, 3600, 100).await;
    let mut shoppers = Vec::new();
    for i in 0..20 {
        shoppers.push(app.sign_in(&format!("139000010{i:02}")).await);
    }
    // Each shopper tries until the sale answers something other than "not started".
    let mut tries = Vec::new();
    for c in shoppers {
        let app = std::sync::Arc::clone(&app);
        tries.push(tokio::spawn(async move {
            loop {
                let r = app.buy(&c, v).await;
                let status = r.status();
                let body: Value = r.json().await.expect("json");
                if body["error"] != "not_started" {
                    return (status, body);
                }
                tokio::time::sleep(Duration::from_millis(400)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Opened now with 5 units: a buy sees the old window and stock or the new ones, never the
    // new window with the old stock.
    edited(&app, &admin, v, json!({"begins_at": at(-1), "stock": 5})).await;
    let mut admitted = 0;
    for t in tries {
        let (status, body) = t.await.expect("shopper");
        match status {
            StatusCode::ACCEPTED => admitted += 1,
            StatusCode::CONFLICT => assert_eq!(body["error"], "sold_out", "{body}"),
            other => panic!("{other}: {body}"),
        }
    }
    assert_eq!(admitted, 5, "the new stock, all of it, and no more");
    // Once the worker wrote the five orders: Redis's 0 plus them is the stock.
    for _ in 0..200 {
        let written: i64 = sqlx::query_scalar("SELECT count(*) FROM orders WHERE voucher_id = $1")
            .bind(v)
            .fetch_one(&app.core.db)
            .await
            .expect("count");
        if written == 5 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    units_hold(&app, v, 5).await;
    // Now it has started: every edit is refused with the reason, nothing changed.
    for body in [
        json!({"title": "Too late"}),
        json!({"price_cents": 1}),
        json!({}),
    ] {
        let e = expect_error(
            app.edit_voucher(&admin, v, &body).await,
            StatusCode::CONFLICT,
            "sale_started",
        )
        .await;
        assert!(
            e["message"]
                .as_str()
                .is_some_and(|m| m.contains("no longer be edited")),
            "{e}"
        );
    }
    assert_eq!(
        get_json(&admin, &format!("{}/api/vouchers/{v}", app.base)).await["title"],
        "API voucher"
    );
}

#[sqlx::test]
async fn edits_are_refused_to_shoppers_bad_fields_and_ended_or_missing_sales(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900000003").await;
    let v = app.create(&admin, 3600, 3600, 3).await;
    expect_error(
        app.edit_voucher(&shopper, v, &json!({"title": "x"})).await,
        StatusCode::FORBIDDEN,
        "forbidden",
    )
    .await;
    expect_error(
        app.edit_voucher(&Client::new(), v, &json!({"title": "x"}))
            .await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    for (body, field) in [
        (json!({"title": ""}), "title"),
        (json!({"title": 5}), "title"),
        (json!({"price_cents": "990"}), "price_cents"),
        (json!({"stock": 0}), "stock"),
        (json!({"ends_at": at(1800)}), "ends_at"),
        (json!({"begins_at": "tomorrow"}), "begins_at"),
        (json!({"entries_open_at": at(60)}), "entries_open_at"),
    ] {
        let e = expect_error(
            app.edit_voucher(&admin, v, &body).await,
            StatusCode::BAD_REQUEST,
            "invalid",
        )
        .await;
        assert!(e["fields"][field].is_string(), "{body}: {e}");
    }
    let r = app.edit_voucher(&admin, v, &json!([1])).await;
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert_eq!(
        get_json(&admin, &format!("{}/api/vouchers/{v}", app.base)).await["title"],
        "API voucher"
    );
    expect_error(
        app.edit_voucher(&admin, 999_999, &json!({"title": "x"}))
            .await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    assert_eq!(app.end_sale(&admin, v).await.status(), StatusCode::OK);
    expect_error(
        app.edit_voucher(&admin, v, &json!({"title": "x"})).await,
        StatusCode::FORBIDDEN,
        "ended",
    )
    .await;
}

#[sqlx::test]
async fn a_draws_commitment_stays_and_a_first_come_sale_may_become_a_draw(db: PgPool) {
    let app = spawn_app(db.clone()).await;
    let admin = app.sign_in("13800000000").await;
    let r = app
        .create_voucher(
            &admin,
            &json!({
                "title": "Draw voucher", "price_cents": 500, "stock": 2,
                "begins_at": at(3600), "ends_at": at(7200),
                "opening": "draw", "entries_open_at": at(1800),
            }),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let draw = r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id");
    for (body, field) in [
        (json!({"begins_at": at(5400)}), "begins_at"),
        (json!({"opening": "first_come"}), "opening"),
    ] {
        let e = expect_error(
            app.edit_voucher(&admin, draw, &body).await,
            StatusCode::BAD_REQUEST,
            "invalid",
        )
        .await;
        assert!(
            e["fields"][field]
                .as_str()
                .is_some_and(|m| m.contains("cannot change")),
            "{e}"
        );
    }
    let entries = at(600);
    let answer = edited(
        &app,
        &admin,
        draw,
        json!({"title": "Draw, fixed", "entries_open_at": entries, "stock": 4}),
    )
    .await;
    assert_eq!(
        (answer["opening"].as_str(), answer["stock"].as_i64()),
        (Some("draw"), Some(4))
    );
    assert_eq!(
        answer["entries_open_at"]
            .as_str()
            .map(|t| chrono::DateTime::parse_from_rfc3339(t)
                .expect("t")
                .timestamp()),
        Some(
            chrono::DateTime::parse_from_rfc3339(&entries)
                .expect("t")
                .timestamp()
        )
    );
    // Entries open now: the draw can no longer be edited.
    edited(&app, &admin, draw, json!({"entries_open_at": at(-1)})).await;
    expect_error(
        app.edit_voucher(&admin, draw, &json!({"title": "x"})).await,
        StatusCode::CONFLICT,
        "sale_started",
    )
    .await;

    let v = app.create(&admin, 3600, 3600, 2).await;
    let answer = edited(&app, &admin, v, json!({"opening": "draw"})).await;
    assert_eq!(answer["opening"], "draw", "{answer}");
    assert!(
        answer["entries_open_at"].is_string(),
        "a default entries opening: {answer}"
    );
    let committed: i64 = sqlx::query_scalar("SELECT count(*) FROM draws WHERE voucher_id = $1")
        .bind(v)
        .fetch_one(&db)
        .await
        .expect("draws");
    assert_eq!(
        committed, 1,
        "the new draw's commitment is made with the edit"
    );
    let draw_page = get_json(&admin, &format!("{}/api/vouchers/{v}/draw", app.base)).await;
    assert!(draw_page["commitment"].is_string(), "{draw_page}");
}
