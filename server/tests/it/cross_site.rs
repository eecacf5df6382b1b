//! Cross-site requests refused (#23 point 4), over real HTTP: a request that changes something,
//! sent from another site (its `Origin`, or `Sec-Fetch-Site: cross-site`), answers 403
//! `cross_site` and changes nothing, whoever is signed in; the shop's own origin and programs
//! that send no `Origin` go on; reads are left alone.

use reqwest::{Client, StatusCode};
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{expect_error, remaining, spawn_app, TestApp};

const EVIL: &str = "http://evil.example";

async fn buy_from(
    app: &TestApp,
    c: &Client,
    v: i64,
    headers: &[(&str, &str)],
) -> reqwest::Response {
    let mut req = c.post(format!("{}/api/vouchers/{v}/orders", app.base));
    for (k, val) in headers {
        req = req.header(*k, *val);
    }
    req.send().await.expect("send")
}

#[sqlx::test]
async fn a_buy_from_another_site_is_refused_and_takes_nothing(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -1, 3_600, 10).await;
    let shopper = app.sign_in("13900000001").await;
    // Another site, a sibling port of this one, a sandboxed page, and a browser's own mark.
    let port = app.base.rsplit(':').next().expect("port");
    let sibling = format!(
        "http://127.0.0.1:{}",
        port.parse::<u16>().expect("port") ^ 1
    );
    for headers in [
        vec![("origin", EVIL)],
        vec![("origin", sibling.as_str())],
        vec![("origin", "null")],
        vec![("sec-fetch-site", "cross-site")],
        vec![
            ("origin", app.base.as_str()),
            ("sec-fetch-site", "cross-site"),
        ],
    ] {
        let r = buy_from(&app, &shopper, v, &headers).await;
        expect_error(r, StatusCode::FORBIDDEN, "cross_site").await;
    }
    assert_eq!(remaining(&app, v).await, 10, "nothing was taken");
    // The shop's own page, and a program (no Origin): the buy goes on.
    let own = buy_from(
        &app,
        &shopper,
        v,
        &[
            ("origin", app.base.as_str()),
            ("sec-fetch-site", "same-origin"),
        ],
    )
    .await;
    assert_eq!(own.status(), StatusCode::ACCEPTED);
    let other = app.sign_in("13900000002").await;
    assert_eq!(
        buy_from(&app, &other, v, &[]).await.status(),
        StatusCode::ACCEPTED
    );
    // Reads from anywhere are reads.
    let r = shopper
        .get(format!("{}/api/vouchers/{v}", app.base))
        .header("origin", EVIL)
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
}

#[sqlx::test]
async fn an_admins_action_from_another_site_changes_nothing(db: PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -1, 3_600, 10).await;
    let ended = |c: &Client, origin: &'static str| {
        c.post(format!("{}/api/admin/vouchers/{v}/end", app.base))
            .header("origin", origin)
            .send()
    };
    expect_error(
        ended(&admin, EVIL).await.expect("send"),
        StatusCode::FORBIDDEN,
        "cross_site",
    )
    .await;
    let r = admin
        .post(format!("{}/api/admin/vouchers/{v}/stock", app.base))
        .header("origin", EVIL)
        .json(&json!({ "add": 1000 }))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::FORBIDDEN, "cross_site").await;
    let r = admin
        .patch(format!("{}/api/admin/vouchers/{v}", app.base))
        .header("origin", EVIL)
        .json(&json!({ "title": "Forged" }))
        .send()
        .await
        .expect("send");
    expect_error(r, StatusCode::FORBIDDEN, "cross_site").await;
    let sale: Value = app
        .voucher(&crate::support::client(), v)
        .await
        .json()
        .await
        .expect("json");
    assert_eq!(sale["status"], "on_sale", "{sale}");
    assert_eq!(sale["stock"], 10, "{sale}");
    assert_eq!(sale["title"], "API voucher", "{sale}");
}

#[sqlx::test]
async fn a_sign_in_form_from_another_site_sets_no_session(db: PgPool) {
    let app = spawn_app(db).await;
    let c = crate::support::client();
    let code = app
        .request_code(&c, &json!({ "phone": "13900000003" }))
        .await
        .json::<Value>()
        .await
        .expect("json")["code"]
        .as_str()
        .expect("dev code")
        .to_owned();
    // Login CSRF: the attacker's page posts its own account's code into the visitor's browser.
    let form = [
        ("phone", "13900000003"),
        ("code", code.as_str()),
        ("next", "/"),
    ];
    let forged = c
        .post(format!("{}/sf/sign_in", app.base))
        .header("origin", EVIL)
        .header("accept", "text/html")
        .form(&form)
        .send()
        .await
        .expect("send");
    assert!(
        forged.headers().get("set-cookie").is_none(),
        "no session from a forged form"
    );
    expect_error(forged, StatusCode::FORBIDDEN, "cross_site").await;
    // The same form from the shop's own sign-in page signs in.
    let own = c
        .post(format!("{}/sf/sign_in", app.base))
        .header("origin", app.base.as_str())
        .header("accept", "text/html")
        .form(&form)
        .send()
        .await
        .expect("send");
    assert_eq!(
        own.status(),
        StatusCode::SEE_OTHER,
        "sent on to its next page"
    );
    assert!(own.headers().get("set-cookie").is_some());
}
