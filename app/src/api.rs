//! Server functions the UI calls. Each is a thin adapter: read the core and the session, call
//! one core function, map its error. The REST API (server crate) adapts the same functions.
//! Each has a fixed URL (`/sf/<name>`): plain HTML forms post to it, so it must not change
//! between builds.

// A form's server function takes one argument per field (create_voucher has eight); the
// `server` macro copies them into client and server code, so the allowance is module-wide.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

use crate::{
    error::AppError,
    wire::{ConsoleView, Me, OrderDetail, OrderView, StockNow, VoucherDetail, VoucherView},
};

#[cfg(feature = "ssr")]
pub mod convert {
    //! Core values into wire types (shared with the REST handlers).
    use chrono::Utc;
    use seckill::{
        catalog::{console, VoucherState},
        sale,
    };

    use crate::wire::{
        ChartView, ConsoleRow, ConsoleView, OrderView, SalesSeriesView, VoucherView,
    };

    pub fn voucher(s: VoucherState) -> VoucherView {
        VoucherView {
            stock: s.voucher.total_stock(),
            status: s.voucher.status(s.remaining, Utc::now()),
            id: s.voucher.id,
            title: s.voucher.title,
            description: s.voucher.description,
            price_cents: s.voucher.price_cents,
            remaining: s.remaining,
            window: s.voucher.window,
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

    pub fn console_row(c: console::VoucherCounts) -> ConsoleRow {
        ConsoleRow {
            redis_stock: c.state.redis_stock,
            queued: c.state.queued,
            written: c.written,
            awaiting_payment: c.awaiting_payment,
            paid: c.paid,
            cancelled: c.cancelled,
            revenue_cents: c.revenue_cents,
            failed: c.failed,
            dead_lettered: c.state.dead_lettered,
            voucher: voucher(c.state),
        }
    }

    pub fn dashboard(d: console::Dashboard) -> ConsoleView {
        let chart = d.chart.map(|(id, series)| ChartView {
            voucher_id: id,
            title: d
                .rows
                .iter()
                .find(|r| r.state.voucher.id == id)
                .map(|r| r.state.voucher.title.clone())
                .unwrap_or_default(),
            series: series.map(self::series),
        });
        ConsoleView {
            rows: d.rows.into_iter().map(console_row).collect(),
            chart,
            stalled_secs: d.stalled_for.map(|age| age.as_secs()),
        }
    }

    pub fn series(s: console::SalesSeries) -> SalesSeriesView {
        SalesSeriesView {
            start: s.start,
            bucket_secs: s.bucket_secs,
            counts: s.counts,
        }
    }

    pub fn order(v: sale::OrderView) -> OrderView {
        OrderView {
            order_id: v.order,
            voucher_id: v.voucher,
            status: v.status,
            created_at: v.created_at,
        }
    }
}

/// How many vouchers the listings show.
pub const LIST_LIMIT: i64 = 200;

/// Every voucher, newest first, with what is left.
#[server(prefix = "/sf", endpoint = "list_vouchers")]
pub async fn list_vouchers() -> Result<Vec<VoucherView>, AppError> {
    let core = crate::ssr::core()?;
    let list = seckill::catalog::list(&core, LIST_LIMIT).await?;
    Ok(list.into_iter().map(convert::voucher).collect())
}

/// One voucher, with the server's clock for the page's countdown.
#[server(prefix = "/sf", endpoint = "get_voucher")]
pub async fn get_voucher(id: i64) -> Result<VoucherDetail, AppError> {
    let core = crate::ssr::core()?;
    let id = seckill::domain::VoucherId::try_from(id).map_err(|_| AppError::NotFound)?;
    let voucher = seckill::catalog::get(&core, id)
        .await?
        .map(convert::voucher)
        .ok_or(AppError::NotFound)?;
    Ok(VoucherDetail {
        voucher,
        server_time: chrono::Utc::now(),
    })
}

/// Units of a voucher left and its end, from Redis alone, and the server's clock: what the sale
/// page polls.
#[server(prefix = "/sf", endpoint = "voucher_stock")]
pub async fn voucher_stock(id: i64) -> Result<StockNow, AppError> {
    let core = crate::ssr::core()?;
    let id = seckill::domain::VoucherId::try_from(id).map_err(|_| AppError::NotFound)?;
    let live = seckill::catalog::live(&core, id).await?;
    Ok(StockNow {
        remaining: live.map(|l| l.remaining),
        ends_at: live.map(|l| l.ends_at),
        server_time: chrono::Utc::now(),
    })
}

/// The signed-in user, if any.
#[server(prefix = "/sf", endpoint = "whoami")]
pub async fn whoami() -> Result<Option<Me>, AppError> {
    let core = crate::ssr::core()?;
    match crate::ssr::signed_in(&core).await {
        Ok(p) => Ok(Some(Me {
            user_id: p.user,
            phone: p.phone,
            is_admin: p.is_admin,
        })),
        Err(AppError::Unauthenticated) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Sends a sign-in code; in dev mode returns it. A browser without JavaScript (a plain form
/// post) is sent back to the sign-in page with the phone, `sent=1`, the dev code if any, and
/// its `next`, so that page can show the code and post the sign-in.
#[server(prefix = "/sf", endpoint = "request_code")]
pub async fn request_code(
    phone: String,
    #[server(default)] next: String,
) -> Result<Option<String>, AppError> {
    use crate::components::encode_query;
    let core = crate::ssr::core()?;
    let issued = seckill::auth::request_code(&core, &phone).await?;
    let dev = issued
        .dev_code
        .as_deref()
        .map(|c| format!("&dev_code={c}"))
        .unwrap_or_default();
    crate::ssr::redirect_plain_form(&format!(
        "/login?phone={}&sent=1{dev}&next={}",
        encode_query(phone.trim()),
        encode_query(&crate::components::safe_next(Some(next)))
    ));
    Ok(issued.dev_code)
}

/// Signs in and sets the session cookie; a plain form post (no JavaScript) is then sent to its
/// `next` page.
#[server(prefix = "/sf", endpoint = "sign_in")]
pub async fn sign_in(
    phone: String,
    code: String,
    #[server(default)] next: String,
) -> Result<Me, AppError> {
    let core = crate::ssr::core()?;
    let signed = seckill::auth::sign_in(&core, &phone, &code).await?;
    let response = expect_context::<leptos_axum::ResponseOptions>();
    response.insert_header(
        http::header::SET_COOKIE,
        crate::ssr::session_cookie(&signed.token, core.config.auth.session_ttl.as_secs()),
    );
    crate::ssr::redirect_plain_form(&crate::components::safe_next(Some(next)));
    Ok(Me {
        user_id: signed.principal.user,
        phone: signed.principal.phone,
        is_admin: signed.principal.is_admin,
    })
}

/// Ends the session.
#[server(prefix = "/sf", endpoint = "sign_out")]
pub async fn sign_out() -> Result<(), AppError> {
    let core = crate::ssr::core()?;
    if let Some(token) = crate::ssr::request_session_token() {
        seckill::auth::sign_out(&core, &token).await?;
    }
    let response = expect_context::<leptos_axum::ResponseOptions>();
    response.insert_header(http::header::SET_COOKIE, crate::ssr::clear_session_cookie());
    crate::ssr::redirect_plain_form("/");
    Ok(())
}

/// Buys one unit; returns the order ID at once (decimal string). A plain form post (no
/// JavaScript) is redirected to the order's page.
#[server(prefix = "/sf", endpoint = "buy")]
pub async fn buy(voucher_id: i64) -> Result<domain::OrderId, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let voucher =
        seckill::domain::VoucherId::try_from(voucher_id).map_err(|_| AppError::NotFound)?;
    let order = seckill::sale::buy(&core, shopper.user, voucher).await?;
    crate::ssr::redirect_plain_form(&format!("/orders/{order}"));
    Ok(order)
}

/// The status of one of the shopper's orders.
#[server(prefix = "/sf", endpoint = "order_status")]
pub async fn order_status(order_id: String) -> Result<OrderView, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order = order_id.parse().map_err(|_| AppError::NotFound)?;
    seckill::sale::order_status(&core, shopper.user, order)
        .await?
        .map(convert::order)
        .ok_or(AppError::NotFound)
}

/// One of the shopper's orders with its voucher's title (the order page).
#[server(prefix = "/sf", endpoint = "get_order")]
pub async fn get_order(order_id: String) -> Result<OrderDetail, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order = order_id.parse().map_err(|_| AppError::NotFound)?;
    let view = seckill::sale::order_status(&core, shopper.user, order)
        .await?
        .ok_or(AppError::NotFound)?;
    let titles = seckill::catalog::titles(&core, &[view.voucher]).await?;
    Ok(OrderDetail {
        voucher_title: titles.get(&view.voucher).cloned().unwrap_or_default(),
        order: convert::order(view),
    })
}

/// The signed-in shopper's order on a voucher, if any (`None` for visitors): the voucher's page
/// shows it instead of "Buy now".
#[server(prefix = "/sf", endpoint = "my_order_for")]
pub async fn my_order_for(voucher_id: i64) -> Result<Option<OrderView>, AppError> {
    let core = crate::ssr::core()?;
    let shopper = match crate::ssr::signed_in(&core).await {
        Ok(p) => p,
        Err(AppError::Unauthenticated) => return Ok(None),
        Err(e) => return Err(e),
    };
    let Ok(voucher) = seckill::domain::VoucherId::try_from(voucher_id) else {
        return Ok(None);
    };
    Ok(seckill::sale::order_for(&core, shopper.user, voucher)
        .await?
        .map(convert::order))
}

/// How many orders "my orders" shows.
pub const MY_ORDERS_LIMIT: i64 = 100;

/// The shopper's orders, newest first, queued ones included.
#[server(prefix = "/sf", endpoint = "my_orders")]
pub async fn my_orders() -> Result<Vec<OrderDetail>, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let orders = seckill::sale::my_orders(&core, shopper.user, MY_ORDERS_LIMIT).await?;
    let ids: Vec<_> = orders.iter().map(|o| o.voucher).collect();
    let titles = seckill::catalog::titles(&core, &ids).await?;
    Ok(orders
        .into_iter()
        .map(|o| OrderDetail {
            voucher_title: titles.get(&o.voucher).cloned().unwrap_or_default(),
            order: convert::order(o),
        })
        .collect())
}

/// The admin console (admins only): every voucher with its live counts, and the sales over
/// time of `chart` (by default the newest voucher that sold something).
#[server(prefix = "/sf", endpoint = "console")]
pub async fn console(chart: Option<i64>) -> Result<ConsoleView, AppError> {
    let core = crate::ssr::core()?;
    crate::ssr::signed_in_admin(&core).await?;
    let chart = chart.and_then(|id| seckill::domain::VoucherId::try_from(id).ok());
    let d =
        seckill::catalog::console::dashboard(&core, chart, LIST_LIMIT, chrono::Utc::now()).await?;
    Ok(convert::dashboard(d))
}

/// Creates a voucher (admins only) and returns its ID. `begins_at`/`ends_at` are RFC 3339 from
/// the browser (its local time zone, converted when hydrated); without JavaScript they are
/// empty and the `*_local` inputs are read as UTC. The core validates every field.
#[server(prefix = "/sf", endpoint = "create_voucher")]
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
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let draft = seckill::domain::VoucherDraft {
        title,
        description,
        price_cents,
        stock,
        begins_at: convert::instant(&begins_at, &begins_local),
        ends_at: convert::instant(&ends_at, &ends_local),
    };
    let id = seckill::catalog::create_voucher(&core, &admin, &draft, chrono::Utc::now()).await?;
    crate::ssr::redirect_plain_form(&format!("/admin?created={id}"));
    Ok(id.get())
}

