//! The books out (issue #55): the orders and payments of a period as CSV that adds up to the
//! console's figures, an admin's alone, with clear refusals for bad bounds.

use super::*;
use reqwest::header;

/// A CSV body as RFC 4180 reads it: rows of fields (quoted fields may hold commas, doubled
/// quotes and line breaks); every row ends with CRLF.
fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\r') => {
                assert_eq!(chars.next(), Some('\n'), "a row ends with CRLF");
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(
        row.is_empty() && field.is_empty(),
        "the last row ends with CRLF"
    );
    rows
}

/// The rows of an export as maps from column to value (after checking the header).
fn records(
    rows: &[Vec<String>],
    columns: &[&str],
) -> Vec<std::collections::HashMap<String, String>> {
    assert_eq!(
        rows.first().map(Vec::as_slice),
        Some(&columns.iter().map(|c| c.to_string()).collect::<Vec<_>>()[..])
    );
    rows[1..]
        .iter()
        .map(|r| {
            assert_eq!(r.len(), columns.len(), "{r:?}");
            columns
                .iter()
                .map(|c| c.to_string())
                .zip(r.iter().cloned())
                .collect()
        })
        .collect()
}

async fn export(c: &Client, app: &TestApp, what: &str, from: &str, to: &str) -> reqwest::Response {
    let q = |t: &str| t.replace('+', "%2B");
    c.get(format!(
        "{}/api/admin/{what}.csv?from={}&to={}",
        app.base,
        q(from),
        q(to)
    ))
    .send()
    .await
    .expect("export")
}

#[sqlx::test]
async fn the_books_of_a_period_come_out_as_csv_that_adds_up_to_the_console(db: PgPool) {
    let (app, fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    // A title someone typed: a formula, quotes, a comma and Chinese.
    let title = "=SUM(1,2) \"秒杀\", 特价";
    let now = chrono::Utc::now();
    let r = app
        .create_voucher(
            &admin,
            &json!({
                "title": title, "description": "", "price_cents": 990, "stock": 5,
                "begins_at": (now - chrono::Duration::seconds(5)).to_rfc3339(),
                "ends_at": (now + chrono::Duration::seconds(3600)).to_rfc3339(),
            }),
        )
        .await;
    assert_eq!(r.status(), StatusCode::CREATED);
    let v = r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id");
    let (a, paid) = written_order(&app, v, "13900000301").await;
    let (b, unpaid) = written_order(&app, v, "13900000302").await;
    let (_c, untouched) = written_order(&app, v, "13900000303").await;
    let session = open_session(&app, &a, &paid, &fake).await;
    fake.pay(&session).await.expect("paid");
    payment_reaches(&app, &session, "paid").await;
    let open = open_session(&app, &b, &unpaid, &fake).await;

    // The period around now, one bound with an offset (its `+` encoded).
    let (from, to) = (
        (now - chrono::Duration::hours(1)).to_rfc3339(),
        (now + chrono::Duration::hours(1))
            .with_timezone(&chrono::FixedOffset::east_opt(8 * 3600).expect("+08:00"))
            .to_rfc3339(),
    );
    assert!(to.contains("+08:00"), "{to}");
    let r = export(&admin, &app, "orders", &from, &to).await;
    assert_eq!(r.status(), StatusCode::OK);
    let h = r.headers().clone();
    assert_eq!(
        h[header::CONTENT_TYPE],
        "text/csv; charset=utf-8; header=present"
    );
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    let disposition = h[header::CONTENT_DISPOSITION].to_str().expect("ascii");
    assert!(
        disposition.starts_with("attachment; filename=\"orders-"),
        "{disposition}"
    );
    let orders = records(
        &parse_csv(&r.text().await.expect("body")),
        seckill::books::ORDER_COLUMNS,
    );
    assert_eq!(orders.len(), 3, "{orders:?}");
    let row = |id: &str| {
        orders
            .iter()
            .find(|o| o["order_id"] == id)
            .unwrap_or_else(|| panic!("order {id} in {orders:?}"))
    };
    for id in [&paid, &unpaid, &untouched] {
        let o = row(id);
        assert_eq!(o["voucher_id"], v.to_string());
        // The typed title reads as text, never as a formula.
        assert_eq!(o["voucher_title"], format!("'{title}"));
        assert_eq!(
            (
                o["price_minor"].as_str(),
                o["price"].as_str(),
                o["currency"].as_str()
            ),
            ("990", "9.90", "cny")
        );
    }
    assert_eq!(
        (
            row(&paid)["status"].as_str(),
            row(&paid)["payment_state"].as_str()
        ),
        ("paid", "paid")
    );
    assert!(!row(&paid)["paid_at"].is_empty());
    assert_eq!(
        (
            row(&unpaid)["status"].as_str(),
            row(&unpaid)["payment_state"].as_str()
        ),
        ("created", "open")
    );
    assert_eq!(row(&untouched)["payment_state"], "");
    // Oldest first.
    let admitted: Vec<&str> = orders.iter().map(|o| o["admitted_at"].as_str()).collect();
    assert!(admitted.windows(2).all(|w| w[0] <= w[1]), "{admitted:?}");

    let r = export(&admin, &app, "payments", &from, &to).await;
    assert_eq!(r.status(), StatusCode::OK);
    let payments = records(
        &parse_csv(&r.text().await.expect("body")),
        seckill::books::PAYMENT_COLUMNS,
    );
    assert_eq!(payments.len(), 2, "{payments:?}");
    let by_id = |id: &str| {
        payments
            .iter()
            .find(|p| p["payment_id"] == id)
            .unwrap_or_else(|| panic!("payment {id}"))
    };
    assert_eq!(
        (
            by_id(&session)["state"].as_str(),
            by_id(&session)["order_id"].as_str()
        ),
        ("paid", paid.as_str())
    );
    assert_eq!(
        (
            by_id(&open)["state"].as_str(),
            by_id(&open)["amount"].as_str()
        ),
        ("open", "9.90")
    );

    // What the console counts, the files add up to.
    let counts = console_row(&app, v).await.counts;
    assert_eq!(orders.len() as i64, counts.written);
    let paid_orders = orders.iter().filter(|o| o["status"] == "paid").count() as i64;
    assert_eq!(paid_orders, counts.paid);
    let revenue: i64 = payments
        .iter()
        .filter(|p| p["state"] == "paid")
        .map(|p| p["amount_minor"].parse::<i64>().expect("minor units"))
        .sum();
    assert_eq!(revenue, counts.revenue_cents);

    // Compressed when asked, as it streams: the same file.
    let r = admin
        .get(format!(
            "{}/api/admin/orders.csv?from={}&to={}",
            app.base,
            from.replace('+', "%2B"),
            to.replace('+', "%2B")
        ))
        .header(header::ACCEPT_ENCODING, "gzip")
        .send()
        .await
        .expect("export");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
    let zipped = r.bytes().await.expect("body");
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&zipped[..]), &mut text)
        .expect("gzip");
    assert_eq!(
        records(&parse_csv(&text), seckill::books::ORDER_COLUMNS).len(),
        3
    );

    // A period before any of it: the header alone.
    let earlier = (now - chrono::Duration::hours(3)).to_rfc3339();
    let r = export(&admin, &app, "orders", &earlier, &from).await;
    assert_eq!(parse_csv(&r.text().await.expect("body")).len(), 1);
}

