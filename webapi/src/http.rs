//! The HTTP side's glue, shared by the server functions and the REST handlers: the session
//! cookie, the principal of a request, IDs from paths and forms, and core errors mapped into
//! [`AppError`] (a store out of reach is a 503, anything unexpected a 500 with a logged
//! reference).

use http::{header, HeaderMap, HeaderValue};
use seckill::{
    auth::{self, LoginError, Principal},
    catalog::{admin::SaleAdminError, CreateVoucherError},
    draw::DrawError,
    orders::{checkout::CheckoutError, notify::NotifyError},
    sale::BuyError,
    Backend, Core, Unavailable,
};

use crate::error::AppError;

/// The address a request came from: the peer's, or the client named by a trusted proxy in
/// `X-Forwarded-For` (the server's accept loop puts it in every request's extensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientAddr(pub std::net::IpAddr);

/// The session cookie: `__Host-seckill_session`, `Secure`, when the shop is served over HTTPS
/// only (every `SECKILL_PUBLIC_ORIGIN` is `https://`), so it never travels in clear and no
/// subdomain can set or shadow it; `seckill_session` otherwise (plain HTTP on loopback). Both are
/// HttpOnly, SameSite=Lax, for the whole site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionCookie {
    secure: bool,
}

impl SessionCookie {
    const PLAIN_NAME: &'static str = "seckill_session";
    const SECURE_NAME: &'static str = "__Host-seckill_session";

    pub fn new(secure: bool) -> Self {
        Self { secure }
    }

    pub fn name(self) -> &'static str {
        if self.secure {
            Self::SECURE_NAME
        } else {
            Self::PLAIN_NAME
        }
    }

    /// The session token in a request's `Cookie` headers: the value of the cookie named exactly
    /// [`Self::name`] (the one cookie parser of the server).
    pub fn token(self, headers: &HeaderMap) -> Option<&str> {
        cookie(headers, self.name())
    }

    /// `Set-Cookie` opening a session.
    pub fn set(self, token: &str, max_age_secs: u64) -> HeaderValue {
        let secure = if self.secure { "; Secure" } else { "" };
        let v = format!(
            "{}={token}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{secure}",
            self.name()
        );
        HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static(""))
    }

    /// `Set-Cookie` ending the session.
    pub fn clear(self) -> HeaderValue {
        self.set("", 0)
    }
}

/// Whether a request carries a session cookie of either name (valid or not): the page cache
/// keeps such a page to its visitor.
pub fn has_session_cookie(headers: &HeaderMap) -> bool {
    SessionCookie::new(false).token(headers).is_some()
        || SessionCookie::new(true).token(headers).is_some()
}

fn cookie<'h>(headers: &'h HeaderMap, wanted: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == wanted)
        .map(|(_, value)| value)
}

/// The principal of a request, if signed in.
pub async fn principal(
    core: &Core,
    cookie: SessionCookie,
    headers: &HeaderMap,
) -> Result<Option<Principal>, AppError> {
    match cookie.token(headers) {
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
            BuyError::DrawPending => Self::DrawPending,
            BuyError::IdsExhausted => {
                tracing::error!("order IDs exhausted for the day");
                Self::Unavailable
            }
            e @ (BuyError::Backend(_) | BuyError::Preload(_)) => fault(e),
        }
    }
}

impl From<DrawError> for AppError {
    fn from(e: DrawError) -> Self {
        match e {
            DrawError::NotFound => Self::NotFound,
            DrawError::NotADraw => Self::NotADraw,
            DrawError::EntriesNotOpen => Self::EntriesNotOpen,
            DrawError::EntriesClosed => Self::EntriesClosed,
            DrawError::ClientLimited(secs) => Self::TryAgainIn(secs),
            e @ (DrawError::Backend(_)
            | DrawError::Preload(_)
            | DrawError::Lock(_)
            | DrawError::Beacon(_)
            | DrawError::KeyNotHeld(_)) => fault(e),
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
            e @ (CreateVoucherError::Backend(_) | CreateVoucherError::Beacon(_)) => fault(e),
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
            CheckoutError::Confirmed => Self::OrderConfirmed,
            CheckoutError::PaymentUnavailable(why) => {
                tracing::warn!(error = %why, "the payment provider did not answer; answering 503");
                Self::PaymentUnavailable
            }
            e @ CheckoutError::Backend(_) => fault(e),
        }
    }
}

impl From<seckill::orders::refund_order::AdminRefundError> for AppError {
    fn from(e: seckill::orders::refund_order::AdminRefundError) -> Self {
        use seckill::orders::refund_order::AdminRefundError as E;
        match e {
            E::NotFound => Self::NotFound,
            E::NotPaid => Self::NotPaid,
            e @ E::Backend(_) => fault(e),
        }
    }
}

