//! Sign-in and connection abuse (#23 points 5 and 6), over real HTTP and raw sockets: one
//! handset is one throttle however its number is written; wrong codes are budgeted per phone
//! across codes; code requests and sign-ins are limited per client address, the address a
//! trusted proxy names included; sale streams are limited per client; a body must arrive whole
//! within its deadline; a client that does not read its answers is dropped.

use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpSocket, TcpStream},
};

use crate::support::{client, expect_error, spawn_app_setting, TestApp};

async fn ask_code(app: &TestApp, c: &Client, phone: &str, from: Option<&str>) -> reqwest::Response {
    let mut req = c
        .post(format!("{}/api/login/code", app.base))
        .json(&json!({ "phone": phone }));
    if let Some(addr) = from {
        req = req.header("x-forwarded-for", addr);
    }
    req.send().await.expect("send")
}

async fn try_code(app: &TestApp, c: &Client, phone: &str, code: &str) -> reqwest::Response {
    app.post_login(c, &json!({ "phone": phone, "code": code }))
        .await
}

fn retry_after(r: &reqwest::Response) -> u64 {
    r.headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds")
}

#[sqlx::test]
async fn one_handset_is_one_throttle_however_it_is_written(db: PgPool) {
    let app = spawn_app_setting(db, &[]).await;
    let c = client();
    assert_eq!(
        ask_code(&app, &c, "139 0000 0001", None).await.status(),
        StatusCode::OK
    );
    for spelling in [
        "13900000001",
        "+86 139-0000-0001",
        "8613900000001",
        "008613900000001",
    ] {
        let r = ask_code(&app, &c, spelling, None).await;
        assert!(retry_after(&r) >= 1);
        expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    }
}

#[sqlx::test]
async fn wrong_codes_are_counted_per_phone_across_codes(db: PgPool) {
    let app = spawn_app_setting(
        db,
        &[
            ("SECKILL_CODE_RESEND_MS", "50"),
            ("SECKILL_CODE_ATTEMPTS", "5"),
            ("SECKILL_SIGN_IN_FAILURES", "10"),
        ],
    )
    .await;
    let c = client();
    let phone = "13900000002";
    // Two codes, five wrong guesses each: ten failures, which the per-code count forgets.
    for _ in 0..2 {
        tokio::time::sleep(Duration::from_millis(60)).await;
        let r = ask_code(&app, &c, phone, None).await;
        assert_eq!(r.status(), StatusCode::OK);
        let right = r.json::<Value>().await.expect("json")["code"]
            .as_str()
            .expect("code")
            .to_owned();
        let wrong = if right == "000000" {
            "111111"
        } else {
            "000000"
        };
        for _ in 0..5 {
            let r = try_code(&app, &c, phone, wrong).await;
            expect_error(r, StatusCode::BAD_REQUEST, "invalid_code").await;
        }
    }
    // A third code, the right one: refused until the window ends.
    tokio::time::sleep(Duration::from_millis(60)).await;
    let r = ask_code(&app, &c, phone, None).await;
    let right = r.json::<Value>().await.expect("json")["code"]
        .as_str()
        .expect("code")
        .to_owned();
    let r = try_code(&app, &c, phone, &right).await;
    let wait = retry_after(&r);
    assert!((3_000..=3_600).contains(&wait), "Retry-After {wait}");
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // Another phone is not affected.
    let other = client();
    let r = ask_code(&app, &other, "13900000003", None).await;
    let code = r.json::<Value>().await.expect("json")["code"]
        .as_str()
        .expect("code")
        .to_owned();
    assert_eq!(
        try_code(&app, &other, "13900000003", &code).await.status(),
        StatusCode::OK
    );
}

#[sqlx::test]
async fn one_client_asks_for_a_bounded_number_of_codes_a_minute(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_CODE_REQUESTS_PER_CLIENT", "5")]).await;
    let c = client();
    for i in 0..5 {
        let r = ask_code(&app, &c, &format!("1390001{i:04}"), None).await;
        assert_eq!(r.status(), StatusCode::OK);
    }
    let r = ask_code(&app, &c, "13900019999", None).await;
    let wait = retry_after(&r);
    assert!((1..=60).contains(&wait), "Retry-After {wait}");
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // X-Forwarded-For from a peer that is not a trusted proxy changes nothing.
    let r = ask_code(&app, &c, "13900019998", Some("203.0.113.7")).await;
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // The counter expires with its minute: Redis holds nothing for good.
    let mut redis = app.core.redis.clone();
    let key = format!(
        "{}limit:{{127.0.0.1}}:127.0.0.1:codes",
        app.core.config.key_prefix.as_str()
    );
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut redis)
        .await
        .expect("pttl");
    assert!((1..=60_000).contains(&ttl), "{key} expires in {ttl} ms");
}