#[sqlx::test]
async fn the_books_are_an_admins_and_bad_bounds_are_named(db: PgPool) {
    let (app, _fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let shopper = app.sign_in("13900000310").await;
    let (from, to) = ("2026-11-01T00:00:00+08:00", "2026-12-01T00:00:00+08:00");
    for what in ["orders", "payments"] {
        expect_error(
            export(&shopper, &app, what, from, to).await,
            StatusCode::FORBIDDEN,
            "forbidden",
        )
        .await;
        expect_error(
            export(&crate::support::client(), &app, what, from, to).await,
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
        )
        .await;
        for (f, t, fields) in [
            ("", "", vec!["from", "to"]),
            ("Nov 1", to, vec!["from"]),
            ("2026-11-31", "2026-12-01", vec!["from"]),
            ("2026-11-02", "2026-11-01", vec!["to"]),
            (to, from, vec!["to"]),
        ] {
            let body = expect_error(
                export(&admin, &app, what, f, t).await,
                StatusCode::BAD_REQUEST,
                "invalid",
            )
            .await;
            let named: Vec<&String> = body["fields"].as_object().expect("fields").keys().collect();
            assert_eq!(named, fields, "{body}");
        }
        // A `+` left unencoded is a space: the bound is malformed, and said so.
        let r = admin
            .get(format!(
                "{}/api/admin/{what}.csv?from={from}&to={to}",
                app.base
            ))
            .send()
            .await
            .expect("export");
        expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
    }
}

#[sqlx::test]
async fn the_admins_actions_are_read_from_their_table_newest_first_a_page_at_a_time(db: PgPool) {
    let (app, _fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 5).await;
    let end = admin
        .post(format!("{}/api/admin/vouchers/{v}/end", app.base))
        .send()
        .await
        .expect("end");
    assert_eq!(end.status(), StatusCode::OK);
    // Refused: the sale has ended.
    let add = admin
        .post(format!("{}/api/admin/vouchers/{v}/stock", app.base))
        .json(&json!({"add": 3}))
        .send()
        .await
        .expect("add");
    assert_eq!(add.status(), StatusCode::FORBIDDEN);
    for _ in 0..50 {
        let r = export(&admin, &app, "orders", "2026-11-01", "2026-11-30").await;
        assert_eq!(r.status(), StatusCode::OK);
    }
    let page = |before: Option<i64>| {
        let url = match before {
            Some(b) => format!("{}/api/admin/actions?before={b}", app.base),
            None => format!("{}/api/admin/actions", app.base),
        };
        let admin = admin.clone();
        async move { get_json(&admin, &url).await }
    };
    let first = page(None).await;
    let actions = first["actions"].as_array().expect("actions");
    assert_eq!(actions.len(), 50, "{first}");
    assert!(actions
        .iter()
        .all(|a| a["action"] == "export orders" && a["outcome"] == "done"));
    let ids: Vec<i64> = actions
        .iter()
        .map(|a| a["id"].as_i64().expect("id"))
        .collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    let next = first["next"].as_i64().expect("an older page");
    let second = page(Some(next)).await;
    let older: Vec<(&str, &str)> = second["actions"]
        .as_array()
        .expect("actions")
        .iter()
        .map(|a| {
            (
                a["action"].as_str().unwrap_or(""),
                a["outcome"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        older,
        [
            ("add stock", "refused"),
            ("end sale", "done"),
            ("create voucher", "done")
        ]
    );
    assert_eq!(second["next"], Value::Null);
    let refused = &second["actions"][0];
    assert_eq!(refused["target"], format!("{v} +3"));
    assert_eq!(refused["code"], "ended");
    assert_eq!(refused["refusal"], "the sale has ended");
    assert_eq!(refused["actor_phone"], "+*********0000");
    assert_eq!(
        refused["actor_id"].as_i64(),
        Some(crate::support::user_id(&app, "+8613800000000").await)
    );

    // The admins' page says the same in words, the older page behind a link.
    let html = admin
        .get(format!("{}/admin/actions?before={next}", app.base))
        .header(reqwest::header::ACCEPT_LANGUAGE, "zh-CN")
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert_eq!(
        html.matches("data-testid=\"action-row\"").count(),
        3,
        "{html}"
    );
    assert!(
        html.contains("结束活动") && html.contains("被拒绝：抢购已结束。"),
        "{html}"
    );

    // A shopper reads none of it; a cursor that is no ID is named.
    let shopper = app.sign_in("13900000330").await;
    let r = shopper
        .get(format!("{}/api/admin/actions", app.base))
        .send()
        .await
        .expect("actions");
    expect_error(r, StatusCode::FORBIDDEN, "forbidden").await;
    let r = admin
        .get(format!("{}/api/admin/actions?before=abc", app.base))
        .send()
        .await
        .expect("actions");
    expect_error(r, StatusCode::BAD_REQUEST, "invalid").await;
}

#[sqlx::test]
async fn an_action_the_shop_could_not_finish_is_recorded_as_failed_not_refused(db: PgPool) {
    let (app, _fake) = shop(db, &[]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 5).await;
    // Another instance holds the sale's lock for as long as the change waits (10 s).
    let held = app
        .core
        .locks
        .try_acquire(&format!("preload:{v}"), std::time::Duration::from_secs(5))
        .await
        .expect("lock")
        .expect("free");
    let add = admin
        .post(format!("{}/api/admin/vouchers/{v}/stock", app.base))
        .json(&json!({"add": 3}))
        .send()
        .await
        .expect("add");
    expect_error(add, StatusCode::SERVICE_UNAVAILABLE, "unavailable").await;
    held.finish("the test's hold").await;

    let actions = get_json(&admin, &format!("{}/api/admin/actions", app.base)).await;
    let failed = &actions["actions"][0];
    assert_eq!(failed["action"], "add stock", "{actions}");
    assert_eq!(failed["outcome"], "failed");
    assert_eq!(failed["code"], Value::Null);
    // The page says it was not finished, in the reader's language, and not why in English.
    for (lang, words) in [("en", "Not finished"), ("zh-CN", "未完成")] {
        let html = admin
            .get(format!("{}/admin/actions", app.base))
            .header(reqwest::header::ACCEPT_LANGUAGE, lang)
            .send()
            .await
            .expect("page")
            .text()
            .await
            .expect("html");
        assert!(html.contains(words), "{lang}: {html}");
        assert!(
            !html.contains("Refused") && !html.contains("被拒绝"),
            "{lang}: {html}"
        );
    }
}
