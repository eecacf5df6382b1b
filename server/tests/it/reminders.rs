//! "Remind me when it starts" (issue #56) over real HTTP, with a relay this test starts that
//! checks each message's signature: asked and taken back (201, 200, 204, 409), the count on the
//! sale's page, exactly one text per shopper who asked (distinct by `id`), none for one who took
//! it back, each in the shopper's language with the time in the shop's zone, sent once an
//! admin's edit brings the start within the lead; a relay that answers 500 first still ends
//! with one each; one whose sale opened while it waited for a retry is not sent, nor one whose
//! draw an admin ended before its entries opened.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use axum::{
    extract::State, http::HeaderMap, http::StatusCode as AxumStatus, routing::post, Router,
};
use chrono::{SecondsFormat, Utc};
use hmac::{KeyInit, Mac};
use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{expect_error, spawn_app_setting, TestApp};

const SECRET: &str = "test-reminder-secret-0123456789";

/// The reminders the relay took (signature checked), and how many attempts each `id` made.
#[derive(Clone, Default)]
struct Relay {
    taken: Arc<Mutex<Vec<Value>>>,
    attempts: Arc<Mutex<HashMap<String, u32>>>,
    /// Answer 500 to each message's first this many attempts.
    flaky: u32,
}

async fn relay(flaky: u32) -> (String, Relay) {
    async fn take(State(r): State<Relay>, headers: HeaderMap, body: String) -> AxumStatus {
        let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
        mac.update(body.as_bytes());
        let expected = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
        if headers
            .get("x-seckill-signature")
            .and_then(|v| v.to_str().ok())
            != Some(expected.as_str())
        {
            return AxumStatus::UNAUTHORIZED;
        }
        let message: Value = serde_json::from_str(&body).expect("json");
        if message["kind"] != "reminder" {
            return AxumStatus::NO_CONTENT; // a sign-in code
        }
        let id = message["id"].as_str().expect("id").to_owned();
        let tries = {
            let mut attempts = r.attempts.lock().expect("lock");
            let n = attempts.entry(id).or_default();
            *n += 1;
            *n
        };
        if tries <= r.flaky {
            return AxumStatus::INTERNAL_SERVER_ERROR;
        }
        r.taken.lock().expect("lock").push(message);
        AxumStatus::NO_CONTENT
    }
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/sms", listener.local_addr().expect("addr"));
    let r = Relay {
        flaky,
        ..Relay::default()
    };
    let app = Router::new()
        .route("/sms", post(take))
        .with_state(r.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, r)
}

async fn shop(db: PgPool, url: &str) -> TestApp {
    spawn_app_setting(
        db,
        &[
            ("SECKILL_SMS_WEBHOOK_URL", url),
            ("SECKILL_SMS_WEBHOOK_SECRET", SECRET),
            ("SECKILL_SMS_WEBHOOK_TIMEOUT_MS", "2000"),
            ("SECKILL_REMINDER_LEAD_MS", "300000"),
            ("SECKILL_TIME_ZONE", "Asia/Shanghai"),
        ],
    )
    .await
}

fn at(secs: i64) -> String {
    (Utc::now() + chrono::Duration::seconds(secs)).to_rfc3339_opts(SecondsFormat::Secs, true)
}

async fn remind(app: &TestApp, c: &reqwest::Client, v: i64, lang: &str) -> reqwest::Response {
    c.post(format!("{}/api/vouchers/{v}/reminder", app.base))
        .header("accept-language", lang)
        .send()
        .await
        .expect("send")
}

