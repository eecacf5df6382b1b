//! Server functions' access to the request: the core handles and the signed-in principal from
//! Leptos's context, and the plain-form redirect. The HTTP glue itself (cookies, principals,
//! error mapping) is [`webapi::http`], which the REST API shares.

use http::header;
use leptos::prelude::*;
use seckill::{auth, auth::Principal, Core};
use webapi::http::{internal, principal, SessionCookie};
pub use webapi::http::{order_id, voucher_id};

use crate::error::AppError;

/// Inside a server function: the core handles.
pub fn core() -> Result<Core, AppError> {
    use_context::<Core>().ok_or_else(|| internal("the core is missing from the context"))
}

/// Inside a server function: the request's principal, or `Unauthenticated`.
pub async fn signed_in(core: &Core) -> Result<Principal, AppError> {
    let parts =
        use_context::<http::request::Parts>().ok_or_else(|| internal("no request parts"))?;
    principal(core, session_cookie(), &parts.headers)
        .await?
        .ok_or(AppError::Unauthenticated)
}

/// Inside a server function: the request's principal if it is an admin; `Unauthenticated` or
/// `Forbidden` otherwise.
pub async fn signed_in_admin(core: &Core) -> Result<auth::Admin, AppError> {
    signed_in(core).await?.as_admin().ok_or(AppError::Forbidden)
}

/// Inside a server function: the address the request came from (the server's accept loop
/// puts it in every request).
pub fn client() -> Result<std::net::IpAddr, AppError> {
    use_context::<http::request::Parts>()
        .and_then(|p| p.extensions.get::<webapi::http::ClientAddr>().copied())
        .map(|webapi::http::ClientAddr(ip)| ip)
        .ok_or_else(|| internal("the request has no client address"))
}

/// Inside a server function: the request's session token, if it sent one.
pub fn request_session_token() -> Option<String> {
    use_context::<http::request::Parts>()
        .and_then(|p| session_cookie().token(&p.headers).map(str::to_owned))
}

/// Inside a server function or a page: the session cookie's form (the server provides it;
/// plain HTTP if it did not).
pub fn session_cookie() -> SessionCookie {
    use_context::<SessionCookie>().unwrap_or(SessionCookie::new(false))
}

/// Inside a server function: sends a browser that posted a plain HTML form (no JavaScript) to
/// `path` with a `303 See Other` (the next request is a GET, whatever the form's method).
/// Calls from the hydrated app are left alone: they stay on their page and use the returned
/// value (`leptos_axum::redirect` would make them navigate too). A `path` that cannot be a
/// header (callers pass checked paths and addresses) is not followed rather than a panic.
pub fn redirect_plain_form(path: &str) {
    if plain_form() && http::HeaderValue::from_str(path).is_ok() {
        leptos_axum::redirect(path);
        if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
            response.set_status(http::StatusCode::SEE_OTHER);
        }
    }
}

/// Inside a server function refusing a plain HTML form's post (no JavaScript): sends the
/// browser to `page` with the refusal in its address, as the framework would send it back to
/// the page the form was on. For a form shown on several rows of one page (Pay now on each
/// of "My orders"), whose refusal, matched by the server function's path alone, would show
/// under every row: `page` is the one subject of the refused call (the order's own page).
pub fn refuse_plain_form_on(page: &str, server_fn: &str, error: &AppError) {
    use leptos::server_fn::error::ServerFnUrlError;
    if !plain_form() {
        return;
    }
    let Ok(url) =
        ServerFnUrlError::new(server_fn, error.clone()).to_url(&format!("http://shop{page}"))
    else {
        return;
    };
    let location = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    redirect_plain_form(&location);
}

/// Whether the request is a plain HTML form's post (it accepts HTML), not the app's own call.
fn plain_form() -> bool {
    use_context::<http::request::Parts>().is_some_and(|p| {
        p.headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/html"))
    })
}
