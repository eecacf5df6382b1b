//! The shop in Chinese and English (design.md decision 44), over real HTTP: the browser's
//! `Accept-Language` chooses at first, the switch link's cookie after it; every page a shopper
//! or an admin opens in Chinese says `lang="zh-CN"` and has no English left in it; the shared
//! renderings are kept per language; API errors keep their codes and speak the request's
//! language; times are the shop's (Beijing) time.

use std::collections::BTreeSet;

use reqwest::{header, Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{buy_order, client, expect_error, spawn_app, written, TestApp};

/// Words a Chinese page may hold in Latin letters: names, standards, units.
const LATIN_OK: &[&str] = &[
    "Seckill",
    "UTC",
    "SHA",
    "HMAC",
    "RFC",
    "CSV",
    "Merkle",
    "drand",
    "BLS",
    "README",
    "Checking",
    "draw",
    "English",
    "Redis",
    "PostgreSQL",
    "leaf",
    "node",
    "left",
    "right",
];

/// A client whose visitor chose Chinese with the switch link (the cookie it sets).
async fn chinese(app: &TestApp) -> Client {
    let c = client();
    let r = c
        .get(format!("{}/lang?to=zh-CN&next=/orders", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[header::LOCATION], "/orders");
    let cookie = r.headers()[header::SET_COOKIE].to_str().expect("ascii");
    assert!(cookie.starts_with("seckill_lang=zh-CN;"), "{cookie}");
    c
}

/// The words a person reads on a page: its text and its labels (`aria-label`, `title`),
/// without scripts, styles and code.
fn readable(html: &str) -> String {
    let mut text = html.to_owned();
    for (open, close) in [
        ("<script", "</script>"),
        ("<style", "</style>"),
        ("<code", "</code>"),
        ("<noscript", "</noscript>"),
        ("<!--", "-->"),
    ] {
        while let Some(a) = text.find(open) {
            let b = text[a..]
                .find(close)
                .map_or(text.len(), |b| a + b + close.len());
            text.replace_range(a..b, " ");
        }
    }
    let mut out = String::new();
    for attr in ["aria-label=\"", "title=\"", "placeholder=\""] {
        for (i, _) in text.match_indices(attr) {
            let rest = &text[i + attr.len()..];
            out.push_str(&rest[..rest.find('"').unwrap_or(0)]);
            out.push(' ');
        }
    }
    let mut in_tag = false;
    for ch in text.chars() {
        match ch {
            '<' => in_tag = true,
            '>' => {
                in_tag = false;
                out.push(' ');
            }
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

/// The Latin words of `page` that are not names: English left untranslated.
pub(crate) fn english_in(page: &str) -> BTreeSet<String> {
    readable(page)
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|w| w.len() >= 3 && !LATIN_OK.contains(w))
        .map(str::to_owned)
        .collect()
}

async fn page(c: &Client, url: &str, status: StatusCode) -> String {
    let r = c.get(url).send().await.expect("send");
    assert_eq!(r.status(), status, "{url}");
    r.text().await.expect("body")
}

/// Every page in Chinese: `lang="zh-CN"`, Beijing time named, no English word left.
async fn all_chinese(c: &Client, app: &TestApp, paths: &[String], status: StatusCode) {
    for path in paths {
        let body = page(c, &format!("{}{path}", app.base), status).await;
        assert!(body.contains(r#"<html lang="zh-CN""#), "{path}: not zh-CN");
        assert!(body.contains("北京时间"), "{path}: the zone is not named");
        let left = english_in(&body);
        assert!(left.is_empty(), "{path}: English left: {left:?}");
    }
}

/// A voucher titled in Chinese (the page's own words are what is checked).
async fn chinese_voucher(app: &TestApp, admin: &Client, body: Value) -> i64 {
    let mut sale = json!({
        "title": "双十一满减券", "description": "全场通用", "price_cents": 990, "stock": 5,
    });
    for (k, v) in body.as_object().expect("object") {
        sale[k] = v.clone();
    }
    let r = app.create_voucher(admin, &sale).await;
    assert_eq!(r.status(), StatusCode::CREATED);
    r.json::<Value>().await.expect("json")["id"]
        .as_i64()
        .expect("id")
}

#[sqlx::test]
async fn every_page_reads_in_chinese_for_a_chinese_shopper_and_admin(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let now = chrono::Utc::now();
    let at = |secs: i64| (now + chrono::Duration::seconds(secs)).to_rfc3339();
    let open = chinese_voucher(
        &app,
        &admin,
        json!({ "begins_at": at(-5), "ends_at": at(3_600) }),
    )
    .await;
    let draw = chinese_voucher(
        &app,
        &admin,
        json!({ "begins_at": at(3_600), "ends_at": at(7_200), "opening": "draw", "entries_open_at": at(-5) }),
    )
    .await;

    // A visitor who chose Chinese; then the same visitor signed in, holding an order.
    let visitor = chinese(&app).await;
    let anonymous: Vec<String> = [
        "/".into(),
        "/login".into(),
        format!("/vouchers/{open}"),
        format!("/vouchers/{draw}"),
        format!("/vouchers/{draw}/draw"),
    ]
    .into();
    all_chinese(&visitor, &app, &anonymous, StatusCode::OK).await;
    all_chinese(
        &visitor,
        &app,
        &["/no-such-page".into()],
        StatusCode::NOT_FOUND,
    )
    .await;

    let shopper = chinese(&app).await;
    app.log_in(&shopper, "13900000401").await;
    let order = buy_order(&app, &shopper, open).await;
    written(&app, &shopper, &order).await;
    let sale = page(
        &shopper,
        &format!("{}/vouchers/{open}", app.base),
        StatusCode::OK,
    )
    .await;
    assert!(
        sale.contains("立即支付") && sale.contains("已为您保留"),
        "Pay now on the sale page"
    );
    let orders = page(&shopper, &format!("{}/orders", app.base), StatusCode::OK).await;
    assert!(
        orders.contains(r#"data-testid="row-pay""#),
        "Pay now on My orders"
    );
    let signed_in: Vec<String> = [
        "/".into(),
        format!("/vouchers/{open}"),
        format!("/vouchers/{draw}"),
        "/orders".into(),
        format!("/orders/{order}"),
    ]
    .into();
    all_chinese(&shopper, &app, &signed_in, StatusCode::OK).await;

    // The admin signed in above switches to Chinese (a code asked again so soon is refused).
    let chinese_admin = admin;
    let r = chinese_admin
        .get(format!("{}/lang?to=zh-CN&next=/admin", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let console: Vec<String> = [
        "/admin".into(),
        format!("/admin?chart={open}"),
        format!("/admin?manage={open}"),
        "/admin/vouchers/new".into(),
        "/admin/payments".into(),
        "/admin/actions".into(),
    ]
    .into();
    all_chinese(&chinese_admin, &app, &console, StatusCode::OK).await;
}

#[sqlx::test]
async fn the_browser_chooses_first_then_the_switch_and_each_language_has_its_rendering(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    // 10:00:30 in Beijing.
    let v = chinese_voucher(
        &app,
        &admin,
        json!({ "begins_at": "2030-06-01T02:00:30Z", "ends_at": "2030-06-02T02:00:30Z" }),
    )
    .await;
    let url = format!("{}/vouchers/{v}", app.base);
    let ask = |lang: &'static str| {
        let url = url.clone();
        async move {
            let r = client()
                .get(&url)
                .header(header::ACCEPT_LANGUAGE, lang)
                .send()
                .await
                .expect("send");
            assert_eq!(
                r.headers()[header::VARY],
                "Cookie, Accept-Encoding, Accept-Language"
            );
            let language = r.headers()[header::CONTENT_LANGUAGE]
                .to_str()
                .expect("ascii")
                .to_owned();
            (language, r.text().await.expect("body"))
        }
    };
    // The same shared page, asked for in turn: each language its own rendering.
    for _ in 0..2 {
        let (language, zh) = ask("zh-CN,zh;q=0.9,en;q=0.8").await;
        assert_eq!(language, "zh-CN");
        assert!(
            zh.contains(r#"<html lang="zh-CN""#) && zh.contains("6月1日 10:00"),
            "Beijing time"
        );
        let (language, en) = ask("en-GB,en;q=0.9").await;
        assert_eq!(language, "en");
        assert!(
            en.contains(r#"<html lang="en""#) && en.contains("1 Jun 2030, 10:00"),
            "Beijing time in English"
        );
        assert!(en.contains("Beijing time (UTC+8)"));
    }
    // Nothing asked: English, as for programs.
    let plain = page(&client(), &url, StatusCode::OK).await;
    assert!(plain.contains(r#"<html lang="en""#));

    // The switch wins over the browser, and goes back only to this site.
    let c = client();
    let r = c
        .get(format!("{}/lang?to=en&next=//evil.example/x", app.base))
        .header(header::ACCEPT_LANGUAGE, "zh-CN")
        .send()
        .await
        .expect("send");
    assert_eq!(r.headers()[header::LOCATION], "/");
    let r = c
        .get(&url)
        .header(header::ACCEPT_LANGUAGE, "zh-CN")
        .send()
        .await
        .expect("send");
    assert!(
        r.text().await.expect("body").contains(r#"<html lang="en""#),
        "the cookie wins"
    );
    // A language the shop does not speak changes nothing.
    let r = client()
        .get(format!("{}/lang?to=tlh&next=/", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(r.headers().get(header::SET_COOKIE).is_none());
}

#[sqlx::test]
async fn an_api_error_keeps_its_code_and_speaks_the_requests_language(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3_600, 1).await;
    let zh = chinese(&app).await;
    let body = expect_error(
        app.buy(&zh, v).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    assert_eq!(body["message"], "请先登录。");
    let r = client()
        .post(format!("{}/api/vouchers/{v}/orders", app.base))
        .header(header::ACCEPT_LANGUAGE, "zh-CN")
        .send()
        .await
        .expect("send");
    assert_eq!(r.headers()[header::CONTENT_LANGUAGE], "zh-CN");
    let body = expect_error(r, StatusCode::UNAUTHORIZED, "unauthenticated").await;
    assert_eq!(body["message"], "请先登录。");
    let body = expect_error(
        app.buy(&client(), v).await,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
    )
    .await;
    assert_eq!(body["message"], "Please sign in first.");
    // A refusal made before any handler (a forged cross-site post) speaks it too.
    let r = client()
        .post(format!("{}/api/vouchers/{v}/orders", app.base))
        .header(header::ORIGIN, "https://evil.example")
        .header(header::ACCEPT_LANGUAGE, "zh")
        .send()
        .await
        .expect("send");
    let body = expect_error(r, StatusCode::FORBIDDEN, "cross_site").await;
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("其他网站")),
        "{body}"
    );
}
