//! Server functions the UI calls. Each is a thin adapter: read the core and the session, call
//! one core function, map its error. The REST API (server crate) adapts the same functions.

// A form's server function takes one argument per field (create_voucher has eight); the
// `server` macro copies them into client and server code, so the allowance is module-wide.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

use crate::{
    error::AppError,
    wire::{Me, OrderView, VoucherView},
};

#[cfg(feature = "ssr")]
pub mod convert {
    //! Core values into wire types (shared with the REST handlers).
    use chrono::Utc;
    use seckill::{catalog::VoucherState, domain::VoucherStatus, sale};

    use crate::wire::{OrderView, VoucherView};

    pub fn voucher(s: VoucherState) -> VoucherView {
        let status = VoucherStatus::at(&s.voucher.window, s.remaining, Utc::now());
        VoucherView {
            id: s.voucher.id.get(),
            title: s.voucher.title,
            description: s.voucher.description,
            price_cents: s.voucher.price_cents,
            stock: s.voucher.initial_stock,
            remaining: s.remaining,
            begins_at: s.voucher.window.begins_at(),
            ends_at: s.voucher.window.ends_at(),
            status: status.as_str().to_owned(),
        }
    }

    /// The instant a form sent: the browser's RFC 3339 value when it has one, else the
    /// `datetime-local` text read as UTC. Unparsable text goes through as typed, so the core's
    /// validation names the field.
    pub fn instant(rfc3339: &str, local: &str) -> String {
        if !rfc3339.trim().is_empty() {
            return rfc3339.trim().to_owned();
        }
        let local = local.trim();
        ["%Y-%m-%dT%H:%M", "%Y-%m-%dT%H:%M:%S"]
            .iter()
            .find_map(|f| chrono::NaiveDateTime::parse_from_str(local, f).ok())
            .map_or_else(|| local.to_owned(), |t| t.and_utc().to_rfc3339())
    }

    pub fn order(v: sale::OrderView) -> OrderView {
        let reason = match &v.status {
            seckill::domain::OrderStatus::Failed { reason } => Some(reason.clone()),
            _ => None,
        };
        OrderView {
            order_id: v.order.to_string(),
            voucher_id: v.voucher.get(),
            status: v.status.as_str().to_owned(),
            reason,
            created_at: v.created_at,
        }
    }
}

/// How many vouchers the listings show.
pub const LIST_LIMIT: i64 = 200;

/// Every voucher, newest first, with what is left.
#[server(prefix = "/sf")]
pub async fn list_vouchers() -> Result<Vec<VoucherView>, AppError> {
    let core = crate::ssr::core()?;
    let list = seckill::catalog::list(&core, LIST_LIMIT).await?;
    Ok(list.into_iter().map(convert::voucher).collect())
}

/// One voucher.
#[server(prefix = "/sf")]
pub async fn get_voucher(id: i64) -> Result<VoucherView, AppError> {
    let core = crate::ssr::core()?;
    let id = seckill::domain::VoucherId::try_from(id).map_err(|_| AppError::NotFound)?;
    seckill::catalog::get(&core, id)
        .await?
        .map(convert::voucher)
        .ok_or(AppError::NotFound)
}

/// The signed-in user, if any.
#[server(prefix = "/sf")]
pub async fn whoami() -> Result<Option<Me>, AppError> {
    let core = crate::ssr::core()?;
    match crate::ssr::signed_in(&core).await {
        Ok(p) => Ok(Some(Me {
            user_id: p.user.get(),
            phone: p.phone.to_string(),
            is_admin: p.is_admin,
        })),
        Err(AppError::Unauthenticated) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sends a sign-in code; in dev mode returns it.
#[server(prefix = "/sf")]
pub async fn request_code(phone: String) -> Result<Option<String>, AppError> {
    let core = crate::ssr::core()?;
    Ok(seckill::auth::request_code(&core, &phone).await?.dev_code)
}

/// Signs in and sets the session cookie.
#[server(prefix = "/sf")]
pub async fn sign_in(phone: String, code: String) -> Result<Me, AppError> {
    let core = crate::ssr::core()?;
    let signed = seckill::auth::sign_in(&core, &phone, &code).await?;
    let response = expect_context::<leptos_axum::ResponseOptions>();
    response.insert_header(
        http::header::SET_COOKIE,
        crate::ssr::session_cookie(&signed.token, core.config.auth.session_ttl.as_secs()),
    );
    Ok(Me {
        user_id: signed.principal.user.get(),
        phone: signed.principal.phone.to_string(),
        is_admin: signed.principal.is_admin,
    })
}

/// Buys one unit; returns the order ID at once (decimal string).
#[server(prefix = "/sf")]
pub async fn buy(voucher_id: i64) -> Result<String, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let voucher =
        seckill::domain::VoucherId::try_from(voucher_id).map_err(|_| AppError::NotFound)?;
    Ok(seckill::sale::buy(&core, shopper.user, voucher)
        .await?
        .to_string())
}

/// The status of one of the shopper's orders.
#[server(prefix = "/sf")]
pub async fn order_status(order_id: String) -> Result<OrderView, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order = order_id.parse().map_err(|_| AppError::NotFound)?;
    seckill::sale::order_status(&core, shopper.user, order)
        .await?
        .map(convert::order)
        .ok_or(AppError::NotFound)
}

/// Creates a voucher (admins only) and returns its ID. `begins_at`/`ends_at` are RFC 3339 from
/// the browser (its local time zone, converted when hydrated); without JavaScript they are
/// empty and the `*_local` inputs are read as UTC. The core validates every field.
#[server(prefix = "/sf")]
pub async fn create_voucher(
    title: String,
    description: String,
    price_cents: String,
    stock: String,
    begins_local: String,
    ends_local: String,
    #[server(default)] begins_at: String,
    #[server(default)] ends_at: String,
) -> Result<i64, AppError> {
    let core = crate::ssr::core()?;
    let principal = crate::ssr::signed_in(&core).await?;
    let admin = principal.as_admin().ok_or(AppError::Forbidden)?;
    let draft = seckill::domain::VoucherDraft {
        title,
        description,
        price_cents,
        stock,
        begins_at: convert::instant(&begins_at, &begins_local),
        ends_at: convert::instant(&ends_at, &ends_local),
    };
    let id = seckill::catalog::create_voucher(&core, &admin, &draft, chrono::Utc::now()).await?;
    // Browsers without JavaScript posted a plain form: send them to the new voucher.
    leptos_axum::redirect(&format!("/vouchers/{id}"));
    Ok(id.get())
}
