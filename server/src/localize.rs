//! The shop in the visitor's language (design.md decision 44): `/lang`, the switch link's
//! target, which keeps the choice in a cookie; and the REST API's error `message`s said again
//! in the request's language (the `error` codes stay as they are), the reasons of a malformed
//! request included: each is a catalogue sentence ([`Malformed`]), and what exactly was wrong
//! is for a developer, in the server's log.

use axum::{
    extract::{Query, Request},
    http::{header, HeaderValue, StatusCode},
    middleware::Next,
    response::{IntoResponse, Redirect, Response},
};
use i18n::{Lang, Texts};
use webapi::error::AppError;

use crate::rest::error::{ApiError, Spoken};

/// Why a request is malformed (`400 bad_request`), in the catalogue's words: an error's
/// `message` names one of these in the request's language.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Malformed {
    /// The body stopped before its end.
    CutOff,
    /// The request target is not a path (the authority form).
    NotAPath,
    /// A JSON route's body sent without `Content-Type: application/json`.
    NotJson,
    /// A JSON route's body that is not JSON.
    JsonSyntax,
    /// JSON whose fields are missing or of the wrong type.
    JsonFields,
    /// The payments listing asked for another `state`.
    StateFilter,
    /// An `Idempotency-Key` that is not 1 to 100 visible ASCII characters.
    IdempotencyKey,
    /// Anything else, such as a refusal the routing layers wrote in their own words.
    Unreadable,
}

impl Malformed {
    const ALL: [Self; 8] = [
        Self::CutOff,
        Self::NotAPath,
        Self::NotJson,
        Self::JsonSyntax,
        Self::JsonFields,
        Self::StateFilter,
        Self::IdempotencyKey,
        Self::Unreadable,
    ];

    fn words(self, t: Texts) -> &'static str {
        match self {
            Self::CutOff => t.bad_request_cut_off(),
            Self::NotAPath => t.bad_request_not_a_path(),
            Self::NotJson => t.bad_request_not_json(),
            Self::JsonSyntax => t.bad_request_json_syntax(),
            Self::JsonFields => t.bad_request_json_fields(),
            Self::StateFilter => t.bad_request_state_filter(),
            Self::IdempotencyKey => t.bad_request_idempotency_key(),
            Self::Unreadable => t.bad_request_unreadable(),
        }
    }

    /// The `400 bad_request` for this reason, in English words; [`in_language`] says them in
    /// the request's language.
    pub fn error(self) -> AppError {
        AppError::BadRequest(self.words(Lang::En.texts()).to_owned())
    }

    /// The reason whose English words are `why`, if the catalogue has it.
    fn of(why: &str) -> Option<Self> {
        let en = Lang::En.texts();
        Self::ALL.into_iter().find(|m| m.words(en) == why)
    }
}

/// `error` as it is said in `lang`: a `bad_request`'s reason in the catalogue's words (a reason
/// the catalogue does not have, which some code wrote in English, as its general one), and a
/// `bad_signature`'s too. English is as it was written.
pub fn in_language(error: AppError, lang: Lang) -> AppError {
    if lang == Lang::En {
        return error;
    }
    let t = lang.texts();
    match error {
        AppError::BadRequest(why) => {
            let reason = Malformed::of(&why).unwrap_or_else(|| {
                tracing::debug!(reason = %why, "a malformed request's reason not in the catalogue");
                Malformed::Unreadable
            });
            AppError::BadRequest(reason.words(t).to_owned())
        }
        AppError::BadSignature(why) => {
            tracing::debug!(reason = %why, "a notification refused");
            AppError::BadSignature(t.bad_signature_unverified().to_owned())
        }
        other => other,
    }
}

/// A refusal made outside [`errors`] (by the screen around it): the JSON error in `lang`,
/// naming its language.
pub fn refusal(error: AppError, lang: Lang) -> Response {
    let mut res = ApiError(error).respond(lang);
    name_language(&mut res, lang);
    res
}

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

tokio::task_local! {
    /// The language of the request being answered, for the errors made while answering it.
    static LANGUAGE: Lang;
}

/// The language of the request being answered ([`errors`] sets it; English outside).
pub fn current() -> Lang {
    LANGUAGE.try_with(|lang| *lang).unwrap_or(Lang::En)
}

/// Finds the request's language once and answers the request within it, so an API error says
/// its message in that language as it is made (once: no English first, no second rendering);
/// then names the language of every page and error (`Content-Language`).
pub async fn errors(req: Request, next: Next) -> Response {
    let lang = app::words::of_request(req.headers());
    let mut res = LANGUAGE.scope(lang, next.run(req)).await;
    let spoken = res.extensions_mut().remove::<Spoken>().is_some();
    if spoken || (is_html(&res) && res.status() != StatusCode::NOT_MODIFIED) {
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
