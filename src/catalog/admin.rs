//! An admin's changes to a running sale: end it now, or add stock (an edit before it opens is
//! `edit.rs`). Each runs under the
//! voucher's lock (`preload:<id>`, the one restores take), checks the lock's fencing token in
//! PostgreSQL in the same transaction as its change, then brings Redis along: ending stops
//! admissions at once by the Redis clock (`lua/end_sale.lua`); added units reach Redis as a
//! stock move (exactly once, see [`crate::orders::restock`]).

use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::{
    auth::{audit, Admin},
    domain::{FieldErrors, IdempotencyKey, Stock, VoucherId, MAX_STOCK},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        lock::{LockError, LockGuard},
        scripts::{self, SaleEnd},
        stock_move::StockMove,
        store,
    },
    orders::restock::{self, RestockError},
    Core,
};

/// How long a change waits for another instance holding the voucher's lock.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Why a sale was not changed.
#[derive(Debug, thiserror::Error)]
pub enum SaleAdminError {
    #[error("no such voucher")]
    NotFound,
    /// Adding stock to a sale that has ended.
    #[error("the sale has ended")]
    Ended,
    /// Ending a draw sale whose entry list is committed and whose ranking is not published
    /// yet: whoever learns the beacon's round first could otherwise abort a draw they dislike.
    #[error(
        "the draw's entry list is committed: its ranking is published before the sale can end"
    )]
    DrawCommitted,
    #[error(transparent)]
    Invalid(#[from] FieldErrors),
    /// An edit of a sale that has opened or ended.
    #[error(transparent)]
    NotEditable(crate::domain::EditRefusal),
    /// Making a sale a draw names its beacon round: the beacon must answer.
    #[error("the randomness beacon: {0}")]
    Beacon(#[source] crate::draw::BeaconError),
    #[error("another instance kept the lock of voucher {0}")]
    Busy(VoucherId),
    #[error("a newer holder of voucher {0}'s lock exists; this change stood down")]
    Fenced(VoucherId),
    #[error("lock: {0}")]
    Lock(#[from] LockError),
    #[error(transparent)]
    Backend(#[from] Backend),
    #[error("{0}")]
    Restock(#[from] RestockError),
}

backend_error!(SaleAdminError);

impl crate::auth::audit::ActionError for SaleAdminError {
    fn refusal_code(&self) -> Option<&'static str> {
        match self {
            Self::NotFound => Some("not_found"),
            Self::Ended | Self::NotEditable(crate::domain::EditRefusal::Ended) => Some("ended"),
            Self::NotEditable(_) => Some("sale_started"),
            Self::DrawCommitted => Some("draw_committed"),
            Self::Invalid(_) => Some("invalid"),
            Self::Beacon(_)
            | Self::Busy(_)
            | Self::Fenced(_)
            | Self::Lock(_)
            | Self::Backend(_)
            | Self::Restock(_) => None,
        }
    }
}

impl Unavailable for SaleAdminError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Lock(e) => e.is_unavailable(),
            Self::Backend(e) => e.is_unavailable(),
            Self::Restock(e) => e.is_unavailable(),
            Self::Beacon(_) => true,
            // Refusals; another instance changing the same sale is answered by the adapters
            // as busy, not as a store out of reach.
            Self::NotFound
            | Self::Ended
            | Self::DrawCommitted
            | Self::Invalid(_)
            | Self::NotEditable(_)
            | Self::Busy(_)
            | Self::Fenced(_) => false,
        }
    }
}

/// A sale after stock was added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StockAdded {
    /// Units the sale offers now (initial + added).
    pub total: i64,
    /// Units PostgreSQL has not sold.
    pub unsold: i64,
}

pub(super) async fn lock(core: &Core, voucher: VoucherId) -> Result<LockGuard, SaleAdminError> {
    core.locks
        .try_acquire(&format!("preload:{voucher}"), LOCK_WAIT)
        .await?
        .ok_or(SaleAdminError::Busy(voucher))
}

/// Ends `voucher`'s sale now, in PostgreSQL then in Redis; ending an ended sale changes
/// nothing. Returns the sale's end. Shoppers buying afterwards are refused as `ended`.
pub async fn end_sale(
    core: &Core,
    admin: &Admin,
    voucher: VoucherId,
) -> Result<DateTime<Utc>, SaleAdminError> {
    let ended = end_checked(core, voucher).await;
    audit::admin_action(core, admin.user(), "end sale", voucher, &ended).await;
    ended
}

async fn end_checked(core: &Core, voucher: VoucherId) -> Result<DateTime<Utc>, SaleAdminError> {
    let guard = lock(core, voucher).await?;
    let result = end_locked(core, voucher, guard.fence()).await;
    guard.finish("an admin's change to a sale").await;
    super::changed(core, voucher).await;
    let ends_at = result?;
    tracing::info!(%voucher, %ends_at, "sale ended by an admin");
    Ok(ends_at)
}

