//! A fair opening (design.md decisions 34 and 42): a draw sale sells nothing first come.
//! Signed-in shoppers enter between `entries_open_at` and the sale's start; each entry is logged
//! in PostgreSQL before its 202 and answered with a receipt the shop signs. At the start the log
//! closes and its Merkle root is committed; the draw then waits for the public beacon's round
//! named at creation, derives its seed from the secret committed at creation, the root and the
//! round, ranks the leaves by their keys and admits the first `stock` entrants, in rank order,
//! through the same order stream as a buy. A unit that comes back goes to the next entrant by
//! rank, each such move chained in the transcript; once every entrant was reached the sale sells
//! first come. Everything needed to check it is published (`GET /api/vouchers/{id}/draw`), and
//! the rules are `domain::fair`.
//!
//! | file | job |
//! | --- | --- |
//! | `settings.rs` | the receipt key and the beacon's settings |
//! | `seed.rs` | the secret committed at creation |
//! | `terms.rs` | what a sale fixed at creation: the secret, the round named, the receipt key |
//! | `beacon.rs` | the drand round: fetched, verified |
//! | `enter.rs` | [`enter`]: an entry, batched like the buys and logged; its signed receipt |
//! | `standing.rs` | [`standing`]: where a shopper stands, with their receipt and proof |
//! | `transcript.rs` | [`transcript`]: what anyone may check |
//! | `witness.rs` | [`witness`]: the close timestamped by an RFC 3161 authority outside the shop |
//! | `memory.rs` | what an instance keeps of a drawn sale |
//! | `run.rs` | [`run`]: the draw at the start |
//! | `advance.rs` | [`advance`]: units back go down the ranking; [`record_moves`]: each a chained move, appended once its order is written |

mod advance;
pub mod beacon;
mod enter;
pub mod memory;
mod run;
pub mod seed;
pub mod settings;
mod standing;
pub mod terms;
mod transcript;
pub mod witness;

pub use crate::catalog::restore_entries;
pub use advance::{advance, record_moves};
pub use beacon::{Beacon, BeaconError, ChainTiming};
pub use enter::{enter, Entered, Receipt};
pub use memory::Revealed;
pub use run::{run, DrawReport};
pub use seed::Seed;
pub use settings::DrawSettings;
pub use standing::{standing, Moved, Standing};
pub use terms::Terms;
pub use transcript::{facts, transcript, transcript_json, Facts, Move, RankedLeaf, Transcript};

use crate::{
    catalog::PreloadError,
    domain::{Voucher, VoucherId},
    infra::{
        backend::{backend_error, Backend, Unavailable},
        lock::LockError,
        store,
    },
    Core,
};

/// Why a draw request was refused, or could not be answered.
#[derive(Debug, thiserror::Error)]
pub enum DrawError {
    #[error("no such voucher")]
    NotFound,
    #[error("this sale opens first come, first served: there is no draw")]
    NotADraw,
    #[error("entries have not opened yet")]
    EntriesNotOpen,
    #[error("entries have closed")]
    EntriesClosed,
    /// Too many entries from this client address this minute: allowed again in this many
    /// seconds.
    #[error("too many entries from this address; try again in {0} s")]
    ClientLimited(u64),
    #[error(transparent)]
    Backend(#[from] Backend),
    #[error("preload: {0}")]
    Preload(#[from] PreloadError),
    #[error("lock: {0}")]
    Lock(#[from] LockError),
    /// The beacon's round cannot be had or does not verify: the draw waits.
    #[error("beacon: {0}")]
    Beacon(#[from] BeaconError),
    /// The key this sale named at creation is not among the configured ones
    /// (`SECKILL_DRAW_SIGNING_KEY`, `SECKILL_DRAW_PREVIOUS_SIGNING_KEYS`).
    #[error("the receipt key {0} this sale named at creation is not configured")]
    KeyNotHeld(String),
}

backend_error!(DrawError);

impl Unavailable for DrawError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::Preload(e) => e.is_unavailable(),
            Self::Lock(e) => e.is_unavailable(),
            Self::Beacon(_) | Self::KeyNotHeld(_) => true,
            Self::NotFound
            | Self::NotADraw
            | Self::EntriesNotOpen
            | Self::EntriesClosed
            | Self::ClientLimited(_) => false,
        }
    }
}

/// The beacon round a draw sale starting at `begins` names at creation: the first emitted at
/// least `SECKILL_DRAW_COMMIT_MARGIN_MS` after its entries close (`None` without a beacon).
pub async fn name_round(
    core: &Core,
    begins: chrono::DateTime<chrono::Utc>,
) -> Result<Option<store::draws::BeaconRound>, BeaconError> {
    let Some(beacon) = &core.beacon else {
        return Ok(None);
    };
    let timing = beacon.timing().await?;
    let margin = chrono::Duration::from_std(core.config.draw.commit_margin)
        .unwrap_or(chrono::Duration::seconds(5));
    Ok(Some(store::draws::BeaconRound {
        url: beacon.settings().url.clone(),
        chain_hash: beacon.settings().chain_hash.clone(),
        round: timing.chain().named_round(begins, margin),
        planned: None,
    }))
}

/// A draw sale and its terms (from this instance's memory after the first read: they never
/// change).
async fn draw_sale(core: &Core, voucher: VoucherId) -> Result<(Voucher, Terms), DrawError> {
    if !core.known.may_exist(&core.db, voucher).await? {
        return Err(DrawError::NotFound);
    }
    let v = core
        .catalog
        .get(&core.db, core.catalog_epoch(), voucher)
        .await?
        .ok_or(DrawError::NotFound)?;
    if !v.opening.is_draw() {
        return Err(DrawError::NotADraw);
    }
    if let Some(terms) = core.draw_terms.get(&voucher) {
        return Ok((v, terms));
    }
    let row = store::draws::get(&core.db, voucher)
        .await?
        .ok_or(DrawError::NotADraw)?;
    let terms = Terms {
        seed: Seed::from_bytes(row.seed),
        commitment: row.commitment,
        round: row.beacon.as_ref().map(|b| b.planned.unwrap_or(b.round)),
        receipt_key: row
            .receipt_key
            .unwrap_or_else(|| core.config.draw.receipt_key.public()),
    };
    core.draw_terms.insert(voucher, terms);
    Ok((v, terms))
}
