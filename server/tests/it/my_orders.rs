//! A shopper's order list reads their own queued orders only (#23 point 7): two small reads per
//! sale, never a sale's whole queue (`HGETALL` of every sale's queued hash on each view, before).
//! Counted with `INFO commandstats` on a Redis of this test's own.

use reqwest::StatusCode;
use sqlx::PgPool;

use crate::support::{buy_order, own_redis, planted_order_id, spawn_app_with, user_id, written};

async fn hgetall_calls(url: &str) -> u64 {
    let client = redis::Client::open(url).expect("url");
    let mut c = client
        .get_multiplexed_async_connection()
        .await
        .expect("connect");
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(&mut c)
        .await
        .expect("info");
    info.lines()
        .find_map(|l| l.strip_prefix("cmdstat_hgetall:calls="))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().expect("a count"))
}

#[sqlx::test]
async fn my_orders_never_reads_a_sales_whole_queue(db: PgPool) {
    let (_redis, url) = own_redis().await;
    let app = spawn_app_with(db, &url, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900000061").await;
    let rival = app.sign_in("13900000062").await;
    let v = app.create(&admin, -5, 600, 10).await;
    let other = app.create(&admin, -5, 600, 10).await;
    let mine = buy_order(&app, &shopper, v).await;
    let theirs = buy_order(&app, &rival, v).await;
    written(&app, &shopper, &mine).await;
    written(&app, &rival, &theirs).await;

    // An order of the shopper still queued on the other sale (planted off the stream, so the
    // worker leaves it there): in the buyers hash and the queued hash, as an admission leaves it.
    let voucher = seckill::domain::VoucherId::try_from(other).expect("id");
    let queued = planted_order_id(other);
    let user = user_id(&app, "+8613900000061").await;
    let keys = app.core.keys.voucher(voucher);
    let mut redis = app.core.redis.clone();
    let _: () = redis::pipe()
        .hset(&keys.buyers, user, queued.to_redis_hex())
        .hset(&keys.queued, queued.to_redis_hex(), user)
        .query_async(&mut redis)
        .await
        .expect("plant");

    let before = hgetall_calls(&url).await;
    let r = shopper
        .get(format!("{}/orders", app.base))
        .header("accept", "text/html")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let html = r.text().await.expect("html");
    assert!(
        html.contains(&mine),
        "the shopper's written order is listed"
    );
    assert!(html.contains(&queued.to_string()), "and the queued one");
    assert!(!html.contains(&theirs), "another shopper's is not");
    assert_eq!(
        hgetall_calls(&url).await,
        before,
        "no HGETALL for a shopper's list"
    );
}

#[sqlx::test]
async fn a_cancelled_orders_row_says_what_became_of_it_in_words_a_phone_shows(db: PgPool) {
    let app = crate::support::spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900000063").await;
    let kept = app.create(&admin, -5, 600, 10).await;
    let dropped = app.create(&admin, -5, 600, 10).await;
    let paid = buy_order(&app, &shopper, kept).await;
    let cancelled = buy_order(&app, &shopper, dropped).await;
    written(&app, &shopper, &paid).await;
    written(&app, &shopper, &cancelled).await;
    assert_eq!(app.pay(&shopper, &paid).await.status(), StatusCode::OK);
    assert_eq!(
        app.cancel(&shopper, &cancelled).await.status(),
        StatusCode::OK
    );
    let html = crate::support::html(&shopper, &format!("{}/orders", app.base)).await;
    // One note, the cancelled order's, in the row (not only in a tooltip).
    assert_eq!(
        html.matches(r#"data-testid="order-note""#).count(),
        1,
        "{html}"
    );
    assert!(
        html.contains(
            r#"data-testid="order-note" class="order-note">You cancelled this order.</p>"#
        ),
        "{html}"
    );
}
