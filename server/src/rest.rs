//! The public REST API (design.md §5): thin adapters over the core, sharing the UI's error type
//! ([`AppError`]) so both speak the same codes.

use app::{api::convert, error::AppError, ssr as glue};
use axum::{
    extract::{FromRequest, FromRequestParts, Path, Request, State},
    http::{header, request::Parts, HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use seckill::{
    auth::{self, Admin, Principal},
    catalog,
    domain::{OrderId, VoucherDraft, VoucherId},
    sale, Core,
};
use serde::Deserialize;
use serde_json::{json, Value};

use crate::startup::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/health", get(health))
        .route("/login/code", post(login_code))
        .route("/login", post(login))
        .route("/logout", post(logout))
        .route("/vouchers", get(list_vouchers))
        .route("/vouchers/{id}", get(get_voucher))
        .route("/vouchers/{id}/orders", post(buy))
        .route("/orders/{order_id}", get(order))
        .route("/admin/vouchers", post(create_voucher))
        .fallback(|| async { ApiError(AppError::NotFound) })
}

/// [`AppError`] as a JSON response `{"error", "message"[, "fields"]}`.
pub struct ApiError(pub AppError);

impl<E: Into<AppError>> From<E> for ApiError {
    fn from(e: E) -> Self {
        Self(e.into())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut body = json!({ "error": self.0.code(), "message": self.0.to_string() });
        if let AppError::Invalid(fields) = &self.0 {
            body["fields"] = fields
                .iter()
                .map(|f| (f.field.clone(), Value::from(f.message.clone())))
                .collect();
        }
        (status, Json(body)).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;

/// `Json<T>` whose rejections (bad JSON, wrong types) are `400 bad_request` with a message.
pub struct ApiJson<T>(pub T);

impl<S: Send + Sync, T: serde::de::DeserializeOwned> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;
    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(Self(v)),
            Err(rejection) => Err(ApiError(AppError::BadRequest(rejection.body_text()))),
        }
    }
}

/// The signed-in shopper (from the session cookie, never from the body).
pub struct Shopper(pub Principal);

impl FromRequestParts<AppState> for Shopper {
    type Rejection = ApiError;
    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        glue::principal(&state.core, &parts.headers)
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

async fn health(State(core): State<Core>) -> Response {
    let h = core.health().await;
    let status = if h.ok() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        Json(json!({ "postgres": h.postgres, "redis": h.redis })),
    )
        .into_response()
}

pub async fn metrics(State(state): State<AppState>) -> Response {
    match state.metrics {
        Some(h) => (
            [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
            h.render(),
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

#[derive(Deserialize)]
struct PhoneBody {
    phone: String,
}

async fn login_code(
    State(core): State<Core>,
    ApiJson(b): ApiJson<PhoneBody>,
) -> ApiResult<Json<Value>> {
    let issued = auth::request_code(&core, &b.phone).await?;
    Ok(Json(match issued.dev_code {
        Some(code) => json!({ "code": code }),
        None => json!({}),
    }))
}

#[derive(Deserialize)]
struct LoginBody {
    phone: String,
    code: String,
}

async fn login(State(core): State<Core>, ApiJson(b): ApiJson<LoginBody>) -> ApiResult<Response> {
    let signed = auth::sign_in(&core, &b.phone, &b.code).await?;
    let cookie = glue::session_cookie(&signed.token, core.config.auth.session_ttl.as_secs());
    let body = Json(json!({ "user_id": signed.principal.user.get() }));
    Ok(([(header::SET_COOKIE, cookie)], body).into_response())
}

async fn logout(State(core): State<Core>, headers: HeaderMap) -> ApiResult<Response> {
    if let Some(token) = glue::session_token(&headers) {
        auth::sign_out(&core, &token)
            .await
            .map_err(glue::internal)?;
    }
    Ok((
        StatusCode::NO_CONTENT,
        [(header::SET_COOKIE, glue::clear_session_cookie())],
    )
        .into_response())
}

async fn list_vouchers(State(core): State<Core>) -> ApiResult<Json<Value>> {
    let list = catalog::list(&core, app::api::LIST_LIMIT).await?;
    Ok(Json(json!(list
        .into_iter()
        .map(convert::voucher)
        .collect::<Vec<_>>())))
}

async fn get_voucher(State(core): State<Core>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let id: VoucherId = id.parse().map_err(|_| AppError::NotFound)?;
    let v = catalog::get(&core, id).await?.ok_or(AppError::NotFound)?;
    Ok(Json(json!(convert::voucher(v))))
}

async fn create_voucher(
    State(core): State<Core>,
    AdminUser(admin): AdminUser,
    ApiJson(body): ApiJson<serde_json::Map<String, Value>>,
) -> ApiResult<Response> {
    let draft = draft_from_json(&body);
    let id = catalog::create_voucher(&core, &admin, &draft, chrono::Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(json!({ "id": id.get() }))).into_response())
}

/// JSON values become the draft's text fields, so the core's rules and messages apply to both
/// the form and the API; a value of the wrong kind fails the field's rule with its message.
fn draft_from_json(body: &serde_json::Map<String, Value>) -> VoucherDraft {
    let text = |name: &str| match body.get(name) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        Some(Value::Null) | None => String::new(),
        Some(other) => format!("\u{0}{other}"),
    };
    VoucherDraft {
        title: text("title"),
        description: text("description"),
        price_cents: text("price_cents"),
        stock: text("stock"),
        begins_at: text("begins_at"),
        ends_at: text("ends_at"),
    }
}

async fn buy(
    State(core): State<Core>,
    Shopper(p): Shopper,
    Path(id): Path<String>,
) -> ApiResult<Response> {
    let voucher: VoucherId = id.parse().map_err(|_| AppError::NotFound)?;
    let order = sale::buy(&core, p.user, voucher).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "order_id": order.to_string() })),
    )
        .into_response())
}

async fn order(
    State(core): State<Core>,
    Shopper(p): Shopper,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let order: OrderId = id.parse().map_err(|_| AppError::NotFound)?;
    let view = sale::order_status(&core, p.user, order)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(Json(json!(convert::order(view))))
}
