//! Pages as anonymous visitors get them (design.md §8, decision 21), over real HTTP: the home page and
//! a voucher's page come from a shared rendering for a moment, with an `ETag` and 304s; a
//! signed-in page is never shared; a voucher created on the instance shows at once.

use std::time::Duration;

use crate::support::{buy_order, client, spawn_app};
use reqwest::{header, StatusCode};

/// An anonymous GET: status, ETag, Cache-Control and body.
async fn visit(url: &str, etag: Option<&str>) -> (StatusCode, String, String, String) {
    let mut req = client().get(url);
    if let Some(tag) = etag {
        req = req.header(header::IF_NONE_MATCH, tag);
    }
    let r = req.send().await.expect("send");
    let status = r.status();
    let h = |name| {
        r.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned()
    };
    let (tag, control) = (h(header::ETAG), h(header::CACHE_CONTROL));
    (status, tag, control, r.text().await.expect("body"))
}

#[sqlx::test]
async fn an_anonymous_page_is_shared_for_a_moment_and_revalidated_by_etag(db: sqlx::PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 3).await;
    let url = format!("{}/vouchers/{v}", app.base);

    let (status, tag, control, body) = visit(&url, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(control, "public, no-cache");
    assert!(tag.starts_with('"') && tag.len() > 2, "{tag}");
    assert!(body.contains("3 of 3 left"), "rendered with the stock");

    // The browser's copy is current: 304, no body.
    let (status, again, _, body) = visit(&url, Some(&tag)).await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);
    assert_eq!(again, tag);
    assert!(body.is_empty());

    // A buy moves the stock; within the moment the shared rendering still answers…
    let shopper = app.sign_in("13900000001").await;
    buy_order(&app, &shopper, v).await;
    let (_, same, _, _) = visit(&url, None).await;
    assert_eq!(same, tag, "answered from the shared rendering");
    // …and after it, a new rendering with the new stock and another tag.
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let (status, fresh, _, body) = visit(&url, Some(&tag)).await;
    assert_eq!(status, StatusCode::OK, "the old tag no longer matches");
    assert_ne!(fresh, tag);
    assert!(body.contains("2 of 3 left"), "re-rendered");
}

#[sqlx::test]
async fn a_signed_in_page_is_private_and_never_shared(db: sqlx::PgPool) {
    let app = spawn_app(db).await;
    let shopper = app.sign_in("13900000002").await;
    let r = shopper
        .get(format!("{}/", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()[header::CACHE_CONTROL], "private, no-store");
    assert!(r.text().await.expect("body").contains("13900000002"));
    // A 404 page names the shopper too: never stored, and it varies with the cookie.
    let r = shopper
        .get(format!("{}/no-such-page", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
    assert_eq!(r.headers()[header::CACHE_CONTROL], "private, no-store");
    assert!(r.headers()[header::VARY]
        .to_str()
        .expect("vary")
        .contains("Cookie"));
    assert!(r.text().await.expect("body").contains("13900000002"));
    let (_, _, control, body) = visit(&format!("{}/", app.base), None).await;
    assert_eq!(control, "public, no-cache");
    assert!(
        !body.contains("13900000002"),
        "a visitor never sees a shopper's page"
    );
}

#[sqlx::test]
async fn a_voucher_created_here_shows_at_once_on_the_shared_home_page(db: sqlx::PgPool) {
    let app = spawn_app(db).await;
    let home = format!("{}/", app.base);
    let (_, before, _, _) = visit(&home, None).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 3).await;
    let (_, after, _, body) = visit(&home, None).await;
    assert_ne!(after, before);
    assert!(
        body.contains(&format!("/vouchers/{v}\"")),
        "the new voucher is listed"
    );
}

#[sqlx::test]
async fn pages_go_out_compressed_to_browsers_that_take_it(db: sqlx::PgPool) {
    use std::io::Read as _;
    let app = spawn_app(db).await;
    let home = format!("{}/", app.base);
    let (_, _, _, plain) = visit(&home, None).await;

    // The shared rendering, gzipped once: its own tag, revalidated like the plain one.
    let r = client()
        .get(&home)
        .header(header::ACCEPT_ENCODING, "gzip, br")
        .send()
        .await
        .expect("send");
    assert_eq!(r.headers()[header::CONTENT_ENCODING], "gzip");
    let tag = r.headers()[header::ETAG].to_str().expect("tag").to_owned();
    assert!(tag.ends_with("-gz\""), "{tag}");
    let gz = r.bytes().await.expect("body");
    let mut page = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut page)
        .expect("gunzip");
    assert_eq!(page, plain, "the same page");
    let again = client()
        .get(&home)
        .header(header::ACCEPT_ENCODING, "gzip")
        .header(header::IF_NONE_MATCH, &tag)
        .send()
        .await
        .expect("send");
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    // A signed-in page is compressed on its way out (brotli when asked for), under a weak tag.
    let shopper = app.sign_in("13900000003").await;
    let r = shopper
        .get(&home)
        .header(header::ACCEPT_ENCODING, "br")
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()[header::CONTENT_ENCODING], "br");
    assert!(r.headers()[header::ETAG]
        .to_str()
        .is_ok_and(|t| t.starts_with("W/")));
}

#[sqlx::test]
async fn metrics_are_served_on_their_own_listener_only(db: sqlx::PgPool) {
    let app = spawn_app(db).await;
    let public = client()
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(
        public.status(),
        StatusCode::NOT_FOUND,
        "not on the shop's address"
    );
    let own = client()
        .get(format!("{}/metrics", app.metrics))
        .send()
        .await
        .expect("send");
    assert_eq!(own.status(), StatusCode::OK);
    let text = own.text().await.expect("text");
    assert!(text.contains("seckill_"), "{text}");
}
