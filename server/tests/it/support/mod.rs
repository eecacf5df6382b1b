//! The HTTP tests' harness: the application on port 0, clients, sign-in.

mod endpoints;

use std::collections::HashMap;

use reqwest::{Client, StatusCode};
use seckill::{Config, Core};
use serde_json::{json, Value};
use sqlx::PgPool;

/// A server started in this process on port 0, on the real Redis (its own key prefix) and a
/// fresh PostgreSQL database.
pub struct TestApp {
    pub base: String,
    /// Where its `/metrics` is served (`http://…`).
    pub metrics: String,
    pub core: Core,
    /// Cancelling it stops the instance gracefully (as SIGTERM does).
    pub shutdown: tokio_util::sync::CancellationToken,
    /// The instance's serving task: it ends once a shutdown has finished.
    pub serving: tokio::task::JoinHandle<anyhow::Result<()>>,
}

pub async fn spawn_app(db: PgPool) -> TestApp {
    let prefix = format!("api{}:", uuid::Uuid::new_v4().simple());
    spawn_instance(db, &prefix).await
}

/// `n` instances of one deployment (the same Redis keys and database), each with its own port,
/// worker and consumer name, as several hosts behind a load balancer would run.
pub async fn spawn_instances(db: PgPool, n: usize) -> Vec<TestApp> {
    let prefix = format!("api{}:", uuid::Uuid::new_v4().simple());
    let mut apps = Vec::with_capacity(n);
    for _ in 0..n {
        apps.push(spawn_instance(db.clone(), &prefix).await);
    }
    apps
}

