//! The session cookie behind HTTPS (#23 point 8): when every public origin is `https://`, the
//! cookie is `__Host-seckill_session` with `Secure` (never sent in clear, no subdomain can set
//! it), and it is the one that signs requests in; the plain name is then ignored.

use reqwest::{header, StatusCode};
use sqlx::PgPool;

use crate::support::{client, spawn_app_setting};

#[sqlx::test]
async fn behind_https_the_session_cookie_is_secure_and_host_only(db: PgPool) {
    // Signed in by dev login, and paid by dev payments, which a shop others reach only runs
    // when told so.
    let app = spawn_app_setting(
        db,
        &[
            ("SECKILL_PUBLIC_ORIGIN", "https://shop.example"),
            ("SECKILL_DEV_LOGIN_PUBLIC", "true"),
            ("SECKILL_DEV_PAYMENTS_PUBLIC", "true"),
        ],
    )
    .await;
    let c = client();
    let r = app.log_in(&c, "13900000041").await;
    let set = r.headers()[header::SET_COOKIE]
        .to_str()
        .expect("ascii")
        .to_owned();
    assert!(set.starts_with("__Host-seckill_session="), "{set}");
    assert!(
        set.contains("; Secure") && set.contains("Path=/") && !set.contains("Domain"),
        "{set}"
    );
    let token = set
        .split(';')
        .next()
        .and_then(|p| p.split_once('='))
        .map(|(_, v)| v.to_owned())
        .expect("token");
    // The secure cookie signs the request in (a buy of a voucher that does not exist is a 404,
    // not a 401); the plain name with the same token does not.
    let buy = |cookie: String| {
        let url = format!("{}/api/vouchers/999999/orders", app.base);
        async move {
            reqwest::Client::new()
                .post(url)
                .header(header::COOKIE, cookie)
                .send()
                .await
                .expect("send")
                .status()
        }
    };
    assert_eq!(
        buy(format!("__Host-seckill_session={token}")).await,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        buy(format!("seckill_session={token}")).await,
        StatusCode::UNAUTHORIZED
    );
}
