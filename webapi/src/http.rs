//! The HTTP side's glue, shared by the server functions and the REST handlers: the session
//! cookie, the principal of a request, IDs from paths and forms, and core errors mapped into
//! [`AppError`] (a store out of reach is a 503, anything unexpected a 500 with a logged
//! reference).

use http::{header, HeaderMap, HeaderValue};
use seckill::{
    auth::{self, LoginError, Principal},
    catalog::{admin::SaleAdminError, CreateVoucherError},
    orders::checkout::CheckoutError,
    sale::BuyError,
    Backend, Core, Unavailable,
};

use crate::error::AppError;

/// The address a request came from: the peer's, or the client named by a trusted proxy in
/// `X-Forwarded-For` (the server's accept loop puts it in every request's extensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::IpAddr);

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "seckill_session";

/// The session token in a request's `Cookie` headers: the value of the cookie named exactly
/// [`SESSION_COOKIE`] (the one cookie parser of the server; the page cache asks it too).
pub fn session_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .map(|(_, value)| value)
}

/// `Set-Cookie` opening a session: HttpOnly, SameSite=Lax, whole site.
pub fn session_cookie(token: &str, max_age_secs: u64) -> HeaderValue {
    let v =
        format!("{SESSION_COOKIE}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}");
    HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// `Set-Cookie` ending the session.
pub fn clear_session_cookie() -> HeaderValue {
    session_cookie("", 0)
}

/// The principal of a request, if signed in.
pub async fn principal(core: &Core, headers: &HeaderMap) -> Result<Option<Principal>, AppError> {
    match session_token(headers) {
        Some(token) => auth::session(core, token).await.map_err(fault),
        None => Ok(None),
    }
}

/// A voucher ID from a form or a path: one that cannot exist is a voucher that does not (404).
pub fn voucher_id(raw: i64) -> Result<domain::VoucherId, AppError> {
    domain::VoucherId::try_from(raw).map_err(|_| AppError::NotFound)
}

/// An order ID from a form or a path (decimal): one that cannot exist is an order that does not
/// (404).
pub fn order_id(raw: &str) -> Result<domain::OrderId, AppError> {
    raw.parse().map_err(|_| AppError::NotFound)
}

/// A failure that is not the user's: `Unavailable` (503, retry shortly) when a store is out of
/// reach, logged as a warning; otherwise [`internal`].
pub fn fault<E: Unavailable + std::fmt::Display>(cause: E) -> AppError {
    if cause.is_unavailable() {
        tracing::warn!(error = %cause, "a store is unreachable; answering 503");
        AppError::Unavailable
    } else {
        internal(cause)
    }
}

/// Logs an unexpected failure with a reference and returns the opaque error.
pub fn internal(cause: impl std::fmt::Display) -> AppError {
    let reference = uuid::Uuid::new_v4().simple().to_string();
    let reference = reference.get(..12).unwrap_or(&reference).to_owned();
    tracing::error!(%reference, error = %cause, "internal error");
    AppError::Internal(reference)
}

impl From<BuyError> for AppError {
    fn from(e: BuyError) -> Self {
        match e {
            BuyError::NotFound => Self::NotFound,
            BuyError::SoldOut => Self::SoldOut,
            BuyError::AlreadyBought(order) => Self::AlreadyBought(order),
            BuyError::NotStarted => Self::NotStarted,
            BuyError::Ended => Self::Ended,
            BuyError::RateLimited => Self::RateLimited,
            BuyError::IdsExhausted => {
                tracing::error!("order IDs exhausted for the day");
                Self::Unavailable
            }
            e @ (BuyError::Backend(_) | BuyError::Preload(_)) => fault(e),
        }
    }
}

impl From<LoginError> for AppError {
    fn from(e: LoginError) -> Self {
        match e {
            LoginError::InvalidPhone(_) => Self::InvalidPhone,
            LoginError::ResendIn(secs) => Self::CodeResendWait(secs),
            LoginError::InvalidCode => Self::InvalidCode,
            LoginError::PhoneLocked(secs) | LoginError::ClientLimited(secs) => {
                Self::TryAgainIn(secs)
            }
            // Logged (the phone masked) where delivery failed.
            LoginError::NotDelivered(_) => Self::CodeNotSent,
            LoginError::Backend(e) => fault(e),
        }
    }
}

impl From<CreateVoucherError> for AppError {
    fn from(e: CreateVoucherError) -> Self {
        match e {
            CreateVoucherError::Invalid(fields) => Self::Invalid(fields),
            e @ (CreateVoucherError::Backend(_) | CreateVoucherError::Preload(..)) => fault(e),
        }
    }
}

impl From<CheckoutError> for AppError {
    fn from(e: CheckoutError) -> Self {
        match e {
            CheckoutError::NotFound => Self::NotFound,
            CheckoutError::StillQueued => Self::OrderQueued,
            CheckoutError::Failed => Self::OrderFailed,
            CheckoutError::Cancelled => Self::OrderCancelled,
            CheckoutError::Expired => Self::PaymentExpired,
            CheckoutError::AlreadyPaid => Self::AlreadyPaid,
            CheckoutError::Declined(why) => Self::PaymentDeclined(why),
            e @ (CheckoutError::PaymentUnavailable(_) | CheckoutError::Backend(_)) => fault(e),
        }
    }
}

impl From<SaleAdminError> for AppError {
    fn from(e: SaleAdminError) -> Self {
        match e {
            SaleAdminError::NotFound => Self::NotFound,
            SaleAdminError::Ended => Self::Ended,
            SaleAdminError::Invalid(fields) => Self::Invalid(fields),
            // Another instance is changing or restoring the same sale: try again shortly.
            SaleAdminError::Busy(_) | SaleAdminError::Fenced(_) => {
                tracing::warn!(error = %e, "a sale change stood down");
                Self::Unavailable
            }
            e @ (SaleAdminError::Lock(_)
            | SaleAdminError::Backend(_)
            | SaleAdminError::Restock(_)) => fault(e),
        }
    }
}

impl From<Backend> for AppError {
    fn from(e: Backend) -> Self {
        fault(e)
    }
}