#[sqlx::test]
async fn behind_a_trusted_proxy_each_client_has_its_own_limit(db: PgPool) {
    let app = spawn_app_setting(
        db,
        &[
            ("SECKILL_CODE_REQUESTS_PER_CLIENT", "2"),
            ("SECKILL_TRUSTED_PROXIES", "127.0.0.1"),
        ],
    )
    .await;
    let c = client();
    for i in 0..2 {
        let r = ask_code(&app, &c, &format!("1390002{i:04}"), Some("203.0.113.1")).await;
        assert_eq!(r.status(), StatusCode::OK);
    }
    // The client cannot escape by writing its own entry in front of the proxy's.
    let r = ask_code(&app, &c, "13900029999", Some("198.51.100.9, 203.0.113.1")).await;
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // Another client behind the same proxy is not limited by the first.
    let r = ask_code(&app, &c, "13900029998", Some("203.0.113.2")).await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[sqlx::test]
async fn an_ipv6_site_rotating_through_its_networks_is_limited_as_sixteen_clients(db: PgPool) {
    let app = spawn_app_setting(
        db,
        &[
            ("SECKILL_CODE_REQUESTS_PER_CLIENT", "1"),
            ("SECKILL_TRUSTED_PROXIES", "127.0.0.1"),
        ],
    )
    .await;
    let c = client();
    // One code from each of sixteen /64s of one /48: sixteen clients' worth.
    for i in 0..16 {
        let from = format!("2001:db8:7:{i:x}::1");
        let r = ask_code(&app, &c, &format!("1390004{i:04}"), Some(&from)).await;
        assert_eq!(r.status(), StatusCode::OK, "{from}");
    }
    // A seventeenth /64 of the same /48 has asked nothing yet, and is refused.
    let r = ask_code(&app, &c, "13900049999", Some("2001:db8:7:99::1")).await;
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    // Another site is not.
    let r = ask_code(&app, &c, "13900049998", Some("2001:db8:8:1::1")).await;
    assert_eq!(r.status(), StatusCode::OK);
}

#[sqlx::test]
async fn one_client_tries_a_bounded_number_of_sign_ins_a_minute(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_SIGN_INS_PER_CLIENT", "3")]).await;
    let c = client();
    for i in 0..3 {
        let r = try_code(&app, &c, &format!("1390003{i:04}"), "123456").await;
        expect_error(r, StatusCode::BAD_REQUEST, "invalid_code").await;
    }
    // Even with the right code: the fourth attempt this minute is refused.
    let r = ask_code(&app, &c, "13900039999", None).await;
    let code = r.json::<Value>().await.expect("json")["code"]
        .as_str()
        .expect("code")
        .to_owned();
    let r = try_code(&app, &c, "13900039999", &code).await;
    assert!(retry_after(&r) >= 1);
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
}

#[sqlx::test]
async fn one_client_holds_a_bounded_number_of_sale_streams(db: PgPool) {
    let app = spawn_app_setting(
        db,
        &[
            ("SECKILL_STREAMS_PER_CLIENT", "2"),
            ("SECKILL_TRUSTED_PROXIES", "127.0.0.1"),
        ],
    )
    .await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 600, 10).await;
    let url = format!("{}/api/vouchers/{v}/events", app.base);
    let open = |from: &'static str| {
        let url = url.clone();
        async move {
            reqwest::Client::new()
                .get(url)
                .header("x-forwarded-for", from)
                .send()
                .await
                .expect("send")
        }
    };
    let first = open("203.0.113.1").await;
    let second = open("203.0.113.1").await;
    assert_eq!(
        (first.status(), second.status()),
        (StatusCode::OK, StatusCode::OK)
    );
    expect_error(
        open("203.0.113.1").await,
        StatusCode::TOO_MANY_REQUESTS,
        "rate_limited",
    )
    .await;
    assert_eq!(
        open("203.0.113.2").await.status(),
        StatusCode::OK,
        "another client"
    );
    drop((first, second));
}

/// The server's address as `host:port`.
fn addr(app: &TestApp) -> String {
    app.base.trim_start_matches("http://").to_owned()
}

