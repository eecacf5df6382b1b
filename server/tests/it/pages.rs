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
async fn a_head_request_never_leaves_an_empty_page_for_the_visitors_after_it(db: sqlx::PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 3).await;
    for path in ["/".to_owned(), format!("/vouchers/{v}")] {
        let url = format!("{}{path}", app.base);
        // The first request for the page since the voucher was made: a miss, rendered.
        let head = client().head(&url).send().await.expect("HEAD");
        assert_eq!(head.status(), StatusCode::OK, "{path}");
        let (status, _, _, body) = visit(&url, None).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(
            body.contains("</html>"),
            "{path}: the whole page, got {} bytes",
            body.len()
        );
    }
    let (_, _, _, body) = visit(&format!("{}/vouchers/{v}", app.base), None).await;
    assert!(body.contains("3 of 3 left"), "rendered with the stock");
    // `/vouchers/007` is voucher 7's page for whoever writes it so, but not another copy of it
    // in the shared cache.
    let padded = format!("{}/vouchers/00{v}", app.base);
    let (status, _, control, _) = visit(&padded, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_ne!(control, "public, no-cache", "not shared");
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

/// `seckill_admissions_total{outcome="…"}` as the metrics listener shows it now (0 before the
/// first).
async fn admissions(app: &crate::support::TestApp, outcome: &str) -> u64 {
    let text = client()
        .get(format!("{}/metrics", app.metrics))
        .send()
        .await
        .expect("send")
        .text()
        .await
        .expect("text");
    let series = format!("seckill_admissions_total{{outcome=\"{outcome}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(series.as_str()))
        .map_or(0, |v| v.trim().parse().expect("a count"))
}

#[sqlx::test]
async fn every_buy_is_counted_by_its_outcome(db: sqlx::PgPool) {
    let app = spawn_app(db).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 1).await;
    let (admitted, sold_out) = (
        admissions(&app, "admitted").await,
        admissions(&app, "sold_out").await,
    );
    let first = app.sign_in("13900000001").await;
    crate::support::buy_order(&app, &first, v).await;
    let second = app.sign_in("13900000002").await;
    // The first refusal comes from the script, the next ones from memory: both are counted.
    for _ in 0..3 {
        let r = app.buy(&second, v).await;
        assert_eq!(r.status(), StatusCode::CONFLICT);
    }
    // Other tests in this process buy too: the counts only grow, by at least ours.
    assert!(admissions(&app, "admitted").await > admitted);
    assert!(admissions(&app, "sold_out").await >= sold_out + 3);
}

/// A signed-in GET of `url` as `c`: status, Cache-Control and body.
async fn visit_as(c: &reqwest::Client, url: &str) -> (StatusCode, String, String) {
    let r = c.get(url).send().await.expect("send");
    let status = r.status();
    let control = r
        .headers()
        .get(header::CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (status, control, r.text().await.expect("body"))
}

#[sqlx::test]
async fn signed_in_pages_come_from_one_rendering_made_each_shoppers_own(db: sqlx::PgPool) {
    let app = crate::support::spawn_app_setting(db, &[("SECKILL_PAGE_CACHE_MS", "60000")]).await;
    let admin = app.sign_in("13800000000").await;
    let v = app.create(&admin, -5, 3600, 3).await;
    let url = format!("{}/vouchers/{v}", app.base);
    let (ann, bob) = (
        app.sign_in("13900004001").await,
        app.sign_in("13900004002").await,
    );
    let ann_id = crate::support::user_id(&app, "+8613900004001").await;
    let bob_id = crate::support::user_id(&app, "+8613900004002").await;

    let (status, control, ann_page) = visit_as(&ann, &url).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(control, "private, no-store");
    let (_, _, bob_page) = visit_as(&bob, &url).await;
    for (page, mine, theirs) in [
        (&ann_page, "+8613900004001", "+8613900004002"),
        (&bob_page, "+8613900004002", "+8613900004001"),
    ] {
        assert!(page.contains(mine) && !page.contains(theirs));
        assert!(!page.contains("+999") && !page.contains("8888888888888"));
        assert!(page.contains("Buy now"), "signed in, no order yet");
    }
    // One rendering (the server's clock in it included), each shopper's own ID and phone.
    assert_eq!(
        ann_page
            .replace("+8613900004001", "+8613900004002")
            .replace(
                &format!("user_id\\\":{ann_id},"),
                &format!("user_id\\\":{bob_id},")
            ),
        bob_page
    );
    // The sale's island is hydrated from its props (HTML-escaped JSON): signed in, so its
    // panel offers Buy now once live. No session data rides along (islands carry no
    // `whoami`): the header's phone is all that differs between two shoppers.
    assert!(
        ann_page.contains("&quot;signed_in&quot;:true"),
        "the island's props"
    );
    assert!(!ann_page.contains(&format!("user_id\\\":{ann_id},")));

    // Once Ann holds an order, her page is rendered for her: her order in the buy panel.
    let order = buy_order(&app, &ann, v).await;
    let (_, _, ann_page) = visit_as(&ann, &url).await;
    assert!(ann_page.contains(&order), "her order on the page");
    let (_, _, bob_again) = visit_as(&bob, &url).await;
    assert_eq!(bob_again, bob_page, "Bob's still from the template");
    // The admin's page is their own too (the console link).
    let (_, _, admin_page) = visit_as(&admin, &url).await;
    assert!(admin_page.contains("/admin") && admin_page.contains("+8613800000000"));
}

/// Instances started in this process while another one renders pages never stall its pages.
/// Listing the app's routes runs the app with resource loading suppressed by a process-wide flag
/// (leptos issue #4773), and a page whose resource first polled meanwhile hung for good: so the
/// listing is made once per process. Here instances start one after another on a thread of their
/// own while the first instance renders "My orders" (a page that loads a resource) without pause;
/// every rendering must come back whole.
#[sqlx::test]
async fn pages_render_while_other_instances_start_in_the_same_process(db: sqlx::PgPool) {
    let app = spawn_app(db.clone()).await;
    let shopper = app.sign_in("13900007101").await;
    let handle = tokio::runtime::Handle::current();
    let starting = tokio::task::spawn_blocking(move || {
        handle.block_on(async {
            for _ in 0..6 {
                let other = spawn_app(db.clone()).await;
                other.shutdown.cancel();
                other.serving.await.expect("joined").expect("stopped");
            }
        });
    });
    let mut rendered = 0;
    while !starting.is_finished() {
        let r = shopper
            .get(format!("{}/orders", app.base))
            .send()
            .await
            .expect("a page answered while another instance started");
        assert_eq!(r.status(), StatusCode::OK);
        let body = r.text().await.expect("the whole page");
        assert!(body.contains("</html>"), "a page cut short");
        rendered += 1;
    }
    starting.await.expect("the instances started and stopped");
    assert!(
        rendered > 0,
        "no page was asked for while instances started"
    );
}
