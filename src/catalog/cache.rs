//! The catalog's rows kept per instance (decision 28): what PostgreSQL holds of each voucher
//! (title, description, price, window, stock) changes only when an admin acts, yet every list
//! and every sale page asked for it. An instance keeps the rows it read, keyed by the catalog
//! epoch ([`crate::Core::catalog_epoch`]): a change made here bumps it at once, a change made on
//! another instance reaches it by a pub/sub message ([`super::changed`]), and
//! `SECKILL_CATALOG_CACHE_MS` bounds what a lost message can cost. The live counts (stock left,
//! queued, dead letters) are still Redis's, read per request.

use std::sync::Arc;

use crate::{
    domain::{Voucher, VoucherId},
    infra::{store, ttl_map::TtlMap},
    Core,
};

/// Lists and rows kept at most (past it the map forgets; see [`TtlMap`]).
const CAP: usize = 10_000;

/// Rows and lists read from PostgreSQL, each under the epoch it was read at.
#[derive(Debug)]
pub struct CatalogCache {
    lists: TtlMap<(u64, i64), Arc<Vec<Voucher>>>,
    rows: TtlMap<(u64, VoucherId), Option<Voucher>>,
    /// One reader of PostgreSQL at a time on a miss, so an expiry under load is one query.
    loading: tokio::sync::Mutex<()>,
}

impl CatalogCache {
    pub fn new(ttl: std::time::Duration) -> Self {
        Self {
            lists: TtlMap::new(ttl, CAP),
            rows: TtlMap::new(ttl, CAP),
            loading: tokio::sync::Mutex::new(()),
        }
    }

    /// The newest `limit` vouchers.
    pub async fn list(&self, core: &Core, limit: i64) -> Result<Arc<Vec<Voucher>>, sqlx::Error> {
        // The epoch is read before PostgreSQL: a change committed after it bumps it, so what is
        // read here is never kept under a newer epoch than it saw.
        let key = (core.catalog_epoch(), limit);
        if let Some(list) = self.lists.get(&key) {
            return Ok(list);
        }
        let _one = self.loading.lock().await;
        if let Some(list) = self.lists.get(&key) {
            return Ok(list);
        }
        let list = Arc::new(store::vouchers::list(&core.db, limit).await?);
        self.lists.insert(key, Arc::clone(&list));
        Ok(list)
    }

    /// One voucher, `None` if there is none (remembered too: a page asked again and again for
    /// an ID that does not exist costs no query each).
    pub async fn get(&self, core: &Core, id: VoucherId) -> Result<Option<Voucher>, sqlx::Error> {
        let key = (core.catalog_epoch(), id);
        if let Some(row) = self.rows.get(&key) {
            return Ok(row);
        }
        let _one = self.loading.lock().await;
        if let Some(row) = self.rows.get(&key) {
            return Ok(row);
        }
        let row = store::vouchers::get(&core.db, id).await?;
        self.rows.insert(key, row.clone());
        Ok(row)
    }

    /// Forgets everything (a resubscription: changes may have been missed meanwhile).
    pub fn clear(&self) {
        self.lists.clear();
        self.rows.clear();
    }
}
