//! The admins' side (each checks the admin role): the console, creating and editing vouchers,
//! ending a sale, adding stock.

// A form's server function takes one argument per field (create_voucher has eleven); the
// `server` macro copies them into client and server code, so the allowance is module-wide.
#![allow(clippy::too_many_arguments)]

use leptos::prelude::*;

#[cfg(feature = "ssr")]
use crate::url::{ConsoleQuery, ManageDone};
use crate::{error::AppError, wire::ConsoleView};

/// The admin console (admins only): the sales whose title holds `q` and whose window stands
/// as `status` (every sale when both are absent), newest first, the page after `cursor` (the
/// page starting at `holding` when neither is asked for), with their live counts; and the sales
/// over time of `chart` (by default the newest voucher on the page that sold something).
#[server(prefix = "/sf", endpoint = "console")]
pub async fn console(
    chart: Option<i64>,
    q: Option<String>,
    status: Option<domain::SaleStage>,
    cursor: Option<domain::SaleCursor>,
    holding: Option<i64>,
) -> Result<ConsoleView, AppError> {
    use seckill::catalog::console::{RowsAsked, ROWS_PER_PAGE};
    let core = crate::ssr::core()?;
    crate::ssr::signed_in_admin(&core).await?;
    let id = |raw: Option<i64>| raw.and_then(|id| seckill::domain::VoucherId::try_from(id).ok());
    let title = q.as_deref().and_then(crate::url::title_part);
    let rows = match (id(holding), &title, status, cursor) {
        (Some(v), None, None, None) => RowsAsked::Holding(v),
        _ => RowsAsked::Query(seckill::domain::SaleQuery {
            title,
            stage: status,
            starts: None,
            after: cursor,
            limit: ROWS_PER_PAGE,
        }),
    };
    let d =
        seckill::catalog::console::dashboard(&core, id(chart), rows, chrono::Utc::now()).await?;
    Ok(webapi::convert::dashboard(d))
}

/// Creates a voucher (admins only) and returns its ID. `begins_at`/`ends_at` are RFC 3339 from
/// the browser (its local time zone, converted when hydrated); without JavaScript they are
/// empty and the `*_local` inputs are read as UTC. The core validates every field.
/// The form's price is in yuan (`9.90`) and its times are the shop's (`SECKILL_TIME_ZONE`); the
/// core takes fen and instants, as the REST API does. A price that is not an amount in yuan
/// goes through as typed, so the core refuses it beside every other field's message.
#[server(prefix = "/sf", endpoint = "create_voucher")]
pub async fn create_voucher(
    title: String,
    description: String,
    price: String,
    stock: String,
    begins_local: String,
    ends_local: String,
    #[server(default)] opening: String,
    #[server(default)] entries_local: String,
) -> Result<i64, AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let draft = form_draft(
        title,
        description,
        price,
        stock,
        &begins_local,
        &ends_local,
        opening,
        &entries_local,
    );
    let id = seckill::catalog::create_voucher(&core, &admin, &draft, chrono::Utc::now()).await?;
    crate::ssr::redirect_plain_form(&ConsoleQuery::created(id).href());
    Ok(id.get())
}

/// Edits a sale before it opens (admins only), from the form with every field: the same
/// fields and conversions as [`create_voucher`], the core's rules for what may change. A plain
/// form post is sent back to the console's manage panel.
#[server(prefix = "/sf", endpoint = "edit_voucher")]
pub async fn edit_voucher(
    voucher_id: i64,
    title: String,
    description: String,
    price: String,
    stock: String,
    begins_local: String,
    ends_local: String,
    #[server(default)] opening: String,
    #[server(default)] entries_local: String,
) -> Result<i64, AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let id = crate::ssr::voucher_id(voucher_id)?;
    // The form sends every field: each is named.
    let patch = seckill::domain::VoucherPatch::from(form_draft(
        title,
        description,
        price,
        stock,
        &begins_local,
        &ends_local,
        opening,
        &entries_local,
    ));
    seckill::catalog::edit_voucher(&core, &admin, id, &patch, chrono::Utc::now()).await?;
    crate::ssr::redirect_plain_form(&ConsoleQuery::manage(id, Some(ManageDone::Edited)).href());
    Ok(id.get())
}

