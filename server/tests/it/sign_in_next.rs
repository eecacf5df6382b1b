//! Where sign-in sends a browser (#23 point 3), over real HTTP: `next` is a path of this site or
//! the home page. Values a browser resolves to another site (`/\evil.example`,
//! `/<TAB>/evil.example`, `//evil.example`) and values that would break the `Location` header
//! (a line break, NUL) send it home; none drops the connection.

use reqwest::StatusCode;
use serde_json::{json, Value};
use sqlx::PgPool;

use crate::support::{client, spawn_app};

#[sqlx::test]
async fn sign_in_goes_to_a_path_of_this_site_or_home(db: PgPool) {
    let app = spawn_app(db).await;
    let cases = [
        ("/orders/12", "/orders/12"),
        ("/\\evil.example", "/"),
        ("/\t/evil.example", "/"),
        ("//evil.example", "/"),
        ("https://evil.example", "/"),
        ("/a\r\nSet-Cookie: stolen=1", "/"),
        ("/a\0b", "/"),
    ];
    for (i, (next, expected)) in cases.iter().enumerate() {
        let phone = format!("1390000{:04}", 100 + i);
        let c = client();
        let code = app
            .request_code(&c, &json!({ "phone": phone }))
            .await
            .json::<Value>()
            .await
            .expect("json")["code"]
            .as_str()
            .expect("dev code")
            .to_owned();
        let r = c
            .post(format!("{}/sf/sign_in", app.base))
            .header("accept", "text/html")
            .form(&[
                ("phone", phone.as_str()),
                ("code", code.as_str()),
                ("next", *next),
            ])
            .send()
            .await
            .unwrap_or_else(|e| panic!("next={next:?}: the connection dropped: {e}"));
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "next={next:?}");
        let location = r.headers().get("location").and_then(|v| v.to_str().ok());
        assert_eq!(location, Some(*expected), "next={next:?}");
        assert!(
            r.headers()
                .get_all("set-cookie")
                .iter()
                .all(|v| !v.to_str().unwrap_or_default().contains("stolen")),
            "no header smuggled in"
        );
    }
}
