//! How the REST API answers an error: [`AppError`] as JSON `{"error", "message"[, "fields"]}`,
//! and JSON bodies whose rejections answer the same way.

use axum::{
    extract::{FromRequest, Request},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};

use std::sync::OnceLock;

use axum::body::Bytes;
use webapi::error::AppError;

use crate::localize::Malformed;

/// [`AppError`] as a JSON response.
pub struct ApiError(pub AppError);

impl<E: Into<AppError>> From<E> for ApiError {
    fn from(e: E) -> Self {
        Self(e.into())
    }
}

impl IntoResponse for ApiError {
    /// In the language of the request being answered ([`crate::localize::current`]: English
    /// outside [`crate::localize::errors`]).
    fn into_response(self) -> Response {
        let mut res = self.respond(crate::localize::current());
        res.extensions_mut().insert(Spoken);
        res
    }
}

/// Every error the API answers: a stable `error` code, a `message` for people in the request's
/// language, and for `invalid` each field's message (in English: data for the caller).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The machine code (`sold_out`, `invalid`, `unauthenticated`, …); never translated.
    pub error: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<std::collections::BTreeMap<String, String>>,
}

/// Marks a JSON error response: [`crate::localize::errors`] names its language.
#[derive(Debug, Clone, Copy)]
pub struct Spoken;

/// The refusals whose body never changes (a code and a sentence), each made once per language
/// and then shared: a rush answers tens of thousands of `sold_out` a second, and each would
/// otherwise allocate its code, its sentence and its JSON (issue #53).
fn fixed(error: &AppError) -> Option<usize> {
    Some(match error {
        AppError::Unauthenticated => 0,
        AppError::Forbidden => 1,
        AppError::CrossSite => 2,
        AppError::NotFound => 3,
        AppError::SoldOut => 4,
        AppError::NotStarted => 5,
        AppError::Ended => 6,
        AppError::RateLimited => 7,
        AppError::DrawPending => 8,
        AppError::EntriesNotOpen => 9,
        AppError::EntriesClosed => 10,
        AppError::NotADraw => 11,
        AppError::DrawCommitted => 12,
        AppError::TooManyStreams => 13,
        _ => return None,
    })
}

const FIXED: usize = 14;

/// [`fixed`]'s bodies, by refusal and language, made on first use.
static FIXED_BODIES: [[OnceLock<Bytes>; 2]; FIXED] =
    [const { [const { OnceLock::new() }; 2] }; FIXED];

fn lang_index(lang: i18n::Lang) -> usize {
    match lang {
        i18n::Lang::En => 0,
        i18n::Lang::ZhCn => 1,
    }
}

impl ApiError {
    /// The response, its `message` in `lang` (the `error` code is the same in every language),
    /// a malformed request's reason included ([`crate::localize::in_language`]).
    pub fn respond(&self, lang: i18n::Lang) -> Response {
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut res = match fixed(&self.0) {
            Some(i) => {
                let body = FIXED_BODIES[i][lang_index(lang)]
                    .get_or_init(|| Bytes::from(self.body(lang)))
                    .clone();
                (
                    status,
                    [(
                        header::CONTENT_TYPE,
                        HeaderValue::from_static("application/json"),
                    )],
                    body,
                )
                    .into_response()
            }
            None => (
                status,
                [(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                )],
                self.body(lang),
            )
                .into_response(),
        };
        if let Some(secs) = self.0.retry_after() {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
    }

    /// The JSON body in `lang`.
    fn body(&self, lang: i18n::Lang) -> Vec<u8> {
        let said = crate::localize::in_language(self.0.clone(), lang);
        let body = ErrorBody {
            error: self.0.code().to_owned(),
            message: said.message(lang),
            fields: match &self.0 {
                AppError::Invalid(fields) => Some(
                    fields
                        .0
                        .iter()
                        .map(|f| (f.field.clone(), f.message.clone()))
                        .collect(),
                ),
                _ => None,
            },
        };
        // Strings and a map of strings: serde_json cannot fail on them.
        serde_json::to_vec(&body).unwrap_or_default()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// `Json<T>` whose rejections (bad JSON, wrong types) are `400 bad_request` with a message:
/// which of the catalogue's reasons it is; serde's own words, for a developer, go to the log.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        use axum::extract::rejection::JsonRejection;
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Self(v)),
            Err(rejection) => {
                let reason = match &rejection {
                    JsonRejection::MissingJsonContentType(_) => Malformed::NotJson,
                    JsonRejection::JsonSyntaxError(_) => Malformed::JsonSyntax,
                    JsonRejection::JsonDataError(_) => Malformed::JsonFields,
                    _ => Malformed::Unreadable,
                };
                tracing::debug!(detail = %rejection.body_text(), "a JSON body refused");
                Err(ApiError(reason.error()))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EVERY_FIXED: [AppError; FIXED] = [
        AppError::Unauthenticated,
        AppError::Forbidden,
        AppError::CrossSite,
        AppError::NotFound,
        AppError::SoldOut,
        AppError::NotStarted,
        AppError::Ended,
        AppError::RateLimited,
        AppError::DrawPending,
        AppError::EntriesNotOpen,
        AppError::EntriesClosed,
        AppError::NotADraw,
        AppError::DrawCommitted,
        AppError::TooManyStreams,
    ];

    #[test]
    fn each_fixed_refusal_has_its_own_place_and_its_words_in_each_language() {
        let mut seen = std::collections::HashSet::new();
        for e in EVERY_FIXED {
            let i = fixed(&e).expect("fixed");
            assert!(i < FIXED && seen.insert(i), "{e:?} at {i}");
            for lang in i18n::Lang::ALL {
                let api = ApiError(e.clone());
                // Twice: the second answer is the shared one, the same bytes.
                for _ in 0..2 {
                    let res = api.respond(lang);
                    assert_eq!(res.status().as_u16(), e.status());
                    let cached = FIXED_BODIES[i][lang_index(lang)].get().expect("made");
                    let fresh: serde_json::Value =
                        serde_json::from_slice(&api.body(lang)).expect("json");
                    assert_eq!(
                        serde_json::from_slice::<serde_json::Value>(cached).expect("json"),
                        fresh
                    );
                    assert_eq!(fresh["error"], e.code());
                    assert_eq!(fresh["message"], e.message(lang));
                }
            }
        }
        // Not fixed: what carries a value.
        assert_eq!(fixed(&AppError::TryAgainIn(3)), None);
        assert_eq!(fixed(&AppError::BadRequest("x".into())), None);
    }
}
