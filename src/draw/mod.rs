//! A fair opening (design.md decision 34): a draw sale sells nothing first come. Signed-in
//! shoppers enter between `entries_open_at` and the sale's start; at the start the entries are
//! frozen, ranked by their tags (HMAC-SHA256 of the sale's secret seed and the shopper's ID) and
//! the first `stock` entrants are admitted, in rank order, through the same order stream as a
//! buy. A unit that comes back (a winner's order cancelled or unpaid, units an admin adds) goes to
//! the next entrant by rank; once every entrant was reached the sale sells first come. The seed's
//! SHA-256 is public from the start and the seed with every tag after the draw, so anyone can
//! check the ranking.
//!
//! | file | job |
//! | --- | --- |
//! | `seed.rs` | the seed, its commitment, the tags and the ranking |
//! | `enter.rs` | [`enter`]: an entry, batched like the buys (`lua/enter.lua`) |
//! | `standing.rs` | [`standing`]: where a shopper stands; [`public`]: what anyone may check |
//! | `run.rs` | [`run`]: the draw at the start; [`advance`]: units back go down the ranking |

mod enter;
mod run;
mod seed;
mod standing;

pub use enter::{enter, Entered};
pub use run::{advance, run, DrawReport};
pub use seed::Seed;
pub use standing::{public, standing, PublicDraw, Revealed, Standing};

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
    #[error("entries have closed: the draw has run")]
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
}

backend_error!(DrawError);

impl Unavailable for DrawError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::Preload(e) => e.is_unavailable(),
            Self::Lock(e) => e.is_unavailable(),
            Self::NotFound
            | Self::NotADraw
            | Self::EntriesNotOpen
            | Self::EntriesClosed
            | Self::ClientLimited(_) => false,
        }
    }
}

/// A draw sale and its seed (from this instance's memory after the first read: a seed never
/// changes).
async fn draw_sale(core: &Core, voucher: VoucherId) -> Result<(Voucher, Seed), DrawError> {
    if !core.known.may_exist(&core.db, voucher).await? {
        return Err(DrawError::NotFound);
    }
    let v = core
        .catalog
        .get(core, voucher)
        .await?
        .ok_or(DrawError::NotFound)?;
    if !v.opening.is_draw() {
        return Err(DrawError::NotADraw);
    }
    if let Some(seed) = core.draw_seeds.get(&voucher) {
        return Ok((v, seed));
    }
    let row = store::draws::get(&core.db, voucher)
        .await?
        .ok_or(DrawError::NotADraw)?;
    let seed = Seed::from_bytes(row.seed);
    core.draw_seeds.insert(voucher, seed);
    Ok((v, seed))
}
