//! An admin's edit of a sale that has not opened (design.md, "Editing a sale"): the patch laid
//! over the stored voucher meets the creation rules and the core's rule of what may change
//! ([`crate::domain::check_edit`]); then, under the voucher's lock (`preload:<id>`, the one
//! restores and the other changes take), PostgreSQL's row is changed in a transaction that
//! commits only after Redis took the new window and stock in one script (`lua/revise.lua`),
//! which refuses by the Redis clock a sale that has opened and leaves the sale unchecked; once
//! the transaction ended the sale is reconciled from PostgreSQL, so Redis never keeps an edit
//! PostgreSQL does not hold (an edit killed before its commit is undone by the next buy, move
//! or preload, which reconcile the unchecked sale). Every instance's memory and page cache
//! follow by the catalog's pub/sub; one audit line per edit.

use chrono::{DateTime, Utc};

use super::admin::{lock, SaleAdminError};
use crate::{
    auth::{audit, Admin},
    domain::{check_edit, EditProblem, EditRefusal, NewVoucher, Voucher, VoucherId, VoucherPatch},
    infra::{
        scripts::{self, Revised, Revision},
        store,
    },
    Core,
};

/// Applies `patch` to `voucher`'s sale; a patch that changes nothing answers as a change would.
pub async fn edit_voucher(
    core: &Core,
    admin: &Admin,
    voucher: VoucherId,
    patch: &VoucherPatch,
    now: DateTime<Utc>,
) -> Result<(), SaleAdminError> {
    let edited = edit_checked(core, voucher, patch, now).await;
    audit::admin_action(core, admin.user(), "edit voucher", voucher, &edited).await;
    edited
}

async fn edit_checked(
    core: &Core,
    voucher: VoucherId,
    patch: &VoucherPatch,
    now: DateTime<Utc>,
) -> Result<(), SaleAdminError> {
    let current = store::vouchers::get(&core.db, voucher)
        .await?
        .ok_or(SaleAdminError::NotFound)?;
    let next = parse(core, &current, patch, now)?;
    // A first-come sale becoming a draw names its beacon round now, as creation does (a draw's
    // start never changes afterwards, so neither does its round).
    let beacon = match (current.opening.is_draw(), next.opening.is_draw()) {
        (false, true) => crate::draw::name_round(core, next.window.begins_at())
            .await
            .map_err(SaleAdminError::Beacon)?,
        _ => None,
    };
    let guard = lock(core, voucher).await?;
    let result = edit_locked(core, voucher, &next, beacon.as_ref(), guard.fence()).await;
    guard.finish("an admin's edit of a sale").await;
    // Committed or not, Redis now takes PostgreSQL's row (nothing to do when `revise.lua` did
    // not write); one that fails here is reconciled by the next buy, move or preload.
    if let Err(e) = super::stage::reconcile_edited(core, voucher).await {
        tracing::warn!(%voucher, error = %e, "the edited sale is reconciled at its next buy");
    }
    super::changed(core, voucher).await;
    result?;
    tracing::info!(%voucher, "sale edited by an admin");
    Ok(())
}

/// The patched voucher, by the creation rules and the edit rule, at `now`.
fn parse(
    core: &Core,
    current: &Voucher,
    patch: &VoucherPatch,
    now: DateTime<Utc>,
) -> Result<NewVoucher, SaleAdminError> {
    crate::domain::editable(current, now).map_err(SaleAdminError::NotEditable)?;
    let next = NewVoucher::parse(&patch.over(current), now)?;
    super::create::chargeable(core, &next)?;
    check_edit(current, &next, now)?;
    Ok(next)
}

async fn edit_locked(
    core: &Core,
    voucher: VoucherId,
    next: &NewVoucher,
    beacon: Option<&store::draws::BeaconRound>,
    fence: i64,
) -> Result<(), SaleAdminError> {
    let mut tx = core.db.begin().await?;
    let current = store::vouchers::lock(&mut tx, voucher)
        .await?
        .ok_or(SaleAdminError::NotFound)?;
    if !store::vouchers::record_fence(&mut tx, voucher, fence).await? {
        return Err(SaleAdminError::Fenced(voucher));
    }
    // Again on the locked row: the sale may have opened, or been changed, since it was read.
    check_edit(&current, next, Utc::now())?;
    store::vouchers::revise(&mut tx, voucher, next).await?;
    if next.opening.is_draw() && !current.opening.is_draw() {
        let seed = crate::draw::Seed::generate();
        store::draws::insert(
            &mut tx,
            voucher,
            seed.expose(),
            &seed.commitment(),
            &core.config.draw.receipt_key.public(),
            beacon,
        )
        .await?;
    }
    let revision = Revision {
        begins_ms: next.window.begins_at().timestamp_millis(),
        ends_ms: next.window.ends_at().timestamp_millis(),
        offered: next.stock.get(),
        delta: next.stock.get() - current.total_stock(),
        entries_ms: next.opening.entries_open_at().map(|t| t.timestamp_millis()),
    };
    let mut redis = core.redis.clone();
    let keys = core.keys.voucher(voucher);
    match scripts::revise(&mut redis, &keys, &revision).await? {
        // By the Redis clock the sale opened (or holds an order or an entry): PostgreSQL's
        // change is rolled back with the transaction.
        Revised::Opened => return Err(SaleAdminError::NotEditable(EditRefusal::Started)),
        // A preload or a reconciliation reads PostgreSQL's row under this same lock; an applied
        // revision left the sale unchecked until the caller reconciles it.
        Revised::Applied | Revised::NotLoaded | Revised::Unreconciled => {}
    }
    tx.commit().await?;
    Ok(())
}

impl From<EditProblem> for SaleAdminError {
    fn from(e: EditProblem) -> Self {
        match e {
            EditProblem::Refused(why) => Self::NotEditable(why),
            EditProblem::Invalid(fields) => Self::Invalid(fields),
        }
    }
}
