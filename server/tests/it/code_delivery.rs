//! Sign-in codes through the SMS gateway's webhook (#23 point 1), over real HTTP to a receiver
//! this test starts: the code reaches the receiver signed with HMAC-SHA256 of the body, never
//! the caller, and signs in; a gateway that fails is tried once more, then the shopper hears
//! 503 `code_not_sent` and may ask again at once.

use std::sync::{Arc, Mutex};

use axum::{
    extract::State, http::HeaderMap, http::StatusCode as AxumStatus, routing::post, Router,
};
use hmac::{KeyInit, Mac};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{client, expect_error, spawn_app_with, TestApp};

const SECRET: &str = "test-webhook-secret-0123456789";

/// What the receiver got: each body and its signature header.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<(String, String)>>>);

/// A gateway on a free loopback port answering `status` to every code; its URL.
async fn gateway(status: u16, got: Received) -> String {
    async fn take(
        State((status, got)): State<(u16, Received)>,
        headers: HeaderMap,
        body: String,
    ) -> AxumStatus {
        let signature = headers
            .get("x-seckill-signature")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        got.0.lock().expect("lock").push((body, signature));
        AxumStatus::from_u16(status).expect("status")
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/sms", listener.local_addr().expect("addr"));
    let app = Router::new()
        .route("/sms", post(take))
        .with_state((status, got));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

async fn shop(db: PgPool, url: &str) -> TestApp {
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:16379/".into());
    spawn_app_with(
        db,
        &redis,
        &[
            ("SECKILL_DEV_LOGIN", "false"),
            (
                "SECKILL_DRAW_SIGNING_KEY",
                "6666666666666666666666666666666666666666666666666666666666666666",
            ),
            ("SECKILL_DRAND_URL", "off"),
            ("SECKILL_SMS_WEBHOOK_URL", url),
            ("SECKILL_SMS_WEBHOOK_SECRET", SECRET),
            ("SECKILL_SMS_WEBHOOK_TIMEOUT_MS", "1000"),
        ],
    )
    .await
}

fn expected_signature(body: &str) -> String {
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
    mac.update(body.as_bytes());
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

#[sqlx::test]
async fn the_code_reaches_the_gateway_signed_and_never_the_caller(db: PgPool) {
    let got = Received::default();
    let app = shop(db, &gateway(200, got.clone()).await).await;
    let c = client();
    let r = app
        .request_code(&c, &json!({ "phone": "13900000010" }))
        .await;
    assert_eq!(r.status(), StatusCode::OK);
    let answer: Value = r.json().await.expect("json");
    assert!(
        answer.get("code").is_none(),
        "the code stays out of the answer: {answer}"
    );
    let (body, signature) = got
        .0
        .lock()
        .expect("lock")
        .first()
        .cloned()
        .expect("one request");
    assert_eq!(
        signature,
        expected_signature(&body),
        "signed with the shared secret"
    );
    let sent: Value = serde_json::from_str(&body).expect("json body");
    assert_eq!(sent["phone"], "+8613900000010", "in E.164");
    assert_eq!(sent["expires_in_s"], 300);
    let code = sent["code"].as_str().expect("code");
    assert!(
        code.len() == 6 && code.bytes().all(|b| b.is_ascii_digit()),
        "{code}"
    );
    let r = app
        .post_login(&c, &json!({ "phone": "13900000010", "code": code }))
        .await;
    assert_eq!(r.status(), StatusCode::OK, "the delivered code signs in");
    assert!(r.headers().get("set-cookie").is_some());
}

#[sqlx::test]
async fn a_failing_gateway_is_tried_twice_then_the_shopper_may_ask_again(db: PgPool) {
    let got = Received::default();
    let app = shop(db, &gateway(502, got.clone()).await).await;
    let ask = || {
        client()
            .post(format!("{}/api/login/code", app.base))
            .json(&json!({ "phone": "13900000011" }))
            .send()
    };
    let r = ask().await.expect("send");
    assert!(r.headers().get("retry-after").is_some());
    expect_error(r, StatusCode::SERVICE_UNAVAILABLE, "code_not_sent").await;
    assert_eq!(
        got.0.lock().expect("lock").len(),
        2,
        "one attempt and one retry"
    );
    // Not throttled: the code was never delivered.
    let again = ask().await.expect("send");
    expect_error(again, StatusCode::SERVICE_UNAVAILABLE, "code_not_sent").await;
    assert_eq!(got.0.lock().expect("lock").len(), 4);
}
