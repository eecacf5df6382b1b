//! Redis stopped under a buy: the shopper is told the service is busy (503 `unavailable` with
//! `Retry-After`), never a 500, whether the buy left alone or in a batch with others. A Redis of
//! this test's own is killed (`kill -9`), so the other tests keep theirs. A voucher created
//! while Redis is down is created, and sells once Redis is back. And an instance started while
//! Redis is loading its dataset waits for it instead of failing.

use futures::future::join_all;
use reqwest::{Client, StatusCode};
use sqlx::PgPool;

use crate::support::{expect_error, own_redis, spawn_app_with, written, TestApp};

/// Shoppers signed in, each with one request made (their sessions are signed: the buys below
/// reach the admission with no session read).
async fn shoppers(app: &TestApp, n: usize) -> Vec<Client> {
    let mut clients = Vec::with_capacity(n);
    for i in 0..n {
        let c = app.sign_in(&format!("1390000{i:04}")).await;
        let r = app.order(&c, 1).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND);
        clients.push(c);
    }
    clients
}

async fn buy(app: &TestApp, c: &Client, v: i64) {
    let r = app.buy(c, v).await;
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
    app.buy(&crowd[0], v).await;
    // Together: the buys that queue while a call is out go as one batch, and its failure is
    // every shopper's.
    join_all(crowd[1..].iter().map(|c| buy(&app, c, v))).await;
    app.shutdown.cancel();
}

/// A voucher stored while Redis is down is created (`201`: an error would have its admin create
/// it a second time) and recorded as done; once Redis is back, its sale sells.
#[sqlx::test]
async fn a_voucher_created_while_redis_is_down_is_created_and_sells_once_redis_is_back(db: PgPool) {
    let (mut redis, url) = own_redis().await;
    let app = spawn_app_with(db, &url, &[("SECKILL_SESSION_CACHE_MS", "600000")]).await;
    let admin = app.sign_in("13800000000").await;
    let crowd = shoppers(&app, 1).await;
    // The admin's session known to the instance, as the shoppers' are.
    assert_eq!(app.order(&admin, 1).await.status(), StatusCode::NOT_FOUND);

    redis.kill().await.expect("kill -9 the test's Redis");
    let v = app.create(&admin, -1, 3_600, 5).await;
    let (stock, outcome): (i64, String) = sqlx::query_as(
        "SELECT v.stock, a.outcome FROM vouchers v, admin_actions a
         WHERE v.id = $1 AND a.action = 'create voucher' AND a.target = $1::text",
    )
    .bind(v)
    .fetch_one(&app.core.db)
    .await
    .expect("the voucher and its action");
    assert_eq!((stock, outcome.as_str()), (5, "done"));

    let dir = std::env::temp_dir().join(format!("seckill-back-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let port: u16 = url
        .trim_end_matches('/')
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("the test's Redis port");
    let _back = redis_in(&dir, port);
    assert_eq!(first_ping(&url).await, "PONG");
    // The instance reconnects by itself; until then a buy is a 503 that says to retry.
    let mut answer = app.buy(&crowd[0], v).await;
    for _ in 0..200 {
        if answer.status() != StatusCode::SERVICE_UNAVAILABLE {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        answer = app.buy(&crowd[0], v).await;
    }
    assert_eq!(answer.status(), StatusCode::ACCEPTED);
    let order = answer.json::<serde_json::Value>().await.expect("json")["order_id"]
        .as_str()
        .expect("an order ID")
        .to_owned();
    assert_eq!(written(&app, &crowd[0], &order).await["status"], "created");
    app.shutdown.cancel();
    let _ = std::fs::remove_dir_all(&dir);
}

/// A redis-server on `port` keeping its snapshot in `dir`.
fn redis_in(dir: &std::path::Path, port: u16) -> tokio::process::Child {
    tokio::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--appendonly", "no", "--save", ""])
        .args(["--enable-debug-command", "yes"])
        .arg("--dir")
        .arg(dir)
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server (scripts/setup.sh installs it)")
}

/// The reply to PING once the port accepts connections: `PONG`, or the error's code.
async fn first_ping(url: &str) -> String {
    let client = redis::Client::open(url).expect("url");
    for _ in 0..200 {
        if let Ok(mut c) = client.get_multiplexed_async_connection().await {
            return match redis::cmd("PING").query_async::<String>(&mut c).await {
                Ok(pong) => pong,
                Err(e) => e.code().unwrap_or("other").to_owned(),
            };
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("redis-server did not listen at {url}");
}

#[sqlx::test]
async fn an_instance_started_while_redis_loads_its_dataset_waits_for_it(db: PgPool) {
    let dir = std::env::temp_dir().join(format!("seckill-loading-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("dir");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("addr")
        .port();
    let url = format!("redis://127.0.0.1:{port}/");
    // A snapshot that takes a moment to load.
    let mut redis = redis_in(&dir, port);
    assert_eq!(first_ping(&url).await, "PONG");
    // redis-cli: these take longer than a client's response timeout.
    for command in [&["DEBUG", "POPULATE", "3000000"][..], &["SAVE"][..]] {
        let done = tokio::process::Command::new("redis-cli")
            .args(["-p", &port.to_string()])
            .args(command)
            .output()
            .await
            .expect("redis-cli");
        assert!(done.status.success(), "{command:?}: {done:?}");
    }
    redis.kill().await.expect("stopped");

    let _restarted = redis_in(&dir, port);
    assert_eq!(
        first_ping(&url).await,
        "LOADING",
        "the instance starts while Redis is still loading (else this test proves nothing)"
    );
    let app = spawn_app_with(db, &url, &[]).await;
    let shopper = app.sign_in("13900005001").await;
    let r = shopper
        .post(format!("{}/sf/whoami", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    app.shutdown.cancel();
    let _ = std::fs::remove_dir_all(&dir);
}