/// Waits until the relay took `n` reminders (they go within seconds once due), then a little
/// longer, so a second copy would be seen.
async fn taken(r: &Relay, n: usize) -> Vec<Value> {
    for _ in 0..300 {
        if r.taken.lock().expect("lock").len() >= n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    r.taken.lock().expect("lock").clone()
}

#[sqlx::test]
async fn everyone_who_asked_is_texted_once_in_their_language_when_the_start_comes_near(db: PgPool) {
    let (url, relay) = relay(0).await;
    let app = shop(db.clone(), &url).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, 3_600, 3_600, 10).await;
    let mut shoppers = Vec::new();
    for i in 0..6 {
        shoppers.push(app.sign_in(&format!("1390000200{i}")).await);
    }
    for (i, c) in shoppers.iter().enumerate() {
        let lang = if i == 0 { "zh-CN" } else { "en" };
        assert_eq!(remind(&app, c, v, lang).await.status(), StatusCode::CREATED);
    }
    assert_eq!(
        remind(&app, &shoppers[1], v, "en").await.status(),
        StatusCode::OK,
        "asked again"
    );
    let r = shoppers[5]
        .delete(format!("{}/api/vouchers/{v}/reminder", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let page = shoppers[4]
        .get(format!("{}/vouchers/{v}", app.base))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("5 waiting for it"),
        "the count on the sale's page"
    );
    assert!(
        page.contains("data-testid=\"reminder-set\""),
        "this shopper's reminder"
    );
    let home = reqwest::get(format!("{}/", app.base))
        .await
        .expect("home")
        .text()
        .await
        .expect("html");
    assert!(
        home.contains("5 waiting for it"),
        "the count on the sale's card"
    );
    // Nothing goes an hour ahead; the admin moves the start near: the reminders go now.
    tokio::time::sleep(Duration::from_millis(1_200)).await;
    assert!(
        relay.taken.lock().expect("lock").is_empty(),
        "not before the lead"
    );
    let begins = at(120);
    let r = app
        .edit_voucher(&admin, v, &json!({ "begins_at": begins }))
        .await;
    assert_eq!(r.status(), StatusCode::OK);

    let got = taken(&relay, 5).await;
    assert_eq!(
        got.len(),
        5,
        "one each, none for the one who took it back: {got:?}"
    );
    let mut phones: Vec<&str> = got
        .iter()
        .map(|m| m["phone"].as_str().expect("phone"))
        .collect();
    phones.sort_unstable();
    assert_eq!(
        phones,
        [
            "+8613900002000",
            "+8613900002001",
            "+8613900002002",
            "+8613900002003",
            "+8613900002004"
        ]
    );
    let ids: std::collections::HashSet<&str> =
        got.iter().map(|m| m["id"].as_str().expect("id")).collect();
    assert_eq!(ids.len(), 5, "distinct by id");
    for m in &got {
        assert_eq!(
            (m["voucher_id"].as_i64(), m["title"].as_str()),
            (Some(v), Some("API voucher"))
        );
        let when =
            chrono::DateTime::parse_from_rfc3339(m["at"].as_str().expect("at")).expect("rfc 3339");
        assert_eq!(
            when.offset().local_minus_utc(),
            8 * 3600,
            "in the shop's zone: {m}"
        );
        assert_eq!(
            when.timestamp(),
            chrono::DateTime::parse_from_rfc3339(&begins)
                .expect("t")
                .timestamp()
        );
        assert!(
            m["url"]
                .as_str()
                .is_some_and(|u| u.ends_with(&format!("/vouchers/{v}"))),
            "{m}"
        );
        let lang = if m["phone"] == "+8613900002000" {
            "zh-CN"
        } else {
            "en"
        };
        assert_eq!(m["lang"], lang);
    }
    let sent: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM reminders WHERE voucher_id = $1 AND state = 'sent'",
    )
    .bind(v)
    .fetch_one(&db)
    .await
    .expect("count");
    assert_eq!(sent, 5);
}

#[sqlx::test]
async fn a_relay_that_fails_first_still_ends_with_one_each(db: PgPool) {
    let (url, relay) = relay(1).await;
    let app = shop(db, &url).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, 120, 3_600, 10).await;
    for i in 0..3 {
        let c = app.sign_in(&format!("1390000300{i}")).await;
        assert_eq!(
            remind(&app, &c, v, "en").await.status(),
            StatusCode::CREATED
        );
    }
    let got = taken(&relay, 3).await;
    assert_eq!(got.len(), 3, "{got:?}");
    let attempts = relay.attempts.lock().expect("lock").clone();
    assert_eq!(attempts.len(), 3);
    assert!(
        attempts.values().all(|n| *n == 2),
        "a 500, then the same id again: {attempts:?}"
    );
}

