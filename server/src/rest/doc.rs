//! The OpenAPI document's frame (design.md decision 45): its title, tags and session scheme,
//! and the answers every operation may give beside its own (a malformed request, an unknown
//! path, a store out of reach, a cross-site refusal). Each operation's own description is the
//! `#[utoipa::path]` on its handler, registered with the route itself (`rest::router`).

use utoipa::{
    openapi::{
        path::Operation,
        security::{ApiKey, ApiKeyValue, SecurityScheme},
        OpenApi as Document, RefOr, Response, ResponseBuilder,
    },
    Modify, OpenApi,
};

use super::error::ErrorBody;

/// The session cookie, as every operation that needs a signed-in shopper or admin names it.
pub const SESSION: &str = "session";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Seckill REST API",
        description = "Flash sales of limited-stock vouchers: the catalog, buying (an order ID \
            at once, the order written moments later), draws, paying, and the admins' side. \
            Every error is JSON with an `error` and a `message`: `error` is a stable code, \
            `message` is for people, in the request's language (the `seckill_lang` cookie, else \
            `Accept-Language`: `zh-CN` or `en`). Sign in with `POST /api/login/code` then \
            `POST /api/login`: the session is the `seckill_session` cookie. A request that \
            changes something from a browser must come from the shop's own origin (an `Origin` \
            of another site, or `Sec-Fetch-Site: cross-site`, is refused `403 cross_site`); a \
            program that sends neither header goes on. Times are RFC 3339 in UTC; money is integer fen.",
    ),
    tags(
        (name = "health", description = "Liveness and readiness"),
        (name = "auth", description = "Signing in with a phone and a one-time code"),
        (name = "vouchers", description = "The catalog, a sale's live figures and buying"),
        (name = "draws", description = "Sales that open by an auditable draw"),
        (name = "orders", description = "A shopper's orders: following, paying, cancelling"),
        (name = "admin", description = "Creating and managing sales, payments and refunds"),
        (name = "webhooks", description = "Notifications the shop receives from the payment provider"),
    ),
    components(schemas(ErrorBody)),
    modifiers(&SessionScheme),
)]
pub struct ApiDoc;

/// The `seckill_session` cookie as the security scheme.
struct SessionScheme;

impl Modify for SessionScheme {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            SESSION,
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                "seckill_session",
                "The session `POST /api/login` sets (HttpOnly, SameSite=Lax).",
            ))),
        );
    }
}

/// The document as served: the paths under `/api` (where the router is nested), and on every
/// operation the answers any request may get.
pub fn finish(mut doc: Document) -> Document {
    let paths = std::mem::take(&mut doc.paths.paths);
    for (path, mut item) in paths {
        for (method, op) in [
            ("get", item.get.as_mut()),
            ("post", item.post.as_mut()),
            ("patch", item.patch.as_mut()),
            ("delete", item.delete.as_mut()),
        ] {
            if let Some(op) = op {
                common_answers(op, method != "get");
            }
        }
        doc.paths.paths.insert(format!("/api{path}"), item);
    }
    doc
}

/// An error answer with its codes in words.
pub fn error(description: &str) -> RefOr<Response> {
    error_builder(description).build().into()
}

/// An error answer that says when to try again (`Retry-After`, in seconds).
fn error_retry(description: &str) -> RefOr<Response> {
    error_builder(description)
        .header(
            "Retry-After",
            utoipa::openapi::HeaderBuilder::new()
                .schema(
                    utoipa::openapi::ObjectBuilder::new()
                        .schema_type(utoipa::openapi::schema::Type::Integer),
                )
                .description(Some("Seconds until the same request may succeed"))
                .build(),
        )
        .build()
        .into()
}

fn error_builder(description: &str) -> ResponseBuilder {
    ResponseBuilder::new().description(description).content(
        "application/json",
        utoipa::openapi::ContentBuilder::new()
            .schema(Some(utoipa::openapi::Ref::from_schema_name("ErrorBody")))
            .build(),
    )
}

