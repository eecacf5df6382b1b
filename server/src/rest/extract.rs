//! Who is asking: the signed-in shopper or admin, from the session cookie (never the body, I7).

use axum::{
    extract::{FromRequestParts, RawPathParams},
    http::request::Parts,
};
use seckill::auth::{Admin, Principal};
use webapi::{error::AppError, http as glue};

use super::error::ApiError;
use crate::state::AppState;

/// The signed-in shopper: 401 when signed out.
pub struct Shopper(pub Principal);

impl FromRequestParts<AppState> for Shopper {
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        glue::principal(&state.core, state.cookie, &parts.headers)
            .await?
            .map(Self)
            .ok_or(ApiError(AppError::Unauthenticated))
    }
}

/// A signed-in admin: 401 when signed out, 403 when not an admin.
pub struct AdminUser(pub Admin);

impl FromRequestParts<AppState> for AdminUser {
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let Shopper(p) = Shopper::from_request_parts(parts, state).await?;
        p.as_admin().map(Self).ok_or(ApiError(AppError::Forbidden))
    }
}

/// The one dynamic segment of an API path, parsed as a `T` (a voucher's or an order's ID). A
/// segment that is not valid text (`%ff`) or not a `T` names nothing here: `404 not_found` in
/// JSON, like an unknown ID. The segment is read as the router decoded it (`RawPathParams`),
/// not through `Path`'s serde deserializer, which cost a buy about a microsecond (issue #53).
pub struct ApiPath<T>(pub T);

impl<S: Send + Sync, T: std::str::FromStr> FromRequestParts<S> for ApiPath<T> {
    type Rejection = ApiError;
    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError(AppError::NotFound))?;
        let mut values = params.iter().map(|(_, value)| value);
        match (values.next(), values.next()) {
            (Some(text), None) => text
                .parse()
                .map(Self)
                .map_err(|_| ApiError(AppError::NotFound)),
            _ => Err(ApiError(AppError::NotFound)),
        }
    }
}
