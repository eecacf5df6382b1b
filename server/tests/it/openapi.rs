//! The REST API's OpenAPI document (design.md decision 45): served at `/api/openapi.json`, made
//! from the routes themselves, and kept in the repository (`docs/openapi.json`) so that an API
//! change is a visible diff in review.

use std::collections::BTreeSet;

use reqwest::StatusCode;
use serde_json::Value;
use sqlx::PgPool;

use crate::support::{client, spawn_app};

/// Where the snapshot is kept.
fn snapshot_path() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/openapi.json")
}

#[sqlx::test]
async fn the_served_document_is_the_snapshot_in_the_repository(db: PgPool) {
    let app = spawn_app(db).await;
    let r = client()
        .get(format!("{}/api/openapi.json", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["content-type"], "application/json");
    let served = r.text().await.expect("body");
    let kept = std::fs::read_to_string(snapshot_path()).unwrap_or_default();
    if served.trim_end() != kept.trim_end() {
        if std::env::var_os("SECKILL_UPDATE_OPENAPI").is_some() {
            std::fs::write(snapshot_path(), format!("{}\n", served.trim_end())).expect("write");
            return;
        }
        panic!(
            "the API changed: the served document differs from docs/openapi.json; review the \
             change, then run `SECKILL_UPDATE_OPENAPI=1 cargo test -p server --test it openapi` \
             to keep it"
        );
    }
}

#[sqlx::test]
async fn the_docs_page_renders_the_document_with_the_vendored_script(db: PgPool) {
    let app = spawn_app(db).await;
    let r = client()
        .get(format!("{}/api/docs", app.base))
        .send()
        .await
        .expect("send");
    assert_eq!(r.status(), StatusCode::OK);
    assert!(r.headers()["content-type"]
        .to_str()
        .is_ok_and(|t| t.starts_with("text/html")));
    let page = r.text().await.expect("body");
    assert!(page.contains(r#"spec-url="/api/openapi.json""#), "{page}");
    assert!(
        page.contains(r#"<script src="/pkg/api-docs.js"></script>"#),
        "{page}"
    );
    assert!(!page.contains("http"), "nothing from another site: {page}");
}

#[sqlx::test]
async fn every_operation_is_described_with_its_answers(db: PgPool) {
    let app = spawn_app(db).await;
    let doc: Value = client()
        .get(format!("{}/api/openapi.json", app.base))
        .send()
        .await
        .expect("send")
        .json()
        .await
        .expect("json");
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "{}",
        doc["openapi"]
    );
    let paths = doc["paths"].as_object().expect("paths");
    let mut operations = BTreeSet::new();
    // Each operation's ID is its own: links (and clients generated from the document) name
    // operations by it.
    let mut ids = BTreeSet::new();
    for (path, item) in paths {
        assert!(path.starts_with("/api/"), "{path}");
        for (method, op) in item.as_object().expect("item") {
            operations.insert(format!("{} {path}", method.to_uppercase()));
            let id = op["operationId"].as_str().expect("an operationId");
            assert!(
                ids.insert(id.to_owned()),
                "operationId {id:?} twice ({method} {path})"
            );
            let answers = op["responses"].as_object().expect("responses");
            // A success, and the errors every request may meet, as `{"error","message"}`.
            assert!(
                answers.keys().any(|s| s.starts_with('2')),
                "{method} {path}"
            );
            for status in ["400", "404", "503"] {
                if path == "/api/health" && status == "503" {
                    // Readiness answers its own body when a store is out of reach.
                    continue;
                }
                let schema = &answers[status]["content"]["application/json"]["schema"]["$ref"];
                assert_eq!(
                    schema, "#/components/schemas/ErrorBody",
                    "{method} {path} {status}"
                );
            }
            if method != "get" {
                assert!(
                    answers.contains_key("403"),
                    "{method} {path}: cross-site refusal"
                );
            }
        }
    }
    // Every route the REST router serves (the test app's table of endpoints, and the rest).
    for expected in [
        "GET /api/live",
        "GET /api/health",
        "GET /api/openapi.json",
        "GET /api/docs",
        "POST /api/login/code",
        "POST /api/login",
        "POST /api/logout",
        "POST /api/logout/everywhere",
        "GET /api/vouchers",
        "GET /api/vouchers/{id}",
        "GET /api/vouchers/{id}/stock",
        "GET /api/vouchers/{id}/events",
        "POST /api/vouchers/{id}/orders",
        "POST /api/vouchers/{id}/reminder",
        "DELETE /api/vouchers/{id}/reminder",
        "POST /api/vouchers/{id}/entries",
        "GET /api/vouchers/{id}/entries/me",
        "GET /api/vouchers/{id}/draw",
        "GET /api/draws/key",
        "GET /api/orders/{order_id}",
        "POST /api/orders/{order_id}/pay",
        "POST /api/orders/{order_id}/cancel",
        "POST /api/payments/{provider}/webhook",
        "GET /api/admin/vouchers",
        "POST /api/admin/vouchers",
        "PATCH /api/admin/vouchers/{id}",
        "POST /api/admin/vouchers/{id}/end",
        "POST /api/admin/vouchers/{id}/stock",
        "GET /api/admin/payments",
        "POST /api/admin/orders/{id}/refund",
        "GET /api/admin/orders.csv",
        "GET /api/admin/payments.csv",
        "GET /api/admin/actions",
    ] {
        assert!(operations.remove(expected), "{expected} is not described");
    }
    assert!(
        operations.is_empty(),
        "described but not expected: {operations:?}"
    );
    // The session cookie is the security scheme; a buy names it.
    let scheme = &doc["components"]["securitySchemes"]["session"];
    assert_eq!(scheme["in"], "cookie");
    assert_eq!(scheme["name"], "seckill_session");
    let buy = &doc["paths"]["/api/vouchers/{id}/orders"]["post"];
    assert_eq!(buy["security"][0]["session"], serde_json::json!([]));
    for status in ["202", "401", "409", "429"] {
        assert!(buy["responses"].get(status).is_some(), "a buy's {status}");
    }
}
