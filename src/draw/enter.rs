//! [`enter`]: a shopper's entry into a draw, decided by `lua/enter.lua` in a batch with the
//! entries arriving meanwhile and logged in PostgreSQL before it is answered, with its signed
//! [`Receipt`].

use std::net::IpAddr;

use chrono::{DateTime, Utc};

use crate::{
    auth::limits,
    catalog::{self, Staged},
    domain::{fair, UserId, Voucher, VoucherId},
    infra::{backend::Backend, scripts::EntryOutcome, store::draw_log::LoggedEntry},
    sale::deciders::EntryDecision,
    Core,
};

use super::{draw_sale, settings::ReceiptKey, DrawError, Terms};

/// What a shopper keeps to prove they entered: the shop's signature of their leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub voucher_id: VoucherId,
    /// `SHA-256("{voucher}:{user}:{salt}")`, hex.
    pub leaf: String,
    /// 16 bytes chosen by the shop for this entry, hex.
    pub salt: String,
    pub entered_at: DateTime<Utc>,
    /// The signing key's id (`domain::fair::key_id`), as the transcript names it.
    pub key_id: String,
    /// Ed25519 over the leaf and the sale's terms (`domain::fair::ReceiptTerms::message`), hex.
    pub signature: String,
}

impl Receipt {
    /// The receipt of a logged entry of `sale`, signed with the key its terms name.
    pub fn of(sale: &Voucher, terms: &Terms, key: &ReceiptKey, entry: &LoggedEntry) -> Self {
        let covered = terms.receipt_terms(sale.id, sale.window.begins_at());
        Self {
            voucher_id: sale.id,
            leaf: hex::encode(entry.leaf),
            salt: hex::encode(entry.salt),
            entered_at: entry.entered_at,
            key_id: fair::key_id(&terms.receipt_key),
            signature: key.sign_hex(&covered.message(&entry.leaf)),
        }
    }
}

/// An entry, new or made before (entering again answers the same receipt).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entered {
    pub receipt: Receipt,
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
    let (sale, terms) = draw_sale(core, voucher).await?;
    // Before anything is logged: an entry is answered with its receipt or not taken.
    let key = terms.signing_key(&core.config.draw)?;
    let decision = catalog::with_sale_staged::<DrawError, _, _, _>(
        core,
        voucher,
        |d| match d {
            EntryDecision::Refused(EntryOutcome::NotLoaded) => Staged::NotLoaded,
            EntryDecision::Refused(EntryOutcome::Unreconciled) => Staged::Unreconciled,
            _ => Staged::Ready,
        },
        || core.entries.enter(voucher, shopper),
    )
    .await?;
    let (label, result) = match decision {
        EntryDecision::Logged {
            entry,
            entrants,
            new,
        } => (
            if new { "entered" } else { "already_entered" },
            Ok(Entered {
                receipt: Receipt::of(&sale, &terms, key, &entry),
                entrants,
                new,
            }),
        ),
        EntryDecision::Refused(outcome) => match outcome {
            EntryOutcome::NotOpen => ("not_open", Err(DrawError::EntriesNotOpen)),
            EntryOutcome::Closed => ("closed", Err(DrawError::EntriesClosed)),
            // The catalog says draw and Redis says not: the sale's Redis state predates its
            // opening (never, as the opening is fixed at creation); refuse rather than guess.
            EntryOutcome::NotADraw => ("not_a_draw", Err(DrawError::NotADraw)),
            EntryOutcome::NotLoaded => ("not_found", Err(DrawError::NotFound)),
            EntryOutcome::Unreconciled => ("unavailable", Err(Backend::Unreconciled.into())),
            // Answered as logged above.
            EntryOutcome::Entered { .. } | EntryOutcome::AlreadyEntered { .. } => {
                ("closed", Err(DrawError::EntriesClosed))
            }
        },
    };
    metrics::counter!("seckill_draw_entries_total", "outcome" => label).increment(1);
    result
}
