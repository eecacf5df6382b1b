//! Every sale ever run, found by an admin over REST (issue #55): 1,200 sales paged to the oldest
//! by keyset (each once, newest first), one found by a part of its title in Chinese or in any
//! case, `%` and `_` read as typed, filters by stage and start, and each bad parameter named.

use std::collections::HashSet;

use chrono::{DateTime, Duration, Utc};
use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;

use crate::support::{expect_error, get_json, spawn_app, TestApp};

const SALES: i64 = 1_200;

/// `SALES` ended sales, a minute apart, the newest a day ago, plus three to find.
async fn history(db: &PgPool) -> DateTime<Utc> {
    let newest = Utc::now() - Duration::days(1);
    sqlx::query(
        "INSERT INTO vouchers (title, price_cents, initial_stock, stock, begins_at, ends_at)
         SELECT 'Sale ' || n, 500, 10, 10, $1 - n * interval '1 minute', $1 - n * interval '1 minute' + interval '30 seconds'
         FROM generate_series(0, $2 - 1) n",
    )
    .bind(newest)
    .bind(SALES)
    .execute(db)
    .await
    .expect("history");
    for (title, days) in [
        ("Jasmine 茉莉花茶 tin", 400),
        ("50% off tea", 300),
        ("Next week's tea", -7),
    ] {
        sqlx::query(
            "INSERT INTO vouchers (title, price_cents, initial_stock, stock, begins_at, ends_at)
             VALUES ($1, 500, 10, 10, $2, $2 + interval '1 hour')",
        )
        .bind(title)
        .bind(Utc::now() - Duration::days(days))
        .execute(db)
        .await
        .expect("one to find");
    }
    newest
}

async fn found(app: &TestApp, admin: &reqwest::Client, query: &str) -> Value {
    get_json(admin, &format!("{}/api/admin/vouchers?{query}", app.base)).await
}

fn titles(page: &Value) -> Vec<String> {
    page["vouchers"]
        .as_array()
        .expect("vouchers")
        .iter()
        .map(|v| v["title"].as_str().expect("title").to_owned())
        .collect()
}

#[sqlx::test]
async fn an_admin_pages_every_sale_to_the_oldest_and_finds_one_by_title(db: PgPool) {
    let app = spawn_app(db.clone()).await;
    let admin = app.sign_in("13800000000").await;
    history(&db).await;

    // Every sale once, newest first by start, 100 to a page.
    let mut seen = Vec::new();
    let mut cursor = String::new();
    let mut pages = 0;
    loop {
        let page = found(
            &app,
            &admin,
            &format!("status=ended&limit=100&cursor={cursor}"),
        )
        .await;
        pages += 1;
        for v in page["vouchers"].as_array().expect("vouchers") {
            let begins = DateTime::parse_from_rfc3339(v["begins_at"].as_str().expect("begins"))
                .expect("time");
            seen.push((begins, v["id"].as_i64().expect("id")));
        }
        match page["next"].as_str() {
            Some(next) => cursor = next.to_owned(),
            None => break,
        }
    }
    let ended = usize::try_from(SALES + 2).expect("count");
    assert_eq!(seen.len(), ended, "every ended sale, in {pages} pages");
    assert_eq!(
        seen.iter().map(|s| s.1).collect::<HashSet<_>>().len(),
        ended,
        "each once"
    );
    assert!(seen.windows(2).all(|w| w[0] > w[1]), "newest first");
    assert_eq!(pages, 13);

    // A part of the title, in Chinese, or in another case.
    for q in ["%E8%8C%89%E8%8E%89", "JASMINE", "jasmine%20%E8%8C%89"] {
        assert_eq!(
            titles(&found(&app, &admin, &format!("q={q}")).await),
            ["Jasmine 茉莉花茶 tin"],
            "{q}"
        );
    }
    // `%` and `_` are characters, not patterns.
    assert_eq!(
        titles(&found(&app, &admin, "q=50%25").await),
        ["50% off tea"]
    );
    assert!(titles(&found(&app, &admin, "q=_").await).is_empty());
    assert_eq!(
        titles(&found(&app, &admin, "q=tea&status=upcoming").await),
        ["Next week's tea"]
    );
    // The days around it, whatever the shop's zone.
    let day = |d: i64| {
        (Utc::now() - Duration::days(d))
            .format("%Y-%m-%d")
            .to_string()
    };
    let one_day = found(&app, &admin, &format!("from={}&to={}", day(301), day(299))).await;
    assert_eq!(titles(&one_day), ["50% off tea"]);
    assert_eq!(
        found(&app, &admin, "q=nothing+like+it").await["next"],
        Value::Null
    );
}

#[sqlx::test]
async fn a_bad_parameter_is_named_and_only_admins_may_look(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900000003").await;
    for (query, field) in [
        ("status=sold", "status"),
        ("cursor=abc", "cursor"),
        // Instants PostgreSQL would refuse to compare with: the visitor's mistake, not the store's.
        ("cursor=-300000000000000_1", "cursor"),
        ("from=%2B200000-01-01", "from"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("from=yesterday", "from"),
        ("q=a%00b", "q"),
    ] {
        let r = admin
            .get(format!("{}/api/admin/vouchers?{query}", app.base))
            .send()
            .await
            .expect("send");
        let e = expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
        assert!(e["fields"][field].is_string(), "{query}: {e}");
    }
    let r = shopper
        .get(format!("{}/api/admin/vouchers", app.base))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    let r = reqwest::get(format!("{}/api/admin/vouchers", app.base))
        .await
        .expect("send");
    expect_error(r, StatusCode::UNAUTHORIZED, "unauthenticated").await;
}
