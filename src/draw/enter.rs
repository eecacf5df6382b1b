//! [`enter`]: a shopper's entry into a draw, decided by `lua/enter.lua` in a batch with the
//! entries arriving meanwhile (one round trip, like the buys).

use std::net::IpAddr;

use crate::{
    auth::limits,
    catalog::{self, PreloadError},
    domain::{UserId, VoucherId},
    infra::{backend::Backend, scripts::EntryOutcome, store},
    Core,
};

use super::{draw_sale, DrawError};

/// An entry, new or made before (entering again answers the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entered {
    /// The shopper's tag in this draw (hex): their place in the ranking once the seed is out.
    pub tag: String,
    /// Entrants after this entry.
    pub entrants: i64,
    /// False when the shopper had entered before.
    pub new: bool,
}

/// Enters `shopper` into `voucher`'s draw, from `client` (at most `SECKILL_ENTRIES_PER_CLIENT`
/// entries a minute per client address, every instance counting together).
pub async fn enter(
    core: &Core,
    shopper: UserId,
    voucher: VoucherId,
    client: IpAddr,
) -> Result<Entered, DrawError> {
    if let Some(wait) = limits::count(core, client, limits::Action::DrawEntry).await? {
        tracing::info!(%client, "draw entries limited");
        return Err(DrawError::ClientLimited(wait.as_secs().max(1)));
    }
    let (_, seed) = draw_sale(core, voucher).await?;
    let mut outcome = core.entries.enter(voucher, shopper).await?;
    if outcome == EntryOutcome::NotLoaded {
        let Some(v) = store::vouchers::get(&core.db, voucher).await? else {
            return Err(DrawError::NotFound);
        };
        catalog::preload(core, &v).await?;
        outcome = core.entries.enter(voucher, shopper).await?;
    }
    if outcome == EntryOutcome::Unreconciled {
        match catalog::reconcile(core, voucher).await {
            Ok(()) => {}
            Err(PreloadError::Busy(_) | PreloadError::Fenced(_)) => {
                return Err(Backend::Unreconciled.into())
            }
            Err(e) => return Err(e.into()),
        }
        outcome = core.entries.enter(voucher, shopper).await?;
    }
    let tag = hex::encode(seed.tag(shopper));
    let (label, result) = match outcome {
        EntryOutcome::Entered { entrants } => (
            "entered",
            Ok(Entered {
                tag,
                entrants,
                new: true,
            }),
        ),
        EntryOutcome::AlreadyEntered { entrants } => (
            "already_entered",
            Ok(Entered {
                tag,
                entrants,
                new: false,
            }),
        ),
        EntryOutcome::NotOpen => ("not_open", Err(DrawError::EntriesNotOpen)),
        EntryOutcome::Closed => ("closed", Err(DrawError::EntriesClosed)),
        // The catalog says draw and Redis says not: the sale's Redis state predates its
        // opening (never, as the opening is fixed at creation); refuse rather than guess.
        EntryOutcome::NotADraw => ("not_a_draw", Err(DrawError::NotADraw)),
        EntryOutcome::NotLoaded => ("not_found", Err(DrawError::NotFound)),
        EntryOutcome::Unreconciled => ("unavailable", Err(Backend::Unreconciled.into())),
    };
    metrics::counter!("seckill_draw_entries_total", "outcome" => label).increment(1);
    result
}