/// An instance on the Redis at `redis_url` (not the shared one), with `extra` settings.
pub async fn spawn_app_with(
    db: PgPool,
    redis_url: &str,
    extra: &[(&'static str, &str)],
) -> TestApp {
    let prefix = format!("api{}:", uuid::Uuid::new_v4().simple());
    let mut vars = instance_vars(&prefix);
    vars.insert("REDIS_URL", redis_url.to_owned());
    for (k, v) in extra {
        vars.insert(k, (*v).to_owned());
    }
    start(db, &vars).await
}

/// An instance on the shared Redis with `extra` settings, which win over the harness's.
pub async fn spawn_app_setting(db: PgPool, extra: &[(&'static str, &str)]) -> TestApp {
    let redis = std::env::var("REDIS_URL")
        .unwrap_or_else(|_| seckill::config::DEFAULT_REDIS_URL.to_owned());
    spawn_app_with(db, &redis, extra).await
}

async fn spawn_instance(db: PgPool, prefix: &str) -> TestApp {
    let mut vars = instance_vars(prefix);
    if let Ok(url) = std::env::var("REDIS_URL") {
        vars.insert("REDIS_URL", url);
    }
    start(db, &vars).await
}

fn instance_vars(prefix: &str) -> HashMap<&'static str, String> {
    let prefix = prefix.to_owned();
    HashMap::from([
        ("SECKILL_KEY_PREFIX", prefix),
        ("LEPTOS_SITE_ADDR", "127.0.0.1:0".to_owned()),
        ("SECKILL_METRICS_ADDR", "127.0.0.1:0".to_owned()),
        ("SECKILL_DEV_LOGIN", "true".to_owned()),
        ("SECKILL_DEV_PAYMENTS", "true".to_owned()),
        ("SECKILL_BUYS_PER_SECOND", "3".to_owned()),
        ("SECKILL_WORKER_BLOCK_MS", "50".to_owned()),
        ("SECKILL_PUSH_MS", "100".to_owned()),
        // Every test signs its shoppers in from loopback; the limits have their own tests.
        ("SECKILL_CODE_REQUESTS_PER_CLIENT", "100000".to_owned()),
        ("SECKILL_SIGN_INS_PER_CLIENT", "100000".to_owned()),
        (
            "SECKILL_INSTANCE_ID",
            format!("api-{}", uuid::Uuid::new_v4().simple()),
        ),
    ])
}

async fn start(db: PgPool, vars: &HashMap<&str, String>) -> TestApp {
    let config = Config::from_lookup(|k| vars.get(k).cloned()).expect("config");
    let settings = server::Settings::from_lookup(|k| vars.get(k).cloned()).expect("settings");
    let core = Core::with_pool(config, db).await.expect("core");
    let app = server::Application::build_with(core.clone(), settings)
        .await
        .expect("build");
    let base = format!("http://{}", app.local_addr());
    let metrics = format!("http://{}", app.metrics_addr().expect("a metrics listener"));
    let shutdown = app.shutdown_token();
    let serving = tokio::spawn(app.run_until_stopped());
    TestApp {
        base,
        metrics,
        core,
        shutdown,
        serving,
    }
}

/// Asserts an API error: its status, its code, a message for people; the body.
pub async fn expect_error(r: reqwest::Response, status: StatusCode, code: &str) -> Value {
    assert_eq!(r.status(), status);
    let body: Value = r.json().await.expect("json error body");
    assert_eq!(body["error"], code, "{body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    body
}

/// Buys voucher `v` as `c`, which must be admitted; the order ID.
pub async fn buy_order(app: &TestApp, c: &Client, v: i64) -> String {
    let r = c
        .post(format!("{}/api/vouchers/{v}/orders", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    r.json::<Value>().await.expect("json")["order_id"]
        .as_str()
        .expect("id")
        .to_owned()
}

/// `GET url` as `c`, its JSON body (whatever the status).
/// A page as a browser asks for it (`Accept: text/html`): its HTML.
pub async fn html(c: &Client, url: &str) -> String {
    c.get(url)
        .header("accept", "text/html")
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("html")
}

pub async fn get_json(c: &Client, url: &str) -> Value {
    c.get(url)
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json")
}

/// Polls `GET /api/orders/{order}` as `c` until the worker has written it (10 s at most);
/// the last body.
pub async fn written(app: &TestApp, c: &Client, order: &str) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = get_json(c, &format!("{}/api/orders/{order}", app.base)).await;
        if last["status"] != "queued" {
            return last;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("order {order} not written: {last}")
}

pub fn client() -> Client {
    // Redirects are asserted, not followed. A request that hangs fails its test within a
    // minute (the longest wait any test makes is 20 s) rather than holding the test command.
    Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .expect("client")
}

impl TestApp {
    /// Asks for a code and signs in as `phone` with `c` (dev login); the sign-in response.
    pub async fn log_in(&self, c: &Client, phone: &str) -> reqwest::Response {
        let r = self.request_code(c, &json!({ "phone": phone })).await;
        assert_eq!(r.status(), StatusCode::OK);
        let code = r.json::<Value>().await.expect("json")["code"]
            .as_str()
            .expect("dev code")
            .to_owned();
        let r = self
            .post_login(c, &json!({ "phone": phone, "code": code }))
            .await;
        assert_eq!(r.status(), StatusCode::OK);
        r
    }

    /// A client signed in as `phone` (dev login).
    pub async fn sign_in(&self, phone: &str) -> Client {
        let c = client();
        let r = self.log_in(&c, phone).await;
        let set_cookie = r
            .headers()
            .get("set-cookie")
            .expect("cookie")
            .to_str()
            .expect("ascii")
            .to_owned();
        assert!(
            set_cookie.contains("HttpOnly") && set_cookie.contains("SameSite=Lax"),
            "{set_cookie}"
        );
        c
    }

    /// Creates a voucher priced 5.00 as `admin`; returns its ID.
    pub async fn create(&self, admin: &Client, begins_in: i64, lasts: i64, stock: i64) -> i64 {
        self.create_priced(admin, begins_in, lasts, stock, 500)
            .await
    }

    /// Creates a voucher priced `price_cents` as `admin`; returns its ID.
    pub async fn create_priced(
        &self,
        admin: &Client,
        begins_in: i64,
        lasts: i64,
        stock: i64,
        price_cents: i64,
    ) -> i64 {
        let now = chrono::Utc::now();
        let r = self
            .create_voucher(
                admin,
                &json!({
                "title": "API voucher", "description": "", "price_cents": price_cents, "stock": stock,
                "begins_at": (now + chrono::Duration::seconds(begins_in)).to_rfc3339(),
                "ends_at": (now + chrono::Duration::seconds(begins_in + lasts)).to_rfc3339(),
            }),
            )
            .await;
        assert_eq!(r.status(), StatusCode::CREATED);
        r.json::<Value>().await.expect("json")["id"]
            .as_i64()
            .expect("id")
    }
}

/// I1 and I2 on `v` once quiet: Redis's stock plus the live orders is `stock`, and no shopper
/// holds two live orders. Both counts are read again on each try: a sweep may still cancel an
/// order meanwhile (its unit then comes back), and a count read once before would not see it.
pub async fn units_hold(app: &TestApp, v: i64, stock: i64) {
    let live = || async {
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM orders WHERE voucher_id = $1 AND status <> 'cancelled'",
        )
        .bind(v)
        .fetch_one(&app.core.db)
        .await
        .expect("count")
    };
    let twice: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT user_id FROM orders WHERE voucher_id = $1
           AND status <> 'cancelled' GROUP BY user_id HAVING count(*) > 1) t",
    )
    .bind(v)
    .fetch_one(&app.core.db)
    .await
    .expect("count");
    assert_eq!(twice, 0, "I2");
    let (mut remaining, mut held) = (-1, -1);
    for _ in 0..100 {
        held = live().await;
        remaining = self::remaining(app, v).await;
        if remaining + held == stock && live().await == held {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("I1: {remaining} left in Redis + {held} live orders != {stock}");
}

/// The stock left of voucher `v`, as the API shows it.
pub async fn remaining(app: &TestApp, v: i64) -> i64 {
    client()
        .get(format!("{}/api/vouchers/{v}", app.base))
        .send()
        .await
        .expect("send")
        .json::<Value>()
        .await
        .expect("json")["remaining"]
        .as_i64()
        .expect("remaining")
}

/// A throwaway Redis on a free loopback port, without persistence.
pub async fn own_redis() -> (tokio::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a free port")
        .local_addr()
        .expect("addr")
        .port();
    let child = tokio::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server (scripts/setup.sh installs it)");
    let url = format!("redis://127.0.0.1:{port}/");
    let client = redis::Client::open(url.as_str()).expect("url");
    for _ in 0..100 {
        if let Ok(mut c) = client.get_multiplexed_async_connection().await {
            if redis::cmd("PING")
                .query_async::<String>(&mut c)
                .await
                .is_ok()
            {
                return (child, url);
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the test's redis-server did not start on port {port}");
}

/// An order ID of voucher `v`'s shard issued now, far past any an admission draws today: for
/// orders planted in Redis off the stream, which the worker then leaves where they are.
pub fn planted_order_id(v: i64) -> seckill::domain::OrderId {
    let now_secs = chrono::Utc::now().timestamp() - seckill::domain::ORDER_EPOCH_UNIX;
    let voucher = seckill::domain::VoucherId::try_from(v).expect("id");
    let sequence = seckill::domain::Shard::of_voucher(voucher)
        .sequence(16_000_000)
        .expect("in range");
    seckill::domain::OrderId::from_parts(u32::try_from(now_secs).expect("secs"), sequence)
        .expect("id")
}

/// The user ID of `phone` (as stored: E.164).
pub async fn user_id(app: &TestApp, phone: &str) -> i64 {
    sqlx::query_scalar("SELECT id FROM users WHERE phone = $1")
        .bind(phone)
        .fetch_one(&app.core.db)
        .await
        .expect("user")
}
