//! Hostile input over real HTTP: a few thousand malformed requests (bodies, JSON kinds,
//! encodings, methods, paths, cookies, raw bytes on the socket) at the REST API and the server
//! functions. None may answer 5xx; every `/api` error is JSON `{"error","message"}`; every
//! server-function error is JSON; the server is healthy afterwards.

use std::{
    io::{Read, Write},
    net::TcpStream,
    time::Duration,
};

use crate::support::{client, spawn_app, TestApp};
use futures::StreamExt;
use reqwest::{header, Client, Method, StatusCode};
use serde_json::Value;
use sqlx::PgPool;

const PATHS: [&str; 28] = [
    "/api/vouchers",
    "/api/vouchers/1",
    "/api/vouchers/%ff",
    "/api/vouchers/-1",
    "/api/vouchers/99999999999999999999",
    "/api/vouchers/1/orders",
    "/api/vouchers/%00/orders",
    "/api/orders/%ff",
    "/api/orders/abc",
    "/api/orders/18446744073709551615",
    "/api/login",
    "/api/login/code",
    "/api/logout",
    "/api/admin/vouchers",
    "/api/nope/%2e%2e/%2e%2e",
    "/api/",
    "/sf/buy",
    "/sf/sign_in",
    "/sf/request_code",
    "/sf/create_voucher",
    "/sf/pay_order",
    "/sf/enter_draw",
    "/sf/get_order",
    "/sf/get_voucher",
    "/api/vouchers/%ff/stock",
    "/api/orders/1?payment=return",
    "/sf/console",
    "/sf/sign_out",
];

const METHODS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];