impl From<NotifyError> for AppError {
    fn from(e: NotifyError) -> Self {
        match e {
            NotifyError::NotHere => Self::NotFound,
            NotifyError::Refused(why) => Self::BadSignature(why.to_owned()),
            e @ NotifyError::Backend(_) => fault(e),
        }
    }
}

impl From<SaleAdminError> for AppError {
    fn from(e: SaleAdminError) -> Self {
        match e {
            SaleAdminError::NotFound => Self::NotFound,
            SaleAdminError::Ended => Self::Ended,
            SaleAdminError::DrawCommitted => Self::DrawCommitted,
            SaleAdminError::Invalid(fields) => Self::Invalid(fields),
            SaleAdminError::NotEditable(seckill::domain::EditRefusal::Ended) => Self::Ended,
            SaleAdminError::NotEditable(_) => Self::SaleStarted,
            // Another instance is changing or restoring the same sale: try again shortly.
            SaleAdminError::Busy(_) | SaleAdminError::Fenced(_) => {
                tracing::warn!(error = %e, "a sale change stood down");
                Self::Unavailable
            }
            e @ (SaleAdminError::Lock(_)
            | SaleAdminError::Backend(_)
            | SaleAdminError::Beacon(_)
            | SaleAdminError::Restock(_)) => fault(e),
        }
    }
}

impl From<seckill::reminders::ReminderError> for AppError {
    fn from(e: seckill::reminders::ReminderError) -> Self {
        use seckill::reminders::ReminderError as E;
        match e {
            E::NotFound => Self::NotFound,
            E::Opened => Self::SaleOpen,
            E::Sending => Self::ReminderSending,
            e @ E::Backend(_) => fault(e),
        }
    }
}

impl From<Backend> for AppError {
    fn from(e: Backend) -> Self {
        fault(e)
    }
}

#[cfg(test)]
mod cookie_tests {
    use super::*;

    fn with_cookie(v: &'static str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::COOKIE, HeaderValue::from_static(v));
        h
    }

    #[test]
    fn over_https_the_cookie_is_secure_and_host_only() {
        let secure = SessionCookie::new(true).set("ab", 60);
        let secure = secure.to_str().expect("ascii");
        assert!(
            secure.starts_with("__Host-seckill_session=ab; Path=/;"),
            "{secure}"
        );
        assert!(
            secure.contains("; Secure") && !secure.contains("Domain"),
            "{secure}"
        );
        let plain = SessionCookie::new(false).set("ab", 60);
        assert!(!plain.to_str().expect("ascii").contains("Secure"));
    }

    #[test]
    fn each_mode_reads_its_own_cookie_only() {
        let h = with_cookie("a=1; seckill_session=plain; __Host-seckill_session=secure");
        assert_eq!(SessionCookie::new(false).token(&h), Some("plain"));
        assert_eq!(SessionCookie::new(true).token(&h), Some("secure"));
        // A name that only starts like the session's is not it.
        let h = with_cookie("seckill_session2=x; seckill_sessionx=y");
        assert!(!has_session_cookie(&h));
        assert!(has_session_cookie(&with_cookie("__Host-seckill_session=x")));
    }
}

#[cfg(test)]
mod recorded_refusal_tests {
    use seckill::{
        auth::audit::ActionError, catalog::CreateVoucherError, domain::EditRefusal,
        orders::refund_order::AdminRefundError,
    };

    use super::*;

    /// The code an admin's refusal is recorded with is the code the API answers with, and the
    /// admins' page can say it again.
    fn recorded_as_answered<E: ActionError>(e: E, answered: AppError) {
        let code = e.refusal_code().expect("a refusal");
        assert_eq!(code, answered.code(), "{e}");
        assert_eq!(
            AppError::of_recorded_refusal(code).map(|r| r.code()),
            Some(code)
        );
    }

    #[test]
    fn every_refusal_an_admin_meets_is_recorded_by_the_code_the_api_answers() {
        let sale = |e: SaleAdminError| AppError::from(e);
        for e in [
            || SaleAdminError::NotFound,
            || SaleAdminError::Ended,
            || SaleAdminError::DrawCommitted,
            || SaleAdminError::Invalid(domain::FieldErrors::default()),
            || SaleAdminError::NotEditable(EditRefusal::Started),
            || SaleAdminError::NotEditable(EditRefusal::EntriesOpen),
            || SaleAdminError::NotEditable(EditRefusal::Ended),
        ] {
            recorded_as_answered(e(), sale(e()));
        }
        recorded_as_answered(
            CreateVoucherError::Invalid(domain::FieldErrors::default()),
            AppError::from(CreateVoucherError::Invalid(domain::FieldErrors::default())),
        );
        for e in [|| AdminRefundError::NotFound, || AdminRefundError::NotPaid] {
            recorded_as_answered(e(), AppError::from(e()));
        }
        // A store out of reach is a failure, not a refusal.
        assert_eq!(
            SaleAdminError::Busy(seckill::domain::VoucherId::from_db(1)).refusal_code(),
            None
        );
    }
}
