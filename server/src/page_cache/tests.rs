//! The page cache: what is shared, what is not, and when a rendering is old.

use super::*;

#[test]
fn only_the_home_and_voucher_pages_are_shared() {
    for path in ["/", "/vouchers/1", "/vouchers/123456"] {
        assert!(shared_page(path), "{path}");
    }
    for path in [
        "/login",
        "/orders",
        "/vouchers/",
        "/vouchers/1/x",
        "/vouchers/a",
        "/vouchers/07",
        "/vouchers/0",
        "/admin",
    ] {
        assert!(!shared_page(path), "{path}");
    }
}

#[test]
fn a_session_cookie_among_others_is_seen() {
    let mut h = HeaderMap::new();
    h.insert(
        header::COOKIE,
        HeaderValue::from_static("a=1; seckill_session=x"),
    );
    assert!(has_session(&h));
    h.insert(
        header::COOKIE,
        HeaderValue::from_static("__Host-seckill_session=x"),
    );
    assert!(has_session(&h), "the secure form too");
    h.insert(header::COOKIE, HeaderValue::from_static("a=1; b=2"));
    assert!(!has_session(&h));
    // Another cookie whose name starts like the session's is not the session.
    h.insert(
        header::COOKIE,
        HeaderValue::from_static("seckill_session2=x; seckill_sessionx=y"),
    );
    assert!(!has_session(&h));
}

#[test]
fn the_same_bytes_get_the_same_tag_and_others_another() {
    assert_eq!(etag_of(b"abc", ""), etag_of(b"abc", ""));
    assert_ne!(etag_of(b"abc", ""), etag_of(b"abd", ""));
    assert_ne!(etag_of(b"abc", ""), etag_of(b"abc", "-gz"));
}

#[test]
fn gzip_is_taken_unless_refused() {
    let with = |v: &'static str| {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(v));
        accepts_gzip(&h)
    };
    assert!(with("gzip, deflate, br"));
    assert!(with("br;q=1.0, GZIP;q=0.5"));
    assert!(!with("br"));
    assert!(!with("gzip;q=0"));
    assert!(!accepts_gzip(&HeaderMap::new()));
}

#[test]
fn a_gzipped_page_reads_back_as_the_page() {
    use std::io::Read as _;
    let page = "<html>".repeat(500);
    let (gz, tag) = gzipped(page.as_bytes()).expect("gzip");
    assert!(gz.len() < page.len() / 10);
    assert!(tag.to_str().is_ok_and(|t| t.ends_with("-gz\"")));
    let mut back = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut back)
        .expect("gunzip");
    assert_eq!(back, page);
}