/// (content type, body) pairs: broken JSON, wrong kinds, NULs, bad UTF-8, huge nesting, forms
/// with missing or wrong fields.
fn bodies() -> Vec<(&'static str, Vec<u8>)> {
    let json = "application/json";
    let form = "application/x-www-form-urlencoded";
    vec![
        (json, b"{".to_vec()),
        (json, b"null".to_vec()),
        (json, b"[]".to_vec()),
        (json, br#"{"phone": 42, "code": [1]}"#.to_vec()),
        (json, br#"{"phone": "\u0000", "code": "\u0000"}"#.to_vec()),
        (
            json,
            br#"{"title": {"a": 1}, "description": false, "price_cents": "x", "stock": -1, "begins_at": 5, "ends_at": null}"#
                .to_vec(),
        ),
        (json, vec![0xff, 0xfe, b'{', 0x80]),
        (json, "[".repeat(5_000).into_bytes()),
        (form, b"voucher_id=abc&order_id=%zz&phone=&code=".to_vec()),
        (form, b"voucher_id=99999999999999999999999&chart=x".to_vec()),
        (form, vec![b'a', b'=', 0xff, 0xfe]),
        ("text/plain", b"hello".to_vec()),
        ("multipart/form-data; boundary=x", b"--x\r\nnope".to_vec()),
        (form, vec![b'x'; 200 * 1024]),
    ]
}

/// Cookies a client may send: none, empty, not a token, an unknown token, and a real session.
fn cookies(real: &str) -> Vec<Option<String>> {
    vec![
        None,
        Some("seckill_session=".into()),
        Some("seckill_session=zzz; other=1".into()),
        Some(format!("seckill_session={}", "ab".repeat(32))),
        Some(real.to_owned()),
    ]
}

#[sqlx::test]
async fn malformed_requests_get_a_4xx_in_json_and_never_a_5xx(db: PgPool) {
    let app = spawn_app(db).await;
    let session = session_cookie(&app).await;
    let c = client();
    let bodies = bodies();
    let cookies = cookies(&session);
    let mut requests = Vec::new();
    for (p, path) in PATHS.iter().enumerate() {
        for (m, method) in METHODS.iter().enumerate() {
            for (b, body) in bodies.iter().enumerate() {
                let cookie = cookies[(p + m + b) % cookies.len()].clone();
                requests.push((*path, *method, body.clone(), cookie));
            }
        }
    }
    let total = requests.len();
    assert!(total > 2_000, "{total} requests");
    let failures: Vec<String> = futures::stream::iter(requests)
        .map(|(path, method, (ct, body), cookie)| {
            let c = c.clone();
            let url = format!("{}{path}", app.base);
            async move { check(&c, &url, method, ct, body, cookie).await.err() }
        })
        .buffer_unordered(16)
        .filter_map(|f| async move { f })
        .collect()
        .await;
    assert!(
        failures.is_empty(),
        "{} of {total} broke the rules, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(10)]
    );

    // Raw bytes on the socket: methods and targets no client library would send.
    let addr = app.base.trim_start_matches("http://").to_owned();
    for raw in [
        "CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n"
            .as_bytes()
            .to_vec(),
        b"TRACE / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET http://elsewhere/api/vouchers HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        b"GET /api/vouchers HTTP/1.1\r\nHost: x\r\nCookie: seckill_session=\xff\xfe\r\n\r\n"
            .to_vec(),
        b"POST /api/login HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n{".to_vec(),
        b"POST /sf/buy HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n".to_vec(),
        b"\x00\x01\x02 garbage\r\n\r\n".to_vec(),
        [
            b"GET / HTTP/1.1\r\nX-Big: ".to_vec(),
            vec![b'a'; 200_000],
            b"\r\n\r\n".to_vec(),
        ]
        .concat(),
    ] {
        let answer = raw_exchange(&addr, &raw);
        let status = answer
            .split(|b| *b == b' ')
            .nth(1)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.parse::<u16>().ok());
        // The server may also just close the connection (a request it cannot parse).
        if let Some(status) = status {
            assert!(
                status < 500,
                "{:?} → {status}",
                String::from_utf8_lossy(&raw[..raw.len().min(60)])
            );
        }
    }

    let health = app.health(&c).await;
    assert_eq!(health.status(), StatusCode::OK, "still healthy afterwards");
}

/// One request; `Err` says which rule it broke.
async fn check(
    c: &Client,
    url: &str,
    method: &str,
    content_type: &str,
    body: Vec<u8>,
    cookie: Option<String>,
) -> Result<(), String> {
    let method = Method::from_bytes(method.as_bytes()).map_err(|e| e.to_string())?;
    let mut req = c
        .request(method.clone(), url)
        .header(header::CONTENT_TYPE, content_type)
        .body(body);
    if let Some(cookie) = cookie {
        req = req.header(header::COOKIE, cookie);
    }
    // A request the client sent on a pooled connection the server was closing at that moment
    // (it closes after answering early a body it will not read, e.g. 413 or 404) fails to
    // send without reaching the server: it is sent once more, and then must be answered.
    let again = req.try_clone();
    let r = match req.send().await {
        Ok(r) => r,
        Err(first) => match again {
            Some(again) if first.is_request() || first.is_connect() => again
                .send()
                .await
                .map_err(|e| format!("{method} {url}: {e} (after {first})"))?,
            _ => return Err(format!("{method} {url}: {first}")),
        },
    };
    let status = r.status();
    let bytes = r
        .bytes()
        .await
        .map_err(|e| format!("{method} {url}: {e}"))?;
    let what = || {
        format!(
            "{method} {url} ({content_type}) → {status} {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(120)])
        )
    };
    if status.is_server_error() {
        return Err(what());
    }
    if !status.is_client_error() {
        return Ok(());
    }
    let json: Value = serde_json::from_slice(&bytes).map_err(|_| what())?;
    if url.contains("/api") && !(json["error"].is_string() && json["message"].is_string()) {
        return Err(what());
    }
    Ok(())
}

/// A real shopper's session cookie, as a client sends it.
async fn session_cookie(app: &TestApp) -> String {
    let r = app.log_in(&client(), "13900000099").await;
    let set = r
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .expect("cookie");
    set.split(';').next().unwrap_or_default().to_owned()
}

/// Sends raw bytes and reads what comes back (up to 1 s).
fn raw_exchange(addr: &str, raw: &[u8]) -> Vec<u8> {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return Vec::new();
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = s.write_all(raw);
    let mut buf = vec![0; 4096];
    let n = s.read(&mut buf).unwrap_or(0);
    buf.truncate(n);
    buf
}
