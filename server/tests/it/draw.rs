//! A fair opening (issue #33) over real HTTP, on two instances of one deployment: entering in
//! the window, the draw at the start, checking it from the published seed and tags on our own
//! (SHA-256 and HMAC-SHA256 here, not the shop's code), units that come back going down the
//! ranking, and what is left after a short ranking sold first come. Units are counted after
//! each (I1, I2).

use std::time::Duration;

use hmac::{KeyInit, Mac};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sha2::Digest;
use sqlx::PgPool;

use crate::support::{
    buy_order, client, expect_error, spawn_app_setting, spawn_instances, units_hold, user_id,
    written, TestApp,
};

/// Creates a draw sale as `admin`: entries open `entries_in` seconds from now, the draw (the
/// sale's start) `begins_in` seconds from now.
async fn create_draw(
    app: &TestApp,
    admin: &Client,
    entries_in: i64,
    begins_in: i64,
    stock: i64,
) -> i64 {
    let now = chrono::Utc::now();
    let r = admin
        .post(format!("{}/api/admin/vouchers", app.base))
        .json(&json!({
            "title": "Draw voucher", "price_cents": 500, "stock": stock,
            "begins_at": (now + chrono::Duration::seconds(begins_in)).to_rfc3339(),
            "ends_at": (now + chrono::Duration::seconds(begins_in + 3600)).to_rfc3339(),
            "opening": "draw",
            "entries_open_at": (now + chrono::Duration::seconds(entries_in)).to_rfc3339(),
        }))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::CREATED);
    r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id")
}

async fn enter(app: &TestApp, c: &Client, v: i64) -> reqwest::Response {
    c.post(format!("{}/api/vouchers/{v}/entries", app.base))
        .send()
        .await
        .expect("send")
}

