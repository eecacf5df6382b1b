//! The hosted payment page a shopper pays on (a plain form: no JavaScript needed).

use axum::{
    extract::{Path, State},
    http::StatusCode,
    response::{Html, IntoResponse, Redirect, Response},
};

use super::{
    webhooks::{complete, send_later},
    St,
};

/// Escapes text for HTML.
pub(super) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(super) async fn hosted_page(State((fake, _)): St, Path(id): Path<String>) -> Response {
    let f = fake.lock();
    let Some(s) = f.sessions.get(&id) else {
        return (
            StatusCode::NOT_FOUND,
            Html("<h1>No such payment</h1>".to_owned()),
        )
            .into_response();
    };
    if s.status != "open" {
        return (
            StatusCode::GONE,
            Html(format!(
                "<!doctype html><title>Payment closed</title><h1 data-testid=\"stripe-closed\">This payment is {}</h1><a href=\"{}\">Back to the shop</a>",
                s.status,
                esc(&s.cancel_url)
            )),
        )
            .into_response();
    }
    let price = format!(
        "{}.{:02} {}",
        s.amount / 100,
        s.amount % 100,
        s.currency.to_uppercase()
    );
    Html(format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Pay {name} (test)</title></head>\
         <body><main><h1>Test payment</h1><p data-testid=\"stripe-item\">{name}: <strong data-testid=\"stripe-amount\">{price}</strong></p>\
         <form method=\"post\" action=\"/pay/{id}\"><button type=\"submit\" data-testid=\"stripe-pay\">Pay {price}</button></form>\
         <p><a href=\"{cancel}\" data-testid=\"stripe-back\">Back to the shop</a></p></main></body></html>",
        name = esc(&s.name),
        id = esc(&s.id),
        cancel = esc(&s.cancel_url),
    ))
    .into_response()
}

pub(super) async fn hosted_pay(State((fake, http)): St, Path(id): Path<String>) -> Response {
    let success = match fake.lock().sessions.get(&id) {
        Some(s) => s.success_url.replace("{CHECKOUT_SESSION_ID}", &id),
        None => return StatusCode::NOT_FOUND.into_response(),
    };
    match complete(&fake, &id, None) {
        Ok(event) => {
            // Stripe sends the webhook on its own schedule; the shopper is sent back at once.
            send_later(&fake, &http, Some(event));
            Redirect::to(&success).into_response()
        }
        Err(status) => (
            status,
            Html("<h1>This payment cannot be paid</h1>".to_owned()),
        )
            .into_response(),
    }
}