/// The voucher form's fields as the core's draft: the price from the shop currency's major
/// unit to its minor one, with that currency's decimals (a price that is not such an amount
/// goes through as typed, for the core's message), the times from the shop's zone to RFC 3339.
#[cfg(feature = "ssr")]
fn form_draft(
    title: String,
    description: String,
    price: String,
    stock: String,
    begins_local: &str,
    ends_local: &str,
    opening: String,
    entries_local: &str,
) -> seckill::domain::VoucherDraft {
    let price_cents = crate::money::shop_currency()
        .minor_from(&price)
        .map_or_else(|| price.clone(), |minor| minor.to_string());
    let zone = crate::time::shop_zone();
    seckill::domain::VoucherDraft {
        title,
        description,
        price_cents,
        stock,
        begins_at: webapi::convert::instant(begins_local, &zone),
        ends_at: webapi::convert::instant(ends_local, &zone),
        opening,
        entries_open_at: webapi::convert::instant(entries_local, &zone),
    }
}

/// Ends a sale now (admins only). A plain form post is sent back to the console.
#[server(prefix = "/sf", endpoint = "end_sale")]
pub async fn end_sale(voucher_id: i64) -> Result<(), AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let id = crate::ssr::voucher_id(voucher_id)?;
    seckill::catalog::admin::end_sale(&core, &admin, id).await?;
    crate::ssr::redirect_plain_form(&ConsoleQuery::manage(id, Some(ManageDone::Ended)).href());
    Ok(())
}

/// Adds units to a sale (admins only); `key` makes a repeated submission add nothing more. A
/// plain form post is sent back to the console.
#[server(prefix = "/sf", endpoint = "add_stock")]
pub async fn add_stock(voucher_id: i64, add: String, key: String) -> Result<i64, AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let id = crate::ssr::voucher_id(voucher_id)?;
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
    crate::ssr::redirect_plain_form(&ConsoleQuery::manage(id, Some(ManageDone::Added)).href());
    Ok(added.total)
}

/// A page of the payments an admin looks at (admins only): `state` is `attention` (the
/// default), `paid` or `refunded`.
#[server(prefix = "/sf", endpoint = "admin_payments")]
pub async fn admin_payments(
    state: Option<String>,
    page: Option<usize>,
) -> Result<webapi::payments::PaymentsView, AppError> {
    use seckill::orders::refund_order::{self, PaymentFilter, PAYMENTS_PAGE};
    let core = crate::ssr::core()?;
    crate::ssr::signed_in_admin(&core).await?;
    let filter = state
        .as_deref()
        .and_then(PaymentFilter::parse)
        .unwrap_or(PaymentFilter::Attention);
    let asked = page.unwrap_or(1).max(1);
    let index = |page: usize| i64::try_from(page).unwrap_or(1);
    let (mut rows, total) = refund_order::payments(&core, filter, index(asked)).await?;
    let size = usize::try_from(PAYMENTS_PAGE).unwrap_or(25);
    let pages = usize::try_from(total).unwrap_or(0).div_ceil(size).max(1);
    // A page past the last (an old link, a typed number) shows the last one, not "no payments"
    // beside a count of them.
    let page = asked.min(pages);
    if page != asked {
        rows = refund_order::payments(&core, filter, index(page)).await?.0;
    }
    Ok(webapi::payments::PaymentsView {
        rows: rows.iter().map(webapi::convert::payment_row).collect(),
        filter: filter.as_str().to_owned(),
        page,
        pages,
        total,
    })
}

/// A page of the admins' actions (admins only), newest first: those older than `before`.
#[server(prefix = "/sf", endpoint = "admin_actions")]
pub async fn admin_actions(before: Option<i64>) -> Result<webapi::actions::ActionsView, AppError> {
    let core = crate::ssr::core()?;
    crate::ssr::signed_in_admin(&core).await?;
    let page = seckill::auth::audit::actions(&core, before).await?;
    Ok(webapi::convert::actions(page))
}

/// Refunds an order (admins only): a paid order is cancelled by the shop and its money given
/// back. A plain form post is sent back to the payments page it came from, saying so.
#[server(prefix = "/sf", endpoint = "refund_order")]
pub async fn refund_order(order_id: String, state: String) -> Result<String, AppError> {
    let core = crate::ssr::core()?;
    let admin = crate::ssr::signed_in_admin(&core).await?;
    let order = crate::ssr::order_id(&order_id)?;
    let done = seckill::orders::refund_order::refund_order(&core, &admin, order).await?;
    let filter = seckill::orders::refund_order::PaymentFilter::parse(&state)
        .map_or("attention", |f| f.as_str());
    crate::ssr::redirect_plain_form(&format!(
        "/admin/payments?state={filter}&refunded={order}&outcome={}",
        done.as_str()
    ));
    Ok(done.as_str().to_owned())
}