/// Pays one of the shopper's orders (the dev provider approves at once) and returns it as it
/// is now. `key` is the payment's idempotency key; the page sends one per order, so a second
/// click answers the same. A plain form post is sent back to the order's page.
#[server(prefix = "/sf", endpoint = "pay_order")]
pub async fn pay_order(order_id: String, key: String) -> Result<OrderView, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order: domain::OrderId = order_id.parse().map_err(|_| AppError::NotFound)?;
    let key = domain::IdempotencyKey::try_from(key.as_str())
        .map_err(|e| AppError::BadRequest(e.to_string()))?;
    seckill::orders::checkout::pay(&core, shopper.user, order, &key).await?;
    crate::ssr::redirect_plain_form(&format!("/orders/{order}"));
    order_now(&core, shopper.user, order).await
}

/// Cancels one of the shopper's orders (its unit goes back on sale) and returns it as it is
/// now. A plain form post is sent back to the order's page.
#[server(prefix = "/sf", endpoint = "cancel_order")]
pub async fn cancel_order(order_id: String) -> Result<OrderView, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let order: domain::OrderId = order_id.parse().map_err(|_| AppError::NotFound)?;
    seckill::orders::checkout::cancel(&core, shopper.user, order).await?;
    crate::ssr::redirect_plain_form(&format!("/orders/{order}"));
    order_now(&core, shopper.user, order).await
}

