//! Redis stopped under a buy: the shopper is told the service is busy (503 `unavailable` with
//! `Retry-After`), never a 500, whether the buy left alone or in a batch with others. A Redis of
//! this test's own is killed (`kill -9`), so the other tests keep theirs.

use futures::future::join_all;
use reqwest::{Client, StatusCode};
use sqlx::PgPool;

use crate::support::{expect_error, own_redis, spawn_app_with, TestApp};

/// Shoppers signed in, each with one request made, so the instance holds their sessions in
/// memory: the buys below reach the admission, not the session read.
async fn shoppers(app: &TestApp, n: usize) -> Vec<Client> {
    let mut clients = Vec::with_capacity(n);
    for i in 0..n {
        let c = app.sign_in(&format!("1390000{i:04}")).await;
        let r = c
            .get(format!("{}/api/orders/1", app.base))
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        clients.push(c);
    }
    clients
}

async fn buy(app: &TestApp, c: &Client, v: i64) {
    let r = c
        .post(format!("{}/api/vouchers/{v}/orders", app.base))
        .send()
        .await
        .expect("send");
    let retry_after = r.headers().get("retry-after").cloned();
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    assert!(retry_after.is_some(), "a 503 says when to retry");
}

#[sqlx::test]
async fn a_buy_while_redis_is_down_is_a_503_alone_or_in_a_batch(db: PgPool) {
    let (mut redis, url) = own_redis().await;
    let app = spawn_app_with(db, &url, &[("SECKILL_SESSION_CACHE_MS", "600000")]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -1, 3_600, 100).await;
    let crowd = shoppers(&app, 41).await;

    redis.kill().await.expect("kill -9 the test's Redis");

    // Alone: the lane's only buy.
    buy(&app, &crowd[0], v).await;
    // Together: the buys that queue while a call is out go as one batch, and its failure is
    // every shopper's.
    join_all(crowd[1..].iter().map(|c| buy(&app, c, v))).await;
    app.shutdown.cancel();
}
