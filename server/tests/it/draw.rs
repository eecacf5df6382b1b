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
    buy_order, client, expect_error, get_json, html, spawn_app_setting, spawn_instances,
    units_hold, user_id, written, TestApp,
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
    let r = app
        .create_voucher(
            admin,
            &json!({
                "title": "Draw voucher", "price_cents": 500, "stock": stock,
                "begins_at": (now + chrono::Duration::seconds(begins_in)).to_rfc3339(),
                "ends_at": (now + chrono::Duration::seconds(begins_in + 3600)).to_rfc3339(),
                "opening": "draw",
                "entries_open_at": (now + chrono::Duration::seconds(entries_in)).to_rfc3339(),
            }),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id")
}

async fn standing(app: &TestApp, c: &Client, v: i64) -> Value {
    let r = app.my_entry(c, v).await;
    assert_eq!(r.status(), StatusCode::OK);
    r.json().await.expect("json")
}

async fn public_draw(app: &TestApp, v: i64) -> Value {
    let r = app.draw(&client(), v).await;
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

fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().expect("hex text")).expect("hex")
}

/// A leaf's key under `seed`, computed here: HMAC-SHA256(seed, leaf).
fn key_of(seed: &[u8], leaf: &[u8]) -> Vec<u8> {
    let mut mac = <hmac::Hmac<sha2::Sha256> as KeyInit>::new_from_slice(seed).expect("key");
    mac.update(leaf);
    mac.finalize().into_bytes().to_vec()
}

/// RFC 9162's Merkle tree hash, written here from the RFC.
fn mth(leaves: &[Vec<u8>]) -> [u8; 32] {
    match leaves {
        [] => sha256(&[]),
        [one] => sha256(&[&[0], one]),
        _ => {
            let mut k = 1;
            while k * 2 < leaves.len() {
                k *= 2;
            }
            sha256(&[&[1], &mth(&leaves[..k]), &mth(&leaves[k..])])
        }
    }
}

/// RFC 9162 §2.1.3.2, written here from the RFC.
fn proves(leaf: &[u8], index: u64, size: u64, path: &[Vec<u8>], root: &[u8]) -> bool {
    if index >= size {
        return false;
    }
    let (mut f, mut s) = (index, size - 1);
    let mut r = sha256(&[&[0], leaf]);
    for p in path {
        if s == 0 {
            return false;
        }
        if f % 2 == 1 || f == s {
            r = sha256(&[&[1], p, &r]);
            while f % 2 == 0 && f != 0 {
                f >>= 1;
                s >>= 1;
            }
        } else {
            r = sha256(&[&[1], &r, p]);
        }
        f >>= 1;
        s >>= 1;
    }
    s == 0 && r.as_slice() == root
}

