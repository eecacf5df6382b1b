//! The static files served from memory: hashed names, compressed copies, conditional requests.

use super::*;
use tower::ServiceExt;

/// A pkg directory with a hashed file, its plain twin and their compressed copies.
fn site(label: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("seckill-static-{label}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("snippets")).expect("dir");
    for name in ["seckill.0123456789abcdef.js", "seckill.js"] {
        std::fs::write(dir.join(name), "plain").expect("file");
        std::fs::write(dir.join(format!("{name}.br")), "brotli").expect("file");
        std::fs::write(dir.join(format!("{name}.gz")), "gzip").expect("file");
    }
    std::fs::write(dir.join("snippets/x.js"), "snippet").expect("file");
    dir
}

async fn get(app: &Router, method: Method, path: &str, headers: &[(&str, &str)]) -> Response {
    let mut req = Request::builder().method(method).uri(path);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    app.clone()
        .oneshot(req.body(Body::empty()).expect("request"))
        .await
        .expect("infallible")
}

fn header_of(r: &Response, name: header::HeaderName) -> String {
    r.headers()
        .get(name)
        .map(|v| v.to_str().expect("ascii").to_owned())
        .unwrap_or_default()
}

async fn body_of(r: Response) -> String {
    let bytes = axum::body::to_bytes(r.into_body(), 1 << 20)
        .await
        .expect("body");
    String::from_utf8(bytes.to_vec()).expect("utf-8")
}

#[tokio::test]
async fn only_a_hashed_file_that_exists_is_immutable() {
    let dir = site("immutable");
    let app = router(Assets::load(&dir).expect("load"));
    let found = get(&app, Method::GET, "/seckill.0123456789abcdef.js", &[]).await;
    assert_eq!(found.status(), StatusCode::OK);
    assert_eq!(header_of(&found, header::CACHE_CONTROL), IMMUTABLE);
    // Never asked again: no validators.
    assert_eq!(header_of(&found, header::ETAG), "");
    assert_eq!(header_of(&found, header::LAST_MODIFIED), "");
    let plain = get(&app, Method::GET, "/seckill.js", &[]).await;
    assert_eq!(header_of(&plain, header::CACHE_CONTROL), REVALIDATE);
    assert!(!header_of(&plain, header::ETAG).is_empty());
    let missing = get(&app, Method::GET, "/seckill.fedcba9876543210.js", &[]).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(header_of(&missing, header::CACHE_CONTROL), REVALIDATE);
    let nested = get(&app, Method::GET, "/snippets/x.js", &[]).await;
    assert_eq!(body_of(nested).await, "snippet");
    let outside = get(&app, Method::GET, "/../Cargo.toml", &[]).await;
    assert_eq!(outside.status(), StatusCode::NOT_FOUND);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn each_browser_gets_the_encoding_it_takes() {
    let dir = site("encoding");
    let app = router(Assets::load(&dir).expect("load"));
    for (accept, coding, body) in [
        ("gzip, deflate, br", "br", "brotli"),
        ("gzip", "gzip", "gzip"),
        ("br;q=0, gzip;q=0.5", "gzip", "gzip"),
        ("identity", "", "plain"),
        ("", "", "plain"),
    ] {
        let r = get(
            &app,
            Method::GET,
            "/seckill.js",
            &[("accept-encoding", accept)],
        )
        .await;
        assert_eq!(r.status(), StatusCode::OK, "{accept}");
        assert_eq!(header_of(&r, header::CONTENT_ENCODING), coding, "{accept}");
        assert_eq!(header_of(&r, header::VARY), "accept-encoding");
        assert_eq!(
            header_of(&r, header::CONTENT_TYPE),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            header_of(&r, header::CONTENT_LENGTH),
            body.len().to_string()
        );
        assert_eq!(body_of(r).await, body, "{accept}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_current_copy_is_answered_304_and_only_reads_are_served() {
    let dir = site("conditional");
    let app = router(Assets::load(&dir).expect("load"));
    let br = [("accept-encoding", "br")];
    let first = get(&app, Method::GET, "/seckill.js", &br).await;
    let (etag, modified) = (
        header_of(&first, header::ETAG),
        header_of(&first, header::LAST_MODIFIED),
    );
    assert!(etag.ends_with("-br\""), "{etag}");
    let by_tag = [("accept-encoding", "br"), ("if-none-match", etag.as_str())];
    let again = get(&app, Method::GET, "/seckill.js", &by_tag).await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(body_of(again).await, "");
    // The gzip copy is another representation: the brotli tag does not match it.
    let other = [
        ("accept-encoding", "gzip"),
        ("if-none-match", etag.as_str()),
    ];
    let gz = get(&app, Method::GET, "/seckill.js", &other).await;
    assert_eq!(gz.status(), StatusCode::OK);
    let by_date = [("if-modified-since", modified.as_str())];
    let dated = get(&app, Method::GET, "/seckill.js", &by_date).await;
    assert_eq!(dated.status(), StatusCode::NOT_MODIFIED);
    let older = [("if-modified-since", "Thu, 01 Jan 2015 00:00:00 GMT")];
    let stale = get(&app, Method::GET, "/seckill.js", &older).await;
    assert_eq!(stale.status(), StatusCode::OK);
    let head = get(&app, Method::HEAD, "/seckill.js", &br).await;
    assert_eq!(head.status(), StatusCode::OK);
    assert_eq!(header_of(&head, header::CONTENT_LENGTH), "6");
    assert_eq!(body_of(head).await, "");
    let post = get(&app, Method::POST, "/seckill.js", &[]).await;
    assert_eq!(post.status(), StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(header_of(&post, header::ALLOW), "GET, HEAD");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_under_two_names_is_held_once() {
    let dir = site("footprint");
    let assets = Assets::load(&dir).expect("load");
    // Five files by name; "plain", "brotli", "gzip" and "snippet" once each.
    assert_eq!(assets.footprint(), (3, 5 + 6 + 4 + 7));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_site_built_is_nothing_to_serve() {
    let assets = Assets::load(Path::new("/nonexistent/seckill/pkg")).expect("load");
    assert_eq!(assets.footprint(), (0, 0));
}

#[test]
fn only_names_with_a_sixteen_digit_hash_are_hashed() {
    assert!(is_hashed_name("seckill.0123456789abcdef.js"));
    assert!(is_hashed_name("seckill.0123456789abcdef.wasm"));
    for name in [
        "seckill.js",
        "seckill.css",
        "seckill.0123456789abcde.js",
        "seckill.0123456789abcdeg.js",
        "0123456789abcdef.js",
        "",
    ] {
        assert!(!is_hashed_name(name), "{name}");
    }
}
