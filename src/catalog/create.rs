//! A voucher created by an admin: validated, stored (a draw sale with its committed secret and
//! the beacon round it names), preloaded into Redis. Stored is created: a sale Redis cannot take
//! at that moment is loaded by the next sweep or its first buy, from PostgreSQL.

use chrono::{DateTime, Utc};

use super::{changed, preload};
use crate::{
    auth::Admin,
    domain::{FieldErrors, NewVoucher, VoucherDraft, VoucherId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        store,
    },
    Core,
};

/// Why a voucher was not created.
#[derive(Debug, thiserror::Error)]
pub enum CreateVoucherError {
    #[error(transparent)]
    Invalid(#[from] FieldErrors),
    #[error("storing the voucher: {0}")]
    Backend(#[from] Backend),
    /// A draw sale names its beacon round at creation: the beacon must answer.
    #[error("the randomness beacon: {0}")]
    Beacon(#[source] crate::draw::BeaconError),
}

backend_error!(CreateVoucherError);

impl crate::auth::audit::ActionError for CreateVoucherError {
    fn refusal_code(&self) -> Option<&'static str> {
        match self {
            Self::Invalid(_) => Some("invalid"),
            Self::Backend(_) | Self::Beacon(_) => None,
        }
    }
}

impl Unavailable for CreateVoucherError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Invalid(_) => false,
            Self::Backend(e) => e.is_unavailable(),
            Self::Beacon(_) => true,
        }
    }
}

/// Validates `draft`, stores the voucher and preloads its sale into Redis; the voucher's ID once
/// it is stored, whether or not Redis took its sale then.
pub async fn create_voucher(
    core: &Core,
    admin: &Admin,
    draft: &VoucherDraft,
    now: DateTime<Utc>,
) -> Result<VoucherId, CreateVoucherError> {
    let created = create_checked(core, admin, draft, now).await;
    // A refused draft's title as typed, quoted and cut short: it may hold anything.
    let target = created.as_ref().map_or_else(
        |_| format!("{:?}", draft.title.chars().take(60).collect::<String>()),
        ToString::to_string,
    );
    crate::auth::audit::admin_action(core, admin.user(), "create voucher", target, &created).await;
    created
}

/// A priced voucher must cost at least what the payment provider can charge (Stripe refuses a
/// session below its minimum, so every Pay now would fail); free (0) is fine.
pub(super) fn chargeable(core: &Core, new: &NewVoucher) -> Result<(), FieldErrors> {
    let currency = &core.config.payments.currency;
    match core.payments.minimum_charge(currency) {
        Some(min) if new.price_cents > 0 && new.price_cents < min => {
            let mut errors = FieldErrors::default();
            errors.push(
                "price_cents",
                format!(
                    "must be at least {} in minor units (the smallest charge the payment provider takes in {}), or 0 for a free voucher",
                    crate::domain::grouped(min),
                    currency.as_str().to_uppercase()
                ),
            );
            Err(errors)
        }
        _ => Ok(()),
    }
}

async fn create_checked(
    core: &Core,
    admin: &Admin,
    draft: &VoucherDraft,
    now: DateTime<Utc>,
) -> Result<VoucherId, CreateVoucherError> {
    let new = NewVoucher::parse(draft, now)?;
    chargeable(core, &new)?;
    let beacon = match new.opening.is_draw() {
        true => crate::draw::name_round(core, new.window.begins_at())
            .await
            .map_err(CreateVoucherError::Beacon)?,
        false => None,
    };
    let mut tx = core.db.begin().await?;
    let id = store::vouchers::insert(&mut tx, &new, admin.user()).await?;
    if new.opening.is_draw() {
        let seed = crate::draw::Seed::generate();
        store::draws::insert(
            &mut tx,
            id,
            seed.expose(),
            &seed.commitment(),
            &core.config.draw.receipt_key.public(),
            beacon.as_ref(),
        )
        .await?;
    }
    tx.commit().await?;
    let voucher = store::vouchers::get(&core.db, id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?;
    core.known.created(id);
    changed(core, id).await;
    // The voucher exists from here on: an error now would have its admin create it a second
    // time. A sale Redis did not take (out of reach, another instance loading it) is loaded by
    // the sweep, which restores every sale not yet ended that Redis lacks, or by its first buy.
    match preload(core, &voucher).await {
        Ok(_) => {
            tracing::info!(voucher = %id, stock = new.stock.get(), "voucher created and preloaded")
        }
        Err(e) => tracing::warn!(
            voucher = %id,
            error = %e,
            "voucher created; Redis did not take its sale, the next sweep loads it"
        ),
    }
    Ok(id)
}
