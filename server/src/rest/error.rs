//! How the REST API answers an error: [`AppError`] as JSON `{"error", "message"[, "fields"]}`,
//! and JSON bodies whose rejections answer the same way.

use axum::{
    extract::{FromRequest, Request},
    http::{header, HeaderValue, StatusCode},
    response::{IntoResponse, Response},
    Json,
};

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

impl ApiError {
    /// The response, its `message` in `lang` (the `error` code is the same in every language),
    /// a malformed request's reason included ([`crate::localize::in_language`]).
    pub fn respond(&self, lang: i18n::Lang) -> Response {
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
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
        let mut res = (status, Json(body)).into_response();
        if let Some(secs) = self.0.retry_after() {
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        res
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
