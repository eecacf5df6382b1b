//! The shop in the visitor's language (design.md decision 44): `/lang`, the switch link's
//! target, which keeps the choice in a cookie; and the REST API's error `message`s said again
//! in the request's language (the `error` codes stay as they are).

use axum::{
    extract::{Query, Request},
    http::{header, HeaderValue, StatusCode},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use i18n::Lang;

use crate::rest::error::{ApiError, Spoken};

/// A year: the choice outlives the session.
const COOKIE_MAX_AGE_SECS: u64 = 365 * 24 * 3_600;

/// `/lang?to=zh-CN&next=/vouchers/7`.
#[derive(serde::Deserialize)]
pub struct Switch {
    #[serde(default)]
    to: String,
    #[serde(default)]
    next: Option<String>,
}

/// Remembers the language asked for and goes back to `next` (a path of this site; anything
/// else is the home page, so the link cannot send a visitor elsewhere). A language the shop
/// does not speak changes nothing.
pub async fn switch(Query(q): Query<Switch>) -> Response {
    let next = app::url::safe_next(q.next);
    let mut res = Redirect::to(&next).into_response();
    if let Some(lang) = Lang::from_tag(&q.to) {
        let cookie = format!(
            "{}={}; Path=/; Max-Age={COOKIE_MAX_AGE_SECS}; SameSite=Lax",
            Lang::COOKIE,
            lang.tag()
        );
        if let Ok(value) = HeaderValue::from_str(&cookie) {
            res.headers_mut().insert(header::SET_COOKIE, value);
        }
    }
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// Says an API error's message in the request's language, and names the language of every
/// page and error (`Content-Language`).
pub async fn errors(req: Request, next: Next) -> Response {
    let lang = app::words::of_request(req.headers());
    let mut res = next.run(req).await;
    if let Some(Spoken(error)) = res.extensions_mut().remove::<Spoken>() {
        if lang != Lang::En {
            let mut said = ApiError(error).respond(lang);
            for (name, value) in res.headers() {
                if name != header::CONTENT_LENGTH && !said.headers().contains_key(name) {
                    said.headers_mut().append(name, value.clone());
                }
            }
            *said.status_mut() = res.status();
            res = said;
        }
        name_language(&mut res, lang);
    } else if is_html(&res) && res.status() != StatusCode::NOT_MODIFIED {
        name_language(&mut res, lang);
    }
    res
}

fn name_language(res: &mut Response, lang: Lang) {
    res.headers_mut().insert(
        header::CONTENT_LANGUAGE,
        HeaderValue::from_static(lang.tag()),
    );
}

fn is_html(res: &Response) -> bool {
    res.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"))
}