#[sqlx::test]
async fn reminders_are_for_signed_in_shoppers_and_sales_not_yet_open(db: PgPool) {
    let (url, _relay) = relay(0).await;
    let app = shop(db, &url).await;
    // A development shop with a relay texts: its strip says nothing of texts not sent.
    let home = home_page(&app).await;
    assert!(home.contains(r#"data-testid="dev-mode""#), "{home}");
    assert!(!home.contains("No SMS relay is set"), "{home}");
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900004000").await;
    let open = app.create(&admin, -5, 3_600, 10).await;
    let r = reqwest::Client::new()
        .post(format!("{}/api/vouchers/{open}/reminder", app.base))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::UNAUTHORIZED, "unauthenticated").await;
    expect_error(
        remind(&app, &shopper, open, "en").await,
        StatusCode::CONFLICT,
        "sale_open",
    )
    .await;
    let r = shopper
        .delete(format!("{}/api/vouchers/{open}/reminder", app.base))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::CONFLICT, "sale_open").await;
    expect_error(
        remind(&app, &shopper, 987_654, "en").await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;
    let later = app.create(&admin, 3_600, 3_600, 10).await;
    let r = shopper
        .delete(format!("{}/api/vouchers/{later}/reminder", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(
        r.status(),
        StatusCode::NO_CONTENT,
        "nothing to take back is no error"
    );
    let anonymous = reqwest::get(format!("{}/vouchers/{later}", app.base))
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        anonymous.contains("0 waiting for it")
            && anonymous.contains("data-testid=\"remind-sign-in\"")
    );
}

#[sqlx::test]
async fn a_reminder_whose_sale_opened_before_it_could_go_is_not_sent(db: PgPool) {
    // The relay fails the first three attempts: the retries wait 2, 4, then 8 s, so the fourth
    // comes at least 14 s after the first, after the sale has opened (8 s after it was made).
    let (url, relay) = relay(3).await;
    let app = shop(db.clone(), &url).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900005000").await;
    let v = app.create(&admin, 8, 3_600, 10).await;
    assert_eq!(
        remind(&app, &shopper, v, "en").await.status(),
        StatusCode::CREATED
    );
    assert_eq!(settled_state(&db, v).await, "late");
    assert!(
        relay.taken.lock().expect("lock").is_empty(),
        "nothing sent after the start"
    );
}

#[sqlx::test]
async fn a_draw_ended_before_its_entries_opened_sends_no_reminder(db: PgPool) {
    let (url, relay) = relay(0).await;
    let app = shop(db.clone(), &url).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900005001").await;
    // Entries open in an hour: the reminder is an hour away from being due.
    let r = app
        .create_voucher(
            &admin,
            &json!({
                "title": "Draw ended early", "price_cents": 500, "stock": 3,
                "begins_at": at(7_200), "ends_at": at(10_800),
                "opening": "draw", "entries_open_at": at(3_600),
            }),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let v = r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id");
    assert_eq!(
        remind(&app, &shopper, v, "en").await.status(),
        StatusCode::CREATED
    );
    // The admin ends it before its entries open: it never opens, so nothing is promised…
    assert_eq!(app.end_sale(&admin, v).await.status(), StatusCode::OK);
    expect_error(
        remind(&app, &shopper, v, "en").await,
        StatusCode::CONFLICT,
        "sale_open",
    )
    .await;
    // …and the reminder asked for before is settled without a text.
    assert_eq!(settled_state(&db, v).await, "late");
    assert!(
        relay.taken.lock().expect("lock").is_empty(),
        "no text for a sale that will not open"
    );
}

/// The state `v`'s one reminder leaves `waiting` for (30 s at most: the relay's retries wait
/// 2, 4 and 8 s), or `waiting` if it never does.
async fn settled_state(db: &PgPool, v: i64) -> String {
    let mut state = String::new();
    for _ in 0..300 {
        state = sqlx::query_scalar("SELECT state FROM reminders WHERE voucher_id = $1")
            .bind(v)
            .fetch_one(db)
            .await
            .expect("state");
        if state != "waiting" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    state
}

#[sqlx::test]
async fn a_reminder_being_sent_cannot_be_taken_back_and_the_page_says_where_it_stands(db: PgPool) {
    let (url, relay) = relay(0).await;
    let app = shop(db.clone(), &url).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900005100").await;
    let page = |v: i64, lang: &'static str| {
        let (shopper, base) = (shopper.clone(), app.base.clone());
        async move {
            shopper
                .get(format!("{base}/vouchers/{v}"))
                .header("accept-language", lang)
                .send()
                .await
                .expect("page")
                .text()
                .await
                .expect("html")
        }
    };
    let take_back = |v: i64| {
        let (shopper, base) = (shopper.clone(), app.base.clone());
        async move {
            shopper
                .delete(format!("{base}/api/vouchers/{v}/reminder"))
                .send()
                .await
                .expect("send")
        }
    };
    // An hour away, asked for; then a sender holds it (its claim, as the sender writes it).
    let later = app.create(&admin, 3_600, 3_600, 10).await;
    assert_eq!(
        remind(&app, &shopper, later, "en").await.status(),
        StatusCode::CREATED
    );
    sqlx::query(
        "UPDATE reminders SET claimed_until = now() + interval '1 minute' WHERE voucher_id = $1",
    )
    .bind(later)
    .execute(&db)
    .await
    .expect("claim");
    expect_error(
        take_back(later).await,
        StatusCode::CONFLICT,
        "reminder_sending",
    )
    .await;
    let again = remind(&app, &shopper, later, "en").await;
    assert_eq!(again.status(), StatusCode::OK);
    assert_eq!(
        again.json::<Value>().await.expect("json")["state"],
        "sending"
    );
    let html = page(later, "en").await;
    assert!(
        html.contains("data-state=\"sending\"") && !html.contains("remind-cancel"),
        "{html}"
    );
    assert_eq!(settled_state(&db, later).await, "waiting", "still there");

    // Within the lead: the text goes at once, and the page says it went.
    let soon = app.create(&admin, 200, 3_600, 10).await;
    assert_eq!(
        remind(&app, &shopper, soon, "zh-CN").await.status(),
        StatusCode::CREATED
    );
    assert_eq!(taken(&relay, 1).await.len(), 1);
    assert_eq!(settled_state(&db, soon).await, "sent");
    let html = page(soon, "zh-CN").await;
    assert!(
        html.contains("data-state=\"sent\"") && html.contains("已发送提醒短信"),
        "{html}"
    );
    // Nothing waits: taking it back changes nothing, and asking again sends nothing.
    assert_eq!(take_back(soon).await.status(), StatusCode::NO_CONTENT);
    let again = remind(&app, &shopper, soon, "en").await;
    assert_eq!(again.json::<Value>().await.expect("json")["state"], "sent");
    assert_eq!(taken(&relay, 2).await.len(), 1, "one text");
}

#[sqlx::test]
async fn reminders_behind_their_moment_are_said_by_health(db: PgPool) {
    // A relay that fails every attempt: the reminder waits between retries.
    let (url, _relay) = relay(1_000).await;
    let app = shop(db.clone(), &url).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900005200").await;
    let overdue = || async {
        let h: Value = reqwest::get(format!("{}/api/health", app.base))
            .await
            .expect("health")
            .json()
            .await
            .expect("json");
        h["reminders"]["overdue"].clone()
    };
    assert_eq!(overdue().await, json!(0));
    // Opens in 200 s with a lead of 300 s: its moment was 100 s ago.
    let v = app.create(&admin, 200, 3_600, 10).await;
    assert_eq!(
        remind(&app, &shopper, v, "en").await.status(),
        StatusCode::CREATED
    );
    assert_eq!(overdue().await, json!(1));
    // One whose moment is still ahead is not.
    let later = app.create(&admin, 3_600, 3_600, 10).await;
    remind(&app, &shopper, later, "en").await;
    assert_eq!(overdue().await, json!(1));

    // Between two tries the shopper's page says it goes shortly, and it can still be taken back:
    // once its third try failed, the next waits 8 s.
    for _ in 0..300 {
        let (tries, wait): (i32, f64) = sqlx::query_as(
            "SELECT tries, coalesce(extract(epoch FROM next_try_at - now()), 0)::float8
               FROM reminders WHERE voucher_id = $1",
        )
        .bind(v)
        .fetch_one(&db)
        .await
        .expect("tries");
        if tries >= 3 && wait > 4.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let html = shopper
        .get(format!("{}/vouchers/{v}", app.base))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        html.contains("Your text goes out shortly.") && html.contains("remind-cancel"),
        "{html}"
    );
    let r = shopper
        .delete(format!("{}/api/vouchers/{v}/reminder", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    assert_eq!(overdue().await, json!(0), "taken back before it went");
}

async fn home_page(app: &TestApp) -> String {
    reqwest::get(format!("{}/", app.base))
        .await
        .expect("send")
        .text()
        .await
        .expect("html")
}

#[sqlx::test]
async fn a_development_shop_with_no_relay_says_nothing_is_texted(db: PgPool) {
    let app = spawn_app_setting(db, &[]).await;
    let home = home_page(&app).await;
    assert!(
        home.contains("No SMS relay is set: nothing is texted, reminders included."),
        "{home}"
    );
}