#[cfg(feature = "ssr")]
async fn order_now(
    core: &seckill::Core,
    shopper: domain::UserId,
    order: domain::OrderId,
) -> Result<OrderView, AppError> {
    seckill::sale::order_status(core, shopper, order)
        .await?
        .map(convert::order)
        .ok_or(AppError::NotFound)
}

/// Ends a sale now (admins only). A plain form post is sent back to the console.
#[server(prefix = "/sf", endpoint = "end_sale")]
pub async fn end_sale(voucher_id: i64) -> Result<(), AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let id = seckill::domain::VoucherId::try_from(voucher_id).map_err(|_| AppError::NotFound)?;
    seckill::catalog::admin::end_sale(&core, &admin, id).await?;
    crate::ssr::redirect_plain_form(&format!("/admin?manage={id}&done=ended"));
    Ok(())
}

/// Adds units to a sale (admins only); `key` makes a repeated submission add nothing more. A
/// plain form post is sent back to the console.
#[server(prefix = "/sf", endpoint = "add_stock")]
pub async fn add_stock(voucher_id: i64, add: String, key: String) -> Result<i64, AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let id = seckill::domain::VoucherId::try_from(voucher_id).map_err(|_| AppError::NotFound)?;
    let add = add
        .trim()
        .parse::<i64>()
        .map_err(|_| "must be a whole number".to_owned())
        .and_then(domain::Stock::try_from)
        .map_err(|message| {
            let mut fields = domain::FieldErrors::default();
            fields.push("add", message);
            AppError::Invalid(fields)
        })?;
    let key = domain::IdempotencyKey::try_from(key.as_str())
        .map_err(|e| AppError::BadRequest(e.to_string()))?;
    let added = seckill::catalog::admin::add_stock(&core, &admin, id, add, Some(&key)).await?;
    crate::ssr::redirect_plain_form(&format!("/admin?manage={id}&done=added"));
    Ok(added.total)
}
