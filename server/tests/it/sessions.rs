//! Signed sessions over HTTP (issue #25 point 1, design.md decision 30): knowing the shopper
//! needs no store, and signing out everywhere ends their sessions on every instance.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;

use seckill::domain::{Phone, UserId};

use crate::support::{client, own_redis, spawn_app_with, spawn_instances, user_id};

#[sqlx::test]
async fn the_shopper_is_known_while_redis_is_down(db: PgPool) {
    let (mut redis, url) = own_redis().await;
    let app = spawn_app_with(db, &url, &[]).await;
    let shopper = app.sign_in("13900003001").await;
    redis.kill().await.expect("redis-server stopped");
    let r = shopper
        .post(format!("{}/sf/whoami", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let me: Value = r.json().await.expect("json");
    assert_eq!(me["phone"], "+8613900003001", "{me}");
}

#[sqlx::test]
async fn signing_out_everywhere_ends_every_session_on_every_instance(db: PgPool) {
    let apps = spawn_instances(db, 2).await;
    let (a, b) = (&apps[0], &apps[1]);
    let laptop = a.sign_in("13900003002").await;
    // The same shopper on another device, through the other instance.
    let phone_number = "+8613900003002";
    let other_device = seckill::auth::open_session(
        &b.core,
        UserId::from_db(user_id(a, phone_number).await),
        Phone::try_from(phone_number).expect("phone"),
    )
    .await
    .expect("opened")
    .token;
    let phone = client();
    // A made-up voucher: 404 signed in, 401 signed out (no unit is taken either way).
    let probe = || async {
        phone
            .post(format!("{}/api/vouchers/999999/orders", b.base))
            .header("cookie", format!("seckill_session={other_device}"))
            .send()
            .await
            .expect("send")
            .status()
    };
    assert_eq!(probe().await, StatusCode::NOT_FOUND, "signed in on B");

    let r = a.log_out_everywhere(&laptop).await;
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let cleared = r
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    let mut refused = false;
    for _ in 0..100 {
        if probe().await == StatusCode::UNAUTHORIZED {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "the other device is signed out on B within 1 s");
}