/// The transcript's moves once `n` are recorded (within 10 s: the draws job records each pass).
async fn recorded_moves(app: &TestApp, v: i64, n: usize) -> Value {
    let mut last = Value::Null;
    for _ in 0..200 {
        last = public_draw(app, v).await["moves"].clone();
        if last.as_array().map(Vec::len) == Some(n) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("never {n} moves: {last}");
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
async fn the_draw_admits_entrants_by_their_keys_and_anyone_can_check_it(db: PgPool) {
    let apps = spawn_instances(db, 2).await;
    let (a, b) = (&apps[0], &apps[1]);
    let admin = a.sign_in("13800000000").await;
    const STOCK: i64 = 3;
    let v = create_draw(a, &admin, -1, 4, STOCK).await;

    let listed: Value = b.voucher(&client(), v).await.json().await.expect("json");
    assert_eq!(listed["opening"], "draw");
    assert!(listed["entries_open_at"].is_string(), "{listed}");
    let before = public_draw(b, v).await;
    let commitment = before["commitment"]
        .as_str()
        .expect("commitment")
        .to_owned();
    assert_eq!(commitment.len(), 64);
    for hidden in [
        "seed",
        "committed_seed",
        "entries_root",
        "leaves",
        "ranking",
    ] {
        assert!(
            before.get(hidden).is_none(),
            "{hidden} before the close: {before}"
        );
    }
    // The key receipts are signed with, the same on both instances.
    let key_of_shop = |app: &TestApp| {
        let url = format!("{}/api/draws/key", app.base);
        async move { get_json(&client(), &url).await["ed25519"].clone() }
    };
    let shop_key = key_of_shop(a).await;
    assert_eq!(shop_key, key_of_shop(b).await);
    // The transcript names it from the sale's creation, with its id (8 bytes of its SHA-256).
    assert_eq!(before["receipt_key"]["ed25519"], shop_key);
    let key_id = hex::encode(&sha256(&[&unhex(&shop_key)])[..8]);
    assert_eq!(before["receipt_key"]["id"], key_id.as_str());
    // What every receipt covers beside its leaf: the terms fixed at creation.
    let round = before["beacon"]["round"]
        .as_u64()
        .map_or("-".to_owned(), |r| r.to_string());
    let closes_ms =
        chrono::DateTime::parse_from_rfc3339(before["closes_at"].as_str().expect("close"))
            .expect("a time")
            .timestamp_millis();
    let shop_key: [u8; 32] = unhex(&shop_key).try_into().expect("32 bytes");
    let shop_key = ed25519_dalek::VerifyingKey::from_bytes(&shop_key).expect("a key");

    // Eight shoppers enter, half through each instance; one enters twice.
    let mut shoppers = Vec::new();
    for i in 0..8 {
        let app = if i % 2 == 0 { a } else { b };
        let phone = format!("1390000000{i}");
        let c = app.sign_in(&phone).await;
        let r = app.enter(&c, v).await;
        assert_eq!(r.status(), StatusCode::ACCEPTED);
        let body: Value = r.json().await.expect("json");
        let receipt = body["receipt"].clone();
        let user = user_id(a, &format!("+86{phone}")).await;
        // The receipt is the shop's word: its leaf is this shopper's, signed by the shop.
        assert_eq!(receipt["voucher_id"], v);
        let leaf = unhex(&receipt["leaf"]);
        let salt = receipt["salt"].as_str().expect("salt");
        assert_eq!(salt.len(), 32, "16 bytes");
        assert_eq!(leaf, sha256(&[format!("{v}:{user}:{salt}").as_bytes()]));
        let signature: [u8; 64] = unhex(&receipt["signature"]).try_into().expect("64 bytes");
        assert_eq!(receipt["key_id"], key_id.as_str());
        let message = format!(
            "seckill-receipt-v2:{v}:{}:{commitment}:{round}:{closes_ms}",
            hex::encode(&leaf)
        );
        shop_key
            .verify_strict(
                message.as_bytes(),
                &ed25519_dalek::Signature::from_bytes(&signature),
            )
            .expect("the receipt verifies with the published key");
        assert!(
            body.get("tag").is_none() && body.get("rank").is_none(),
            "no rank before the draw"
        );
        shoppers.push((c, user, leaf, receipt));
    }
    let again = b.enter(&shoppers[0].0, v).await;
    assert_eq!(again.status(), StatusCode::ACCEPTED);
    let again: Value = again.json().await.expect("json");
    assert_eq!(
        again["receipt"], shoppers[0].3,
        "entering again answers the same receipt"
    );
    assert_eq!(again["entrants"], 8);
    assert_eq!(standing(a, &shoppers[3].0, v).await["state"], "entered");
    expect_error(
        a.enter(&client(), v).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    // No buying before the draw, however fast.
    expect_error(
        a.buy(&shoppers[1].0, v).await,
        StatusCode::CONFLICT,
        "draw_pending",
    )
    .await;

    let after = drawn(a, v).await;
    // The committed secret is the one committed to, and the list is the entrants'.
    let committed = unhex(&after["committed_seed"]);
    assert_eq!(hex::encode(sha256(&[&committed])), commitment);
    let leaves: Vec<Vec<u8>> = after["leaves"]
        .as_array()
        .expect("leaves")
        .iter()
        .map(unhex)
        .collect();
    assert_eq!(after["entrants"], 8);
    assert_eq!(leaves.len(), 8);
    assert!(leaves.windows(2).all(|w| w[0] < w[1]), "ascending");
    let root = mth(&leaves);
    assert_eq!(
        hex::encode(root),
        after["entries_root"],
        "the root recomputes"
    );
    // No beacon on these instances: the randomness is empty, and the seed recomputes.
    assert_eq!(after["randomness"], "");
    let seed = sha256(&[format!(
        "seckill-draw-v1:{v}:{}:{}:",
        hex::encode(&committed),
        hex::encode(root)
    )
    .as_bytes()]);
    assert_eq!(hex::encode(seed), after["seed"]);
    // The ranking is the leaves by their keys, and the winners its first `stock`.
    let mut ranked: Vec<(Vec<u8>, Vec<u8>)> = leaves
        .iter()
        .map(|l| (key_of(&seed, l), l.clone()))
        .collect();
    ranked.sort();
    let published: Vec<(Value, Value, Value)> = after["ranking"]
        .as_array()
        .expect("ranking")
        .iter()
        .map(|r| (r["rank"].clone(), r["leaf"].clone(), r["key"].clone()))
        .collect();
    let expected: Vec<(Value, Value, Value)> = ranked
        .iter()
        .enumerate()
        .map(|(i, (k, l))| (json!(i + 1), json!(hex::encode(l)), json!(hex::encode(k))))
        .collect();
    assert_eq!(published, expected, "the ranking recomputes from the seed");
    let winners: Vec<Value> = ranked[..STOCK as usize]
        .iter()
        .map(|(_, l)| json!(hex::encode(l)))
        .collect();
    assert_eq!(after["winners"], json!(winners));
    assert_eq!(after["stock"], STOCK);
    assert_eq!(after["moves"], json!([]));

    // Each shopper: their leaf's proof against the root, their rank, their order.
    let rank = |leaf: &[u8]| ranked.iter().position(|(_, l)| l == leaf).expect("ranked");
    for (c, _, leaf, receipt) in &shoppers {
        let r = rank(leaf);
        let app = if r % 2 == 0 { a } else { b };
        let s = if (r as i64) < STOCK {
            let s = until_state(app, c, v, "won").await;
            let order = s["order_id"].as_str().expect("order").to_owned();
            assert_eq!(written(app, c, &order).await["status"], "created");
            s
        } else {
            until_state(app, c, v, "lost").await
        };
        assert_eq!(s["rank"], r as i64 + 1, "rank counted from 1");
        assert_eq!(&s["receipt"], receipt);
        let proof = &s["proof"];
        let path: Vec<Vec<u8>> = proof["path"]
            .as_array()
            .expect("path")
            .iter()
            .map(unhex)
            .collect();
        assert!(proves(
            leaf,
            proof["index"].as_u64().expect("index"),
            proof["tree_size"].as_u64().expect("size"),
            &path,
            &root
        ));
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
    let in_line = |n: usize| {
        shoppers
            .iter()
            .find(|(_, _, l, _)| rank(l) == n)
            .expect("ranked")
    };
    let loser = in_line(STOCK as usize);
    let latecomer = b.sign_in("13900000099").await;
    expect_error(
        b.enter(&latecomer, v).await,
        StatusCode::CONFLICT,
        "entries_closed",
    )
    .await;
    expect_error(b.buy(&loser.0, v).await, StatusCode::CONFLICT, "sold_out").await;

    // A winner cancels: the unit goes to the first in line, not to whoever clicks, and the
    // transcript shows the move, chained from the seed.
    let winner = in_line(0);
    let order = standing(a, &winner.0, v).await["order_id"]
        .as_str()
        .expect("order")
        .to_owned();
    let r = a.cancel(&winner.0, order).await;
    assert_eq!(r.status(), StatusCode::OK);
    let next = until_state(b, &loser.0, v, "won").await;
    let next_order = next["order_id"].as_str().expect("order").to_owned();
    written(b, &loser.0, &next_order).await;
    // Recorded once its order is written (the draws job's next pass), then never recomputed.
    let moves = recorded_moves(b, v, 1).await;
    let chained =
        sha256(&[format!("{}:{}:cancelled", hex::encode(seed), hex::encode(&loser.2)).as_bytes()]);
    assert_eq!(moves.as_array().map(Vec::len), Some(1), "{moves}");
    assert_eq!(moves[0]["leaf"], hex::encode(&loser.2));
    assert_eq!(moves[0]["reason"], "cancelled");
    assert_eq!(moves[0]["hash"], hex::encode(chained));
    assert!(moves[0]["recorded_at"].is_string(), "{moves}");
    // The shopper the move reached sees it with their standing.
    let moved = standing(a, &loser.0, v).await["moved"].clone();
    assert_eq!(moved["seq"], 1);
    assert_eq!(moved["reason"], "cancelled");
    assert_eq!(moved["hash"], hex::encode(chained));
    // The record is the shop's word at the time: orders rewritten since change nothing of it.
    sqlx::query("UPDATE orders SET cancelled_by = 'shop' WHERE voucher_id = $1")
        .bind(v)
        .execute(&a.core.db)
        .await
        .expect("rewrite");
    assert_eq!(public_draw(a, v).await["moves"], moves);
    assert_eq!(
        standing(a, &in_line(STOCK as usize + 1).0, v).await["state"],
        "lost"
    );
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
        assert_eq!(app.enter(&c, v).await.status(), StatusCode::ACCEPTED);
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
    assert_eq!(public_draw(&app, v).await["ranking"], published["ranking"]);
}

#[sqlx::test]
async fn entries_keep_to_their_window_and_to_the_per_client_limit(db: PgPool) {
    let app = spawn_app_setting(db, &[("SECKILL_ENTRIES_PER_CLIENT", "3")]).await;
    let admin = app.sign_in("13800000000").await;
    let later = create_draw(&app, &admin, 3600, 7200, 5).await;
    let c = app.sign_in("13900000030").await;
    expect_error(
        app.enter(&c, later).await,
        StatusCode::CONFLICT,
        "entries_not_open",
    )
    .await;
    let first_come = app.create(&admin, 60, 3600, 5).await;
    expect_error(
        app.enter(&c, first_come).await,
        StatusCode::CONFLICT,
        "not_a_draw",
    )
    .await;
    // Three entries a minute from one address (the two refusals above counted), then 429.
    let open = create_draw(&app, &admin, -1, 3600, 5).await;
    assert_eq!(app.enter(&c, open).await.status(), StatusCode::ACCEPTED);
    let r = app.enter(&c, open).await;
    let retry = r
        .headers()
        .get("retry-after")
        .and_then(|h| h.to_str().ok())
        .and_then(|s| s.parse::<u64>().ok());
    expect_error(r, StatusCode::TOO_MANY_REQUESTS, "rate_limited").await;
    assert!(retry.is_some_and(|s| (1..=60).contains(&s)), "{retry:?}");
    expect_error(
        app.my_entry(&c, first_come).await,
        StatusCode::CONFLICT,
        "not_a_draw",
    )
    .await;
    expect_error(
        app.draw(&client(), 999999).await,
        StatusCode::NOT_FOUND,
        "not_found",
    )
    .await;

    // A draw sale ended before its start never draws: its entrant learns they did not win.
    let r = app.end_sale(&admin, open).await;
    assert_eq!(r.status(), StatusCode::OK);
    let s = standing(&app, &c, open).await;
    assert_eq!(s["state"], "lost", "{s}");
    assert!(s.get("rank").is_none(), "{s}");
    // Their sale page says so, and not "Not this time": no draw ran for them to lose.
    let page = html(&c, &format!("{}/vouchers/{open}", app.base)).await;
    assert!(page.contains("The sale ended before its draw."), "{page}");
    assert!(!page.contains("Not this time"), "{page}");
    // And its committed secret is revealed: nothing was drawn with it.
    let t = public_draw(&app, open).await;
    assert_eq!(
        hex::encode(sha256(&[&unhex(&t["committed_seed"])])),
        t["commitment"],
        "{t}"
    );

    // The admin's mistakes are field messages.
    let now = chrono::Utc::now();
    let r = app
        .create_voucher(
            &admin,
            &json!({
                "title": "Bad draw", "price_cents": 1, "stock": 1,
                "begins_at": (now + chrono::Duration::hours(1)).to_rfc3339(),
                "ends_at": (now + chrono::Duration::hours(2)).to_rfc3339(),
                "opening": "draw",
                "entries_open_at": (now + chrono::Duration::hours(1)).to_rfc3339(),
            }),
        )
        .await;
    let body = expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
    assert!(body.to_string().contains("entries_open_at"), "{body}");
    let r = app
        .create_voucher(
            &admin,
            &json!({
                "title": "Bad opening", "price_cents": 1, "stock": 1,
                "begins_at": (now + chrono::Duration::hours(1)).to_rfc3339(),
                "ends_at": (now + chrono::Duration::hours(2)).to_rfc3339(),
                "opening": "raffle",
            }),
        )
        .await;
    let body = expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
    assert!(body.to_string().contains("opening"), "{body}");
}

#[sqlx::test]
async fn the_check_page_of_a_draw_ended_before_its_start_says_no_draw_ran(db: PgPool) {
    let app = spawn_app_setting(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let v = create_draw(&app, &admin, 600, 1_200, 2).await;
    assert_eq!(app.end_sale(&admin, v).await.status(), StatusCode::OK);
    // As read before any script runs (or with scripts off).
    let page = client()
        .get(format!("{}/vouchers/{v}/draw", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.expect("body");
    assert!(page.contains("no draw ran"), "{page}");
    assert!(
        !page.contains("Not drawn yet"),
        "never 'not yet' for a draw that will not run"
    );
}