fn common_answers(op: &mut Operation, changes: bool) {
    let mut answers = vec![
        (
            "400",
            error("`bad_request`: a malformed request (its body, a query, a header)."),
        ),
        (
            "404",
            error("`not_found`: nothing at this path, or no such voucher or order."),
        ),
        (
            "503",
            error_retry(
                "`unavailable`: PostgreSQL or Redis is out of reach; `Retry-After` says when to \
                 try again.",
            ),
        ),
    ];
    if changes {
        answers.push((
            "403",
            error("`cross_site`: sent from another site's page; `forbidden`: not an admin."),
        ));
        answers.push(("408", error("`timeout`: the body did not arrive in time.")));
        answers.push(("413", error("`too_large`: the body is over the limit.")));
    }
    for (status, answer) in answers {
        op.responses
            .responses
            .entry(status.to_owned())
            .or_insert(answer);
    }
}

/// The document as served: `api` with what utoipa's model lacks: the webhook the shop sends
/// (OpenAPI 3.1 `webhooks`: a sign-in code to the operator's SMS relay,
/// `SECKILL_SMS_WEBHOOK_URL`, `src/auth/delivery.rs`) and the links between operations.
pub fn with_webhooks(api: &Document) -> String {
    let mut doc = serde_json::to_value(api).unwrap_or_default();
    doc["webhooks"] = serde_json::json!({
        "signInCode": {
            "post": {
                "summary": "A sign-in code, to the operator's SMS relay",
                "description": "Sent to `SECKILL_SMS_WEBHOOK_URL` for each code asked for. \
                    `X-Seckill-Signature: sha256=<hex HMAC-SHA256 of the body, keyed by \
                    SECKILL_SMS_WEBHOOK_SECRET>` lets the relay check it came from the shop. \
                    A failed attempt (no answer, a 5xx) is tried once more; a 4xx is the \
                    relay's refusal.",
                "parameters": [{
                    "name": "X-Seckill-Signature", "in": "header", "required": true,
                    "schema": { "type": "string", "pattern": "^sha256=[0-9a-f]{64}$" }
                }],
                "requestBody": {
                    "required": true,
                    "content": { "application/json": { "schema": {
                        "type": "object",
                        "required": ["phone", "code", "expires_in_s"],
                        "properties": {
                            "phone": { "type": "string", "description": "E.164, `+8613800138000`" },
                            "code": { "type": "string", "pattern": "^[0-9]{6}$" },
                            "expires_in_s": { "type": "integer", "minimum": 1 }
                        }
                    } } }
                },
                "responses": { "2XX": { "description": "The relay took the code." } }
            }
        }
    });
    add_links(&mut doc);
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// The links a client (schemathesis's stateful phase) follows from one answer to the next
/// operation: a voucher created → read, its figures, bought, entered, ended, topped up; an
/// order bought → read, paid, cancelled.
fn add_links(doc: &mut serde_json::Value) {
    let link = |operation: &str, parameter: &str, from: &str| {
        serde_json::json!({
            "operationId": operation,
            "parameters": { parameter: format!("$response.body#/{from}") },
        })
    };
    let created = &mut doc["paths"]["/api/admin/vouchers"]["post"]["responses"]["201"];
    if created.is_object() {
        created["links"] = serde_json::json!({
            "GetVoucher": link("get_voucher", "id", "id"),
            "Stock": link("stock", "id", "id"),
            "Buy": link("buy", "id", "id"),
            "Enter": link("enter", "id", "id"),
            "EndSale": link("end_sale", "id", "id"),
            "AddStock": link("add_stock", "id", "id"),
        });
    }
    let bought = &mut doc["paths"]["/api/vouchers/{id}/orders"]["post"]["responses"]["202"];
    if bought.is_object() {
        bought["links"] = serde_json::json!({
            "GetOrder": link("order", "order_id", "order_id"),
            "Pay": link("pay", "order_id", "order_id"),
            "Cancel": link("cancel", "order_id", "order_id"),
        });
    }
}
