//! Live stock pushed to open pages (design.md §8, decision 20) over real HTTP: a stream starts with
//! the figures now and carries a buy made through another instance of the deployment; an
//! unknown voucher is a JSON 404, not a stream.

use std::time::Duration;

use crate::support::{buy_order, expect_error, spawn_instances};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;

/// Reads Server-Sent Events from `response` until one satisfies `wanted` (within 5 s).
async fn next_event(
    response: &mut reqwest::Response,
    buffer: &mut String,
    wanted: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut event = None;
            let mut data = None;
            for line in block.lines() {
                if let Some(v) = line.strip_prefix("event:") {
                    event = Some(v.trim().to_owned());
                } else if let Some(v) = line.strip_prefix("data:") {
                    data = Some(v.trim().to_owned());
                }
            }
            if let (Some(event), Some(data)) = (event, data) {
                assert_eq!(event, "stock");
                let value: Value = serde_json::from_str(&data).expect("JSON data");
                if wanted(&value) {
                    return value;
                }
            }
        }
        let chunk = tokio::time::timeout_at(deadline, response.chunk())
            .await
            .expect("an event in time")
            .expect("stream open")
            .expect("stream not ended");
        buffer.push_str(std::str::from_utf8(&chunk).expect("UTF-8"));
    }
}

#[sqlx::test]
async fn a_sale_page_hears_a_buy_made_on_another_instance(db: PgPool) {
    let apps = spawn_instances(db, 2).await;
    let (a, b) = (&apps[0], &apps[1]);
    let admin = a.sign_in("13800000000").await;
    let v = a.create(&admin, -5, 3600, 3).await;

    let mut stream = a.events(&crate::support::client(), v).await;
    assert_eq!(stream.status(), StatusCode::OK);
    assert_eq!(
        stream.headers()["content-type"].to_str().ok(),
        Some("text/event-stream")
    );
    let mut buffer = String::new();
    let first = next_event(&mut stream, &mut buffer, |_| true).await;
    assert_eq!(first["remaining"], 3, "{first}");
    assert!(first["ends_at"].is_string(), "{first}");

    let shopper = b.sign_in("13900000001").await;
    buy_order(b, &shopper, v).await;
    let after = next_event(&mut stream, &mut buffer, |e| e["remaining"] != 3).await;
    assert_eq!(after["remaining"], 2, "{after}");
    assert_eq!(a.core.live.watchers(), 1);
    drop(stream);
    // The watcher is gone once its stream is (the instance stops reading the sale).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while a.core.live.watchers() > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "watcher not dropped"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[sqlx::test]
async fn an_unknown_sale_is_a_json_404_not_a_stream(db: PgPool) {
    let apps = spawn_instances(db, 1).await;
    for id in ["999999", "abc", "-1"] {
        let r = apps[0].events(&crate::support::client(), id).await;
        expect_error(r, StatusCode::NOT_FOUND, "not_found").await;
    }
}

#[sqlx::test]
async fn a_graceful_shutdown_ends_open_streams_instead_of_waiting_on_them(db: PgPool) {
    let mut apps = spawn_instances(db, 1).await;
    let app = apps.remove(0);
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 3).await;
    let mut stream = app.events(&crate::support::client(), v).await;
    let mut buffer = String::new();
    next_event(&mut stream, &mut buffer, |_| true).await;

    app.shutdown.cancel();
    // The instance finishes shutting down although a page was still watching…
    // Held by the stream, the shutdown would wait out the 30 s drain; half of it is the bound.
    let stopped = tokio::time::timeout(Duration::from_secs(15), app.serving)
        .await
        .expect("shut down within 15 s, not held by the open stream for the 30 s drain")
        .expect("task");
    assert!(stopped.is_ok(), "{stopped:?}");
    // …and the page's stream has ended (its browser would reconnect elsewhere).
    // The instance is gone: a hang guard.
    let end = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(_)) = stream.chunk().await {}
    })
    .await;
    assert!(end.is_ok(), "the stream ended");
}