#[sqlx::test]
async fn a_body_must_arrive_whole_within_its_deadline(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_BODY_TIMEOUT_MS", "1000")]).await;
    let mut s = TcpStream::connect(addr(&app)).await.expect("connect");
    s.write_all(
        b"POST /api/login/code HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n",
    )
    .await
    .expect("head");
    let started = Instant::now();
    // One byte every 200 ms: each gap is short, the whole is not.
    let mut answer = Vec::new();
    let mut buf = [0_u8; 4096];
    for _ in 0..50 {
        if s.write_all(b" ").await.is_err() {
            break;
        }
        if let Ok(Ok(n)) = tokio::time::timeout(Duration::from_millis(200), s.read(&mut buf)).await
        {
            answer.extend_from_slice(&buf[..n]);
            if n == 0 || answer.windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
    }
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    // A 1 s deadline; the trickle would go on for 10 s. Six leaves a busy machine room.
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
}

/// The server's count of connections dropped for not reading their answers.
async fn write_timeouts(app: &TestApp) -> u64 {
    let text = client()
        .get(format!("{}/metrics", app.metrics))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    text.lines()
        .find_map(|l| l.strip_prefix("seckill_http_write_timeouts_total "))
        .map_or(0, |v| v.trim().parse::<f64>().expect("a count") as u64)
}

/// What this test names is the write timeout, so it bounds nothing else. It used to wait at
/// most 10 s for a first page and then sleep a fixed 4 s before reading; on a machine fresh
/// from a cold build the first page alone took longer (issue #40: a `CREATE DATABASE`'s and
/// Redis's AOF fsyncs queued behind gigabytes of build output being written back; see
/// design.md decision 40). Now it waits for readiness (the first page, however long it takes)
/// and for the event itself (the server counting a write timeout), each under only the
/// harness's one-minute guard against a hang.
#[sqlx::test]
async fn a_client_that_does_not_read_its_answers_is_dropped(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_WRITE_TIMEOUT_MS", "1000")]).await;
    // The page rendered once, so the pipeline below is answered from the page cache as fast as
    // the server can write: what is measured is the write timeout, not a first rendering.
    // Readiness: the first page however long it takes, each attempt on a new connection (a
    // fresh clone's run once waited a whole minute on one), under a three-minute guard.
    let waited = Instant::now();
    let first = loop {
        let attempt = client()
            .get(format!("{}/", app.base))
            .timeout(Duration::from_secs(15))
            .send()
            .await;
        match attempt {
            Ok(r) => break r,
            Err(e) => assert!(
                waited.elapsed() < Duration::from_secs(180),
                "the home page: {e}"
            ),
        }
    };
    assert_eq!(first.status(), StatusCode::OK);
    let before = write_timeouts(&app).await;
    // A small receive window, so the server's writes stall soon.
    let socket = TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("rcvbuf");
    let s = socket
        .connect(addr(&app).parse().expect("addr"))
        .await
        .expect("connect");
    let (mut read, mut write) = s.into_split();
    // Pages of several KiB each: far more than the kernel's buffers on both ends hold.
    const REQUESTS: usize = 5_000;
    let writer = tokio::spawn(async move {
        let request = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
        for _ in 0..REQUESTS {
            if write.write_all(request).await.is_err() {
                break;
            }
        }
        write
    });
    // Read nothing until the server has given up on this connection.
    let waited = Instant::now();
    while write_timeouts(&app).await == before {
        assert!(
            waited.elapsed() < Duration::from_secs(60),
            "no write timeout within a minute of a client that reads nothing"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut answers = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(60), async {
        let mut buf = vec![0_u8; 64 * 1024];
        loop {
            match read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => answers.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    writer.abort();
    let answered = String::from_utf8_lossy(&answers)
        .matches("HTTP/1.1 200")
        .count();
    assert!(
        ended.is_ok(),
        "the connection stayed open ({answered} answers read, {} bytes, beginning {:?})",
        answers.len(),
        String::from_utf8_lossy(&answers[..answers.len().min(300)])
    );
    assert!(
        answered < REQUESTS,
        "every answer was written: nothing was dropped"
    );
    // The server itself is fine.
    assert_eq!(app.live(&client()).await.status(), StatusCode::OK);
}

#[sqlx::test]
async fn a_shopper_over_the_buy_limit_is_told_when_to_try_again(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_BUYS_PER_SECOND", "1")]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 10).await;
    let shopper = app.sign_in("13900000031").await;
    // One attempt a second on a sale, refused ones included: five in a row meet the limit (two
    // of them fall in one second however slowly the machine sends them, unless each takes one).
    let mut limited = None;
    for _ in 0..5 {
        let r = app.buy(&shopper, v).await;
        if r.status() == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(r);
            break;
        }
        assert!(
            [StatusCode::ACCEPTED, StatusCode::CONFLICT].contains(&r.status()),
            "{}",
            r.status()
        );
    }
    let r = limited.expect("a buy over the limit");
    assert_eq!(retry_after(&r), 1, "the limit counts per second");
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
}