async fn standing(app: &TestApp, c: &Client, v: i64) -> Value {
    let r = c
        .get(format!("{}/api/vouchers/{v}/entries/me", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.expect("json")
}

async fn public_draw(app: &TestApp, v: i64) -> Value {
    let r = client()
        .get(format!("{}/api/vouchers/{v}/draw", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.expect("json")
}

/// The draw once recorded (its seed published), waiting up to 15 s.
async fn drawn(app: &TestApp, v: i64) -> Value {
    for _ in 0..300 {
        let d = public_draw(app, v).await;
        if d.get("seed").is_some() {
            return d;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the draw of {v} was not recorded");
}

/// `user`'s tag under `seed`, computed here: HMAC-SHA256(seed, decimal user ID).
fn tag_of(seed: &[u8], user: i64) -> String {
    let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(seed).expect("key");
    mac.update(user.to_string().as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// A state reached within 10 s, as shopper `c` sees it.
async fn until_state(app: &TestApp, c: &Client, v: i64, state: &str) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = standing(app, c, v).await;
        if last["state"] == state {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never {state}: {last}");
}

#[sqlx::test]
async fn the_draw_admits_entrants_by_their_tags_and_anyone_can_check_it(db: PgPool) {
    let apps = spawn_instances(db, 2).await;
    let (a, b) = (&apps[0], &apps[1]);
    let admin = a.sign_in("13800000000").await;
    const STOCK: i64 = 3;
    let v = create_draw(a, &admin, -1, 4, STOCK).await;

    let listed: Value = client()
        .get(format!("{}/api/vouchers/{v}", b.base))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert_eq!(listed["opening"], "draw");
    assert!(listed["entries_open_at"].is_string(), "{listed}");
    let before = public_draw(b, v).await;
    let commitment = before["commitment"]
        .as_str()
        .expect("commitment")
        .to_owned();
    assert_eq!(commitment.len(), 64);
    assert!(before.get("seed").is_none() && before.get("tags").is_none());

    // Eight shoppers enter, half through each instance; one enters twice.
    let mut shoppers = Vec::new();
    for i in 0..8 {
        let app = if i % 2 == 0 { a } else { b };
        let phone = format!("1390000000{i}");
        let c = app.sign_in(&phone).await;
        let r = enter(app, &c, v).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        let body: Value = r.json().await.expect("json");
        let tag = body["tag"].as_str().expect("tag").to_owned();
        shoppers.push((c, user_id(a, &format!("+86{phone}")).await, tag));
    }
    let again = enter(b, &shoppers[0].0, v).await;
    assert_eq!(again.status(), StatusCode::ACCEPTED);
    let again: Value = again.json().await.expect("json");
    assert_eq!(
        again["tag"],
        shoppers[0].2.as_str(),
        "entering again answers the same"
    );
    assert_eq!(again["entrants"], 8);
    assert_eq!(standing(a, &shoppers[3].0, v).await["state"], "entered");
    expect_error(
        client()
            .post(format!("{}/api/vouchers/{v}/entries", a.base))
            .send()
            .await
            .expect("send"),
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    // No buying before the draw, however fast.
    expect_error(
        shoppers[1]
            .0
            .post(format!("{}/api/vouchers/{v}/orders", a.base))
            .send()
            .await
            .expect("send"),
        StatusCode::CONFLICT,
        "draw_pending",
    )
    .await;

    let after = drawn(a, v).await;
    let seed = hex::decode(after["seed"].as_str().expect("seed")).expect("hex");
    assert_eq!(
        hex::encode(sha2::Sha256::digest(&seed)),
        commitment,
        "the seed is the one committed to"
    );
    let tags: Vec<String> = after["tags"]
        .as_array()
        .expect("tags")
        .iter()
        .map(|t| t.as_str().expect("tag").to_owned())
        .collect();
    assert_eq!(after["entrants"], 8);
    assert_eq!(tags.len(), 8);
    assert!(tags.windows(2).all(|w| w[0] < w[1]), "ascending");
    for (_, user, tag) in &shoppers {
        assert_eq!(
            &tag_of(&seed, *user),
            tag,
            "each tag recomputes from the seed"
        );
        assert!(tags.contains(tag));
    }
    // The winners are the lowest tags; each holds an order the worker wrote.
    let rank = |tag: &str| tags.iter().position(|t| t == tag).expect("ranked");
    for (c, _, tag) in &shoppers {
        let r = rank(tag);
        let app = if r % 2 == 0 { a } else { b };
        if (r as i64) < STOCK {
            let s = until_state(app, c, v, "won").await;
            let order = s["order_id"].as_str().expect("order").to_owned();
            assert_eq!(written(app, c, &order).await["status"], "created");
        } else {
            let s = until_state(app, c, v, "lost").await;
            assert_eq!(s["rank"], r as i64);
        }
    }
    let orders: i64 = sqlx::query_scalar("SELECT count(*) FROM orders WHERE voucher_id = $1")
        .bind(v)
        .fetch_one(&a.core.db)
        .await
        .expect("count");
    assert_eq!(orders, STOCK, "one order per unit, across both instances");
    units_hold(a, v, STOCK).await;

    // Entries are closed (to newcomers: an entrant asking again hears the same), and a loser
    // cannot buy their way past the line.
    let loser = shoppers
        .iter()
        .find(|(_, _, t)| rank(t) as i64 == STOCK)
        .expect("first in line");
    let latecomer = b.sign_in("13900000099").await;
    expect_error(
        enter(b, &latecomer, v).await,
        StatusCode::CONFLICT,
        "entries_closed",
    )
    .await;
    expect_error(
        loser
            .0
            .post(format!("{}/api/vouchers/{v}/orders", b.base))
            .send()
            .await
            .expect("send"),
        StatusCode::CONFLICT,
        "sold_out",
    )
    .await;

    // A winner cancels: the unit goes to the first in line, not to whoever clicks.
    let winner = shoppers
        .iter()
        .find(|(_, _, t)| rank(t) == 0)
        .expect("first winner");
    let order = standing(a, &winner.0, v).await["order_id"]
        .as_str()
        .expect("order")
        .to_owned();
    let r = winner
        .0
        .post(format!("{}/api/orders/{order}/cancel", a.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let next = until_state(b, &loser.0, v, "won").await;
    let next_order = next["order_id"].as_str().expect("order").to_owned();
    written(b, &loser.0, &next_order).await;
    let second_in_line = shoppers
        .iter()
        .find(|(_, _, t)| rank(t) as i64 == STOCK + 1)
        .expect("second in line");
    assert_eq!(standing(a, &second_in_line.0, v).await["state"], "lost");
    assert_eq!(
        standing(a, &winner.0, v).await["state"],
        "won",
        "the cancelled winner's order is still the one the draw gave"
    );
    units_hold(a, v, STOCK).await;
}

#[sqlx::test]
async fn units_beyond_the_entrants_sell_first_come_after_the_draw(db: PgPool) {
    let app = spawn_app_setting(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let v = create_draw(&app, &admin, -1, 3, 4).await;
    let mut entrants = Vec::new();
    for i in 0..2 {
        let c = app.sign_in(&format!("1390000001{i}")).await;
        assert_eq!(enter(&app, &c, v).await.status(), StatusCode::ACCEPTED);
        entrants.push(c);
    }
    drawn(&app, v).await;
    for c in &entrants {
        until_state(&app, c, v, "won").await;
    }
    let late = app.sign_in("13900000020").await;
    assert_eq!(standing(&app, &late, v).await["state"], "none");
    let order = buy_order(&app, &late, v).await;
    written(&app, &late, &order).await;
    units_hold(&app, v, 4).await;

    // A published draw is answered from the instance's memory, not read again per request.
    let published = drawn(&app, v).await;
    sqlx::query("DELETE FROM draw_entries WHERE voucher_id = $1")
        .bind(v)
        .execute(&app.core.db)
        .await
        .expect("delete");
    assert_eq!(public_draw(&app, v).await["tags"], published["tags"]);
}

#[sqlx::test]
async fn entries_keep_to_their_window_and_to_the_per_client_limit(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_ENTRIES_PER_CLIENT", "3")]).await;
    let admin = app.sign_in("13800000000").await;
    let later = create_draw(&app, &admin, 3600, 7200, 5).await;
    let c = app.sign_in("13900000030").await;
    expect_error(
        enter(&app, &c, later).await,
        StatusCode::CONFLICT,
        "entries_not_open",
    )
    .await;
    let first_come = app.create(&admin, 60, 3600, 5).await;
    expect_error(
        enter(&app, &c, first_come).await,
        StatusCode::CONFLICT,
        "not_a_draw",
    )
    .await;
    // Three entries a minute from one address (the two refusals above counted), then 429.
    let open = create_draw(&app, &admin, -1, 3600, 5).await;
    assert_eq!(enter(&app, &c, open).await.status(), StatusCode::ACCEPTED);
    let r = enter(&app, &c, open).await;
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "{retry:?}");
    expect_error(
        c.get(format!("{}/api/vouchers/{first_come}/entries/me", app.base))
            .send()
            .await
            .expect("send"),
        StatusCode::CONFLICT,
        "not_a_draw",
    )
    .await;
    expect_error(
        client()
            .get(format!("{}/api/vouchers/999999/draw", app.base))
            .send()
            .await
            .expect("send"),
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // A draw sale ended before its start never draws: its entrant learns they did not win.
    let r = admin
        .post(format!("{}/api/admin/vouchers/{open}/end", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    let s = standing(&app, &c, open).await;
    assert_eq!(s["state"], "lost", "{s}");
    assert!(s.get("rank").is_none(), "{s}");

    // The admin's mistakes are field messages.
    let now = chrono::Utc::now();
    let r = admin
        .post(format!("{}/api/admin/vouchers", app.base))
        .json(&json!({
            "title": "Bad draw", "price_cents": 1, "stock": 1,
            "begins_at": (now + chrono::Duration::hours(1)).to_rfc3339(),
            "ends_at": (now + chrono::Duration::hours(2)).to_rfc3339(),
            "opening": "draw",
            "entries_open_at": (now + chrono::Duration::hours(1)).to_rfc3339(),
        }))
        .send()
        .await
        .expect("send");
    let body = expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
    assert!(body.to_string().contains("entries_open_at"), "{body}");
    let r = admin
        .post(format!("{}/api/admin/vouchers", app.base))
        .json(&json!({
            "title": "Bad opening", "price_cents": 1, "stock": 1,
            "begins_at": (now + chrono::Duration::hours(1)).to_rfc3339(),
            "ends_at": (now + chrono::Duration::hours(2)).to_rfc3339(),
            "opening": "raffle",
        }))
        .send()
        .await
        .expect("send");
    let body = expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
    assert!(body.to_string().contains("opening"), "{body}");
}
