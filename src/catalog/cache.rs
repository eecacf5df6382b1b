//! The catalog's rows kept per instance (decision 28): what PostgreSQL holds of each voucher
//! (title, description, price, window, stock) changes only when an admin acts, yet every list
//! and every sale page asked for it. An instance keeps the rows it read, keyed by the catalog
//! epoch ([`crate::Core::catalog_epoch`]): a change made here bumps it at once, a change made on
//! another instance reaches it by a pub/sub message ([`super::changed`]), and
//! `SECKILL_CATALOG_CACHE_MS` bounds what a lost message can cost.
//!
//! The stock left, as the shop's pages and API show it, is read from Redis at most once per
//! voucher and `SECKILL_STOCK_READ_MS` (500, the push feed's period) on an instance: a unit
//! taken here (an admission) or coming back anywhere (the stock-back announcement every
//! instance hears) forgets the reading at once; units taken on other instances show within the
//! period, like on an open page. The console reads its counts fresh (`catalog::list_counted`).

use std::sync::{
    atomic::{AtomicU64, Ordering},
    Arc,
};

use redis::AsyncCommands;

use sqlx::PgPool;

use crate::{
    domain::{Voucher, VoucherId},
    infra::{backend::Backend, keys::Keys, redis_conn::Redis, store, ttl_map::TtlMap},
};

/// Lists and rows kept at most (past it the map forgets; see [`TtlMap`]).
const CAP: usize = 10_000;

/// Rows and lists read from PostgreSQL, each under the epoch it was read at; stock readings.
#[derive(Debug)]
pub struct CatalogCache {
    lists: TtlMap<(u64, i64), Arc<Vec<Voucher>>>,
    rows: TtlMap<(u64, VoucherId), Option<Voucher>>,
    /// Redis's stock of a voucher (`None`: not preloaded), with the catalog epoch it was read
    /// at.
    stock: TtlMap<VoucherId, (u64, Option<i64>)>,
    /// Bumped by every forgotten reading: a read in flight meanwhile is not kept (it may have
    /// been made before the change).
    stock_forgets: AtomicU64,
    /// One reader of PostgreSQL at a time on a miss, so an expiry under load is one query.
    loading: tokio::sync::Mutex<()>,
}

impl CatalogCache {
    pub fn new(ttl: std::time::Duration, stock_ttl: std::time::Duration) -> Self {
        Self {
            lists: TtlMap::new(ttl, CAP),
            rows: TtlMap::new(ttl, CAP),
            stock: TtlMap::new(stock_ttl, CAP),
            stock_forgets: AtomicU64::new(0),
            loading: tokio::sync::Mutex::new(()),
        }
    }

    /// The newest `limit` vouchers.
    /// `epoch` is `Core::catalog_epoch`, read by the caller before this call: a change committed
    /// after it bumps it, so what is read here is never kept under a newer epoch than it saw.
    pub async fn list(
        &self,
        db: &PgPool,
        epoch: u64,
        limit: i64,
    ) -> Result<Arc<Vec<Voucher>>, sqlx::Error> {
        let key = (epoch, limit);
        if let Some(list) = self.lists.get(&key) {
            return Ok(list);
        }
        let _one = self.loading.lock().await;
        if let Some(list) = self.lists.get(&key) {
            return Ok(list);
        }
        let list = Arc::new(store::vouchers::list(db, limit).await?);
        self.lists.insert(key, Arc::clone(&list));
        Ok(list)
    }

    /// One voucher, `None` if there is none (remembered too: a page asked again and again for
    /// an ID that does not exist costs no query each).
    pub async fn get(
        &self,
        db: &PgPool,
        epoch: u64,
        id: VoucherId,
    ) -> Result<Option<Voucher>, sqlx::Error> {
        let key = (epoch, id);
        if let Some(row) = self.rows.get(&key) {
            return Ok(row);
        }
        let _one = self.loading.lock().await;
        if let Some(row) = self.rows.get(&key) {
            return Ok(row);
        }
        let row = store::vouchers::get(db, id).await?;
        self.rows.insert(key, row.clone());
        Ok(row)
    }

    /// Redis's stock of each of `vouchers` (`None`: not preloaded), from this instance's
    /// readings; the ones it has none of read at once, one pipeline per voucher (their keys
    /// are in different slots), all in flight together.
    pub async fn stock(
        &self,
        (redis, keys): (&Redis, &Keys),
        epoch: u64,
        vouchers: &[VoucherId],
    ) -> Result<Vec<Option<i64>>, Backend> {
        let forgets = self.stock_forgets.load(Ordering::Acquire);
        let known: Vec<Option<Option<i64>>> = vouchers
            .iter()
            .map(|v| {
                self.stock
                    .get(v)
                    .filter(|(e, _)| *e == epoch)
                    .map(|(_, s)| s)
            })
            .collect();
        let read = futures::future::try_join_all(
            vouchers
                .iter()
                .zip(&known)
                .filter(|(_, k)| k.is_none())
                .map(|(v, _)| {
                    let (mut redis, key, v) = (redis.clone(), keys.voucher(*v).stock, *v);
                    async move {
                        let stock: Option<i64> = redis.get(key).await?;
                        Ok::<_, Backend>((v, stock))
                    }
                }),
        )
        .await?;
        if self.stock_forgets.load(Ordering::Acquire) == forgets {
            for (v, stock) in &read {
                self.stock.insert(*v, (epoch, *stock));
            }
        }
        let mut fresh = read.into_iter().map(|(_, s)| s);
        Ok(known
            .into_iter()
            .map(|k| k.unwrap_or_else(|| fresh.next().flatten()))
            .collect())
    }

    /// Forgets the stock reading of `voucher` (a unit taken here, or coming back anywhere).
    pub fn forget_stock(&self, voucher: VoucherId) {
        self.stock_forgets.fetch_add(1, Ordering::AcqRel);
        self.stock.remove(&voucher);
    }

    /// Forgets everything (a resubscription: changes may have been missed meanwhile).
    pub fn clear(&self) {
        self.lists.clear();
        self.rows.clear();
        self.stock.clear();
    }
}
