//! A sold-out sale answers every buy from memory (#25 point 2, design.md decision 29): once the
//! sale's buyers are read, a refused shopper learns the refusal, and a buyer their own order,
//! with no Redis command at all. Watched with `MONITOR` on a Redis of this test's own.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::support::{buy_order, expect_error, own_redis, spawn_app_with, written};

/// Every command the Redis at `url` runs from now on, one line each, until the handle is dropped.
async fn monitor(url: &str) -> tokio::sync::mpsc::UnboundedReceiver<String> {
    let addr = url
        .trim_start_matches("redis://")
        .trim_end_matches('/')
        .to_owned();
    let mut socket = tokio::net::TcpStream::connect(addr).await.expect("connect");
    socket.write_all(b"MONITOR\r\n").await.expect("MONITOR");
    let mut lines = BufReader::new(socket).lines();
    let ok = lines.next_line().await.expect("read").expect("a reply");
    assert_eq!(ok, "+OK");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

async fn buy(base: &str, c: &reqwest::Client, v: i64) -> reqwest::Response {
    c.post(format!("{base}/api/vouchers/{v}/orders"))
        .send()
        .await
        .expect("send")
}

/// Each of `rivals` buys `v` and is refused as sold out.
async fn refused_all(base: &str, rivals: &[reqwest::Client], v: i64) {
    for rival in rivals {
        expect_error(buy(base, rival, v).await, StatusCode::CONFLICT, "sold_out").await;
    }
}

#[sqlx::test]
async fn a_sold_out_sale_answers_each_shopper_with_no_redis_command(db: PgPool) {
    let (_redis, url) = own_redis().await;
    let app = spawn_app_with(db, &url, &[("SECKILL_SOLD_OUT_TTL_MS", "60000")]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 600, 1).await;
    let buyer = app.sign_in("13900000071").await;
    let mut rivals = Vec::new();
    for n in 0..5 {
        rivals.push(app.sign_in(&format!("1390000008{n}")).await);
    }
    let order = buy_order(&app, &buyer, v).await;
    // Written, so the order writer has nothing left of this sale but its polls of the stream.
    written(&app, &buyer, &order).await;
    // The first refusal is the script's, the next ones come from memory and start reading the
    // sale's buyers. (Sessions are signed: knowing a shopper reads nothing.)
    refused_all(&app.base, &rivals, v).await;
    let voucher = seckill::domain::VoucherId::try_from(v).expect("id");
    for _ in 0..200 {
        if app.core.sold_out.kept() == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(app.core.sold_out.kept(), 1, "the sale's one buyer read");

    let mut seen = monitor(&url).await;
    for _ in 0..20 {
        refused_all(&app.base, &rivals, v).await;
        let r = buy(&app.base, &buyer, v).await;
        assert_eq!(
            r.status(),
            StatusCode::ACCEPTED,
            "a repeat is the same order"
        );
        let body: Value = r.json().await.expect("json");
        assert_eq!(body["order_id"], order.as_str());
    }
    // Whatever the monitor has seen by now, with a moment for its lines to arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let sale_keys = format!(":v{}:", voucher.get());
    let mut commands = Vec::new();
    while let Ok(line) = seen.try_recv() {
        commands.push(line);
    }
    let touched: Vec<&String> = commands
        .iter()
        .filter(|l| l.contains(&sale_keys) || l.contains("session:"))
        .filter(|l| !l.contains("\"XREADGROUP\""))
        .collect();
    assert!(
        touched.is_empty(),
        "120 refused buys sent Redis commands for the sale or a session: {touched:#?}"
    );
}
