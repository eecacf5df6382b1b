//! Which voucher IDs exist, so a buy for one that does not is refused before it opens an
//! admission lane, runs a script or asks PostgreSQL (#23 point 7). Voucher IDs are a
//! PostgreSQL sequence and vouchers are never deleted, so "exists" is "at most the largest ID":
//! an instance keeps that number, raises it when it creates a voucher, and asks PostgreSQL
//! again for an ID past it at most once per [`RECHECK`] (so a voucher created on another
//! instance a moment ago is found, and a flood of made-up IDs costs one indexed `max(id)` per
//! interval, not a query each). An ID in a gap of the sequence (a failed insert) goes the old
//! way: the admission script, then PostgreSQL, then 404.

use std::{
    sync::atomic::{AtomicI64, Ordering},
    time::{Duration, Instant},
};

use sqlx::PgPool;
use tokio::sync::Mutex;

use crate::{domain::VoucherId, infra::store};

/// How often an ID past the largest known one may send this instance to PostgreSQL.
pub const RECHECK: Duration = Duration::from_millis(100);

/// The largest voucher ID this instance knows of.
#[derive(Debug)]
pub struct KnownVouchers {
    largest: AtomicI64,
    /// When PostgreSQL was last asked (`None`: never); one asker at a time.
    asked: Mutex<Option<Instant>>,
}

impl Default for KnownVouchers {
    fn default() -> Self {
        Self {
            largest: AtomicI64::new(0),
            asked: Mutex::new(None),
        }
    }
}

impl KnownVouchers {
    /// A voucher this instance just created.
    pub fn created(&self, id: VoucherId) {
        self.largest.fetch_max(id.get(), Ordering::Relaxed);
    }

    /// Whether `id` may exist: at most the largest ID known, asking PostgreSQL again when it
    /// is past that and the last answer is older than [`RECHECK`].
    pub async fn may_exist(&self, db: &PgPool, id: VoucherId) -> Result<bool, sqlx::Error> {
        if id.get() <= self.largest.load(Ordering::Relaxed) {
            return Ok(true);
        }
        let mut asked = self.asked.lock().await;
        // Another buy may have asked while this one waited.
        if id.get() <= self.largest.load(Ordering::Relaxed) {
            return Ok(true);
        }
        if asked.is_some_and(|at| at.elapsed() < RECHECK) {
            return Ok(false);
        }
        let largest = store::vouchers::largest_id(db).await?;
        *asked = Some(Instant::now());
        self.largest.fetch_max(largest, Ordering::Relaxed);
        Ok(id.get() <= self.largest.load(Ordering::Relaxed))
    }
}
