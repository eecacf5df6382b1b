//! The catalog as shoppers read it: the listing, a voucher, its live figures.

use leptos::prelude::*;

use crate::{
    error::AppError,
    wire::{SiteMode, VoucherDetail, VoucherView},
};

/// Every voucher, newest first, with what is left.
#[server(prefix = "/sf", endpoint = "list_vouchers")]
pub async fn list_vouchers() -> Result<Vec<VoucherView>, AppError> {
    let core = crate::ssr::core()?;
    let list = seckill::catalog::list(&core, webapi::wire::LIST_LIMIT).await?;
    Ok(list.into_iter().map(webapi::convert::voucher).collect())
}

/// Ended sales from the whole history, newest first, [`crate::pages::home::PAGE_SIZE`] after
/// `cursor`: the home page's "Ended" filter, past the listing's 200.
#[server(prefix = "/sf", endpoint = "ended_sales")]
pub async fn ended_sales(
    cursor: Option<domain::SaleCursor>,
) -> Result<webapi::sales::SalesView, AppError> {
    let core = crate::ssr::core()?;
    let asked = seckill::domain::SaleQuery {
        stage: Some(domain::SaleStage::Ended),
        after: cursor,
        limit: i64::try_from(crate::pages::home::PAGE_SIZE).unwrap_or(24),
        ..seckill::domain::SaleQuery::default()
    };
    let found = seckill::catalog::find(&core, &asked, chrono::Utc::now()).await?;
    Ok(webapi::convert::sales(found))
}

/// One voucher, with the server's clock for the page's countdown.
#[server(prefix = "/sf", endpoint = "get_voucher")]
pub async fn get_voucher(id: i64) -> Result<VoucherDetail, AppError> {
    let core = crate::ssr::core()?;
    let id = crate::ssr::voucher_id(id)?;
    let voucher = seckill::catalog::get(&core, id)
        .await?
        .map(webapi::convert::voucher)
        .ok_or(AppError::NotFound)?;
    Ok(VoucherDetail {
        voucher,
        server_time: chrono::Utc::now(),
    })
}

/// The development conveniences this shop runs with (the strip on every page).
#[server(prefix = "/sf", endpoint = "shop_mode")]
pub async fn shop_mode() -> Result<SiteMode, AppError> {
    let core = crate::ssr::core()?;
    Ok(SiteMode {
        dev_login: core.config.dev_login,
        dev_payments: core.config.payments.is_dev(),
        no_texts: core.config.auth.webhook.is_none(),
    })
}
