//! Signing in and out: a code to a phone, the code for a session cookie, and the end of one
//! session or of every one.

use axum::{
    extract::{Extension, State},
    http::{header, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    Json,
};
use seckill::{auth, Core};
use serde::Deserialize;
use webapi::{
    answers::{CodeIssued, SignedIn},
    http::{self as glue, ClientAddr, SessionCookie},
};

use super::{
    error::{ApiJson, ApiResult},
    extract::Shopper,
};

/// A phone number: national (`13800138000`, the shop's country) or `+` and its country code.
#[derive(Deserialize, utoipa::ToSchema)]
pub(super) struct PhoneBody {
    #[schema(pattern = r"^\+?[0-9][0-9 -]{5,19}$", example = "13800138000")]
    phone: String,
}

#[utoipa::path(post, path = "/login/code", tag = "auth", request_body = PhoneBody,
    responses(
        (status = 200, description = "A code is on its way (under dev login, the code itself).", body = CodeIssued),
        (status = 400, description = "`invalid_phone`: not a phone number.", body = crate::rest::error::ErrorBody),
        (status = 429, description = "`rate_limited`: a code was sent moments ago, or too many asked from this address; `Retry-After` says when.", body = crate::rest::error::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the same request may succeed"))),
        (status = 503, description = "`code_not_sent`: the SMS gateway did not take it; asking again is allowed at once.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn login_code(
    State(core): State<Core>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiJson(b): ApiJson<PhoneBody>,
) -> ApiResult<Json<CodeIssued>> {
    let issued = auth::request_code(&core, client, &b.phone).await?;
    Ok(Json(CodeIssued {
        code: issued.dev_code,
    }))
}

/// The phone and the six-digit code sent to it.
#[derive(Deserialize, utoipa::ToSchema)]
pub(super) struct LoginBody {
    #[schema(pattern = r"^\+?[0-9][0-9 -]{5,19}$", example = "13800138000")]
    phone: String,
    #[schema(pattern = "^[0-9]{6}$")]
    code: String,
}

#[utoipa::path(post, path = "/login", tag = "auth", request_body = LoginBody,
    responses(
        (status = 200, description = "Signed in: `Set-Cookie` carries the session.", body = SignedIn,
            headers(("Set-Cookie" = String, description = "`seckill_session=…; HttpOnly; SameSite=Lax`"))),
        (status = 400, description = "`invalid_phone`, `invalid_code`: the code is wrong or has expired.", body = crate::rest::error::ErrorBody),
        (status = 429, description = "`rate_limited`: too many attempts; `Retry-After` says when.", body = crate::rest::error::ErrorBody,
            headers(("Retry-After" = u64, description = "Seconds until the same request may succeed"))),
    ))]
pub(super) async fn login(
    State(core): State<Core>,
    State(cookie): State<SessionCookie>,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    ApiJson(b): ApiJson<LoginBody>,
) -> ApiResult<Response> {
    let signed = auth::sign_in(&core, client, &b.phone, &b.code).await?;
    let cookie = cookie.set(&signed.token, core.config.auth.session_ttl.as_secs());
    let body = Json(SignedIn {
        user_id: signed.principal.user.get(),
    });
    Ok(([(header::SET_COOKIE, cookie)], body).into_response())
}

#[utoipa::path(post, path = "/logout", tag = "auth",
    responses((status = 204, description = "Signed out here (the cookie cleared); also when not signed in.")))]
pub(super) async fn logout(
    State(core): State<Core>,
    State(cookie): State<SessionCookie>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    if let Some(token) = cookie.token(&headers) {
        auth::sign_out(&core, token).await.map_err(glue::fault)?;
    }
    Ok((
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, cookie.clear())],
    )
        .into_response())
}

/// Ends every session of the shopper, this one included (`204`, the cookie cleared).
#[utoipa::path(post, path = "/logout/everywhere", tag = "auth", security(("session" = [])),
    responses(
        (status = 204, description = "Every session of the shopper ended, this one included."),
        (status = 401, description = "`unauthenticated`: not signed in.", body = crate::rest::error::ErrorBody),
    ))]
pub(super) async fn logout_everywhere(
    State(core): State<Core>,
    State(cookie): State<SessionCookie>,
    Shopper(p): Shopper,
) -> ApiResult<Response> {
    auth::sign_out_everywhere(&core, p.user)
        .await
        .map_err(glue::fault)?;
    Ok((
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, cookie.clear())],
    )
        .into_response())
}
