//! A draw sale's side of the sale page: entering, and where the shopper stands.

use leptos::prelude::*;

use crate::{error::AppError, wire::EntryView};

/// Enters the signed-in shopper into the voucher's draw; entering again answers the same. A
/// plain form post is sent back to the sale's page.
#[server(prefix = "/sf", endpoint = "enter_draw")]
pub async fn enter_draw(voucher_id: i64) -> Result<EntryView, AppError> {
    let core = crate::ssr::core()?;
    let shopper = crate::ssr::signed_in(&core).await?;
    let voucher = crate::ssr::voucher_id(voucher_id)?;
    let client = crate::ssr::client()?;
    seckill::draw::enter(&core, shopper.user, voucher, client).await?;
    let standing = seckill::draw::standing(&core, Some(shopper.user), voucher).await?;
    crate::ssr::redirect_plain_form(&format!("/vouchers/{voucher}"));
    Ok(webapi::convert::entry(standing))
}

/// The draw of a voucher as the visitor stands in it (`None` for a first-come sale): a
/// visitor gets the entrants and the draw's time, a shopper their own state too.
#[server(prefix = "/sf", endpoint = "draw_entry")]
pub async fn draw_entry(voucher_id: i64) -> Result<Option<EntryView>, AppError> {
    let core = crate::ssr::core()?;
    let shopper = match crate::ssr::signed_in(&core).await {
        Ok(p) => Some(p.user),
        Err(AppError::Unauthenticated) => None,
        Err(e) => return Err(e),
    };
    let voucher = crate::ssr::voucher_id(voucher_id)?;
    match seckill::draw::standing(&core, shopper, voucher).await {
        Ok(s) => Ok(Some(webapi::convert::entry(s))),
        Err(seckill::draw::DrawError::NotADraw) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// What the "Check this draw" page says before any script runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DrawSummary {
    pub title: String,
    pub commitment: String,
    pub entrants: i64,
    /// `(round, relay)`, when the draw takes a beacon round.
    pub beacon: Option<(u64, String)>,
    pub entries_root: Option<String>,
    pub seed: Option<String>,
    pub stock: Option<i64>,
    /// The sale ended before its start: no draw ran.
    pub never_drawn: bool,
}

/// A draw sale's public facts (`NotADraw` for a first-come sale).
#[server(prefix = "/sf", endpoint = "draw_facts")]
pub async fn draw_facts(voucher_id: i64) -> Result<DrawSummary, AppError> {
    let core = crate::ssr::core()?;
    let voucher = crate::ssr::voucher_id(voucher_id)?;
    let t = seckill::draw::facts(&core, voucher).await?;
    let v = seckill::catalog::get(&core, voucher)
        .await?
        .ok_or(AppError::NotFound)?;
    Ok(DrawSummary {
        title: v.voucher.title,
        commitment: t.commitment,
        entrants: t.entrants,
        beacon: t.beacon.map(|b| (b.round, b.url)),
        entries_root: t.entries_root,
        seed: t.seed,
        stock: t.stock,
        never_drawn: t.never_drawn,
    })
}