async fn end_locked(
    core: &Core,
    voucher: VoucherId,
    fence: i64,
) -> Result<DateTime<Utc>, SaleAdminError> {
    let mut tx = core.db.begin().await?;
    if store::vouchers::lock(&mut tx, voucher).await?.is_none() {
        return Err(SaleAdminError::NotFound);
    }
    if !store::vouchers::record_fence(&mut tx, voucher, fence).await? {
        return Err(SaleAdminError::Fenced(voucher));
    }
    // Once a draw's list is committed nobody may abort it: its ranking is published first
    // (design.md, decision 0046). After the draw the sale ends as any other.
    if store::draws::awaiting_draw(&mut tx, voucher).await? {
        return Err(SaleAdminError::DrawCommitted);
    }
    let ends_at = store::vouchers::end_now(&mut tx, voucher)
        .await?
        .ok_or(SaleAdminError::NotFound)?;
    tx.commit().await?;
    let mut redis = core.redis.clone();
    let keys = core.keys.voucher(voucher);
    // Ended from here on: PostgreSQL holds the end, and the sweep ends in Redis a sale whose
    // end there is later than PostgreSQL's (`repair_ends`). A Redis out of reach now is said,
    // not answered as a failure the admin would retry (and read as "not ended").
    match scripts::end_sale(&mut redis, &keys, ends_at.timestamp_millis()).await {
        Ok(SaleEnd::Ended { at_ms }) => {
            Ok(DateTime::from_timestamp_millis(at_ms).unwrap_or(ends_at))
        }
        Ok(SaleEnd::NotLoaded) => Ok(ends_at),
        Err(e) => {
            tracing::warn!(%voucher, error = %e, "sale ended in PostgreSQL; Redis takes the end at the sweep's next pass");
            Ok(ends_at)
        }
    }
}

/// Adds `add` units to `voucher`'s sale, in PostgreSQL and in Redis, once per `key` and sale
/// (a repeated request with the same key answers the sale as it is, whatever units it names;
/// the same key on another sale is that sale's own top-up, and a repeat is answered so after the
/// sale ended or filled too). A new addition to a sale that has ended is refused.
pub async fn add_stock(
    core: &Core,
    admin: &Admin,
    voucher: VoucherId,
    add: Stock,
    key: Option<&IdempotencyKey>,
) -> Result<StockAdded, SaleAdminError> {
    let added = add_checked(core, voucher, add, key).await;
    let target = format!("{voucher} +{}", add.get());
    audit::admin_action(core, admin.user(), "add stock", target, &added).await;
    added
}

async fn add_checked(
    core: &Core,
    voucher: VoucherId,
    add: Stock,
    key: Option<&IdempotencyKey>,
) -> Result<StockAdded, SaleAdminError> {
    let asked = StockMove {
        key: store::moves::addition_key(
            voucher,
            &key.map_or_else(
                || uuid::Uuid::new_v4().simple().to_string(),
                |k| k.as_str().to_owned(),
            ),
        ),
        units: add.get(),
        release: None,
    };
    let guard = lock(core, voucher).await?;
    let result = add_locked(core, voucher, &asked, guard.fence()).await;
    guard.finish("an admin's change to a sale").await;
    super::changed(core, voucher).await;
    let (added, recorded) = result?;
    let fresh = recorded.is_none();
    // After the lock is released: a sale Redis lost is restored under that same lock. A
    // repeated request applies too, in case the first one died before Redis (idempotent), and
    // applies the move as first recorded: Redis gets exactly the units PostgreSQL counted.
    // PostgreSQL has committed the units: a Redis that does not take them now leaves the move
    // pending for the sweep, and the admin is told what is true, that the stock was added (an
    // error here had them try again, and a form's next key, made from the new total, added
    // the units a second time).
    if let Err(e) = restock::apply(core, voucher, recorded.as_ref().unwrap_or(&asked)).await {
        tracing::warn!(%voucher, error = %e, "stock added in PostgreSQL; Redis takes it at the sweep's next pass");
    }
    if fresh {
        tracing::info!(%voucher, units = add.get(), total = added.total, "stock added by an admin");
    }
    Ok(added)
}

async fn add_locked(
    core: &Core,
    voucher: VoucherId,
    step: &StockMove,
    fence: i64,
) -> Result<(StockAdded, Option<StockMove>), SaleAdminError> {
    let mut tx = core.db.begin().await?;
    let v = store::vouchers::lock(&mut tx, voucher)
        .await?
        .ok_or(SaleAdminError::NotFound)?;
    // The same request again is answered first: the stock was added the first time, and the
    // checks below judge the sale as that addition left it (a top-up to the maximum, repeated,
    // would "take the sale past" it; one repeated after the sale ended, "the sale has ended").
    if let Some(recorded) = store::moves::find(&mut tx, voucher, &step.key).await? {
        let now = StockAdded {
            total: v.total_stock(),
            unsold: v.db_stock,
        };
        return Ok((now, Some(recorded)));
    }
    if v.window.ends_at() <= Utc::now() {
        return Err(SaleAdminError::Ended);
    }
    if !store::vouchers::record_fence(&mut tx, voucher, fence).await? {
        return Err(SaleAdminError::Fenced(voucher));
    }
    if v.total_stock() + step.units > MAX_STOCK {
        let mut fields = FieldErrors::default();
        fields.push(
            "add",
            format!(
                "would take the sale past {} units (it offers {})",
                crate::domain::grouped(MAX_STOCK),
                crate::domain::grouped(v.total_stock())
            ),
        );
        return Err(fields.into());
    }
    if store::moves::record(&mut tx, voucher, step)
        .await?
        .is_some()
    {
        // Found above under the sale's lock: a key recorded since is a bug to stop on.
        return Err(sqlx::Error::Protocol(format!(
            "stock move {} recorded while its sale was locked",
            step.key
        ))
        .into());
    }
    let (total, unsold) = store::vouchers::add_stock(&mut tx, voucher, step.units).await?;
    tx.commit().await?;
    Ok((StockAdded { total, unsold }, None))
}
