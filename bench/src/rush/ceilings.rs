//! The ceilings a rush is compared with, measured right after it on the same machine: the
//! admission script alone under `redis-benchmark`, and a raw batched insert into PostgreSQL.

use std::process::Command;

use anyhow::Context;
use seckill::{
    domain::{Shard, VoucherId},
    testing::scripts::{self, CounterDay},
};
use tokio::time::Instant;

use super::Scenario;
use crate::scratch::Scratch;

/// The admission script alone, by EVALSHA from `redis-benchmark`, one shopper per call (random
/// user IDs), with the same connections and stock: requests per second.
pub async fn evalsha_ceiling(scratch: &Scratch, sc: &Scenario) -> anyhow::Result<f64> {
    let core = &scratch.core;
    let scratch_voucher = VoucherId::try_from(2_000_000_000)?;
    let k = scratch
        .redis_only_sale(scratch_voucher.get(), sc.stock)
        .await?;
    let shard = Shard::of_voucher(scratch_voucher);
    let day = CounterDay::today();
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(scripts::ADMIT_SOURCE.as_str())
        .query_async(&mut core.redis.clone())
        .await?;
    let url = reqwest::Url::parse(&scratch.env[1].1)?;
    let out = Command::new("redis-benchmark")
        .args(["-h", url.host_str().unwrap_or("127.0.0.1")])
        .args(["-p", &url.port().unwrap_or(6379).to_string()])
        .args(["-c", &sc.conns.to_string(), "-n", &sc.shoppers.to_string()])
        .args(["-r", "100000000", "-q", "EVALSHA", &sha, "7"])
        .args([&k.sale, &k.stock, &k.buyers, &k.queued, &k.orders])
        .arg(day.counter(&core.keys, shard))
        .arg(format!("{}__rand_int__", k.rate))
        .arg(day.get().to_string())
        .arg(scratch_voucher.get().to_string())
        .arg(core.config.limits.buys_per_second.to_string())
        .arg(shard.index().to_string())
        .arg("__rand_int__")
        .output()
        .context("redis-benchmark (installed with redis-server by scripts/setup.sh)")?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "EVALSHA ...: 41666.67 requests per second, p50=..." (the last \r-separated update).
    let rps = text
        .rsplit(['\r', '\n'])
        .find_map(|line| {
            let (_, rest) = line.rsplit_once(": ")?;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
        .with_context(|| format!("unexpected redis-benchmark output: {text}"))?;
    let admitted: i64 = redis::cmd("HLEN")
        .arg(&k.queued)
        .query_async(&mut core.redis.clone())
        .await?;
    if admitted != sc.stock.min(sc.shoppers) as i64 && sc.shoppers >= sc.stock * 2 {
        tracing::warn!(admitted, "the ceiling run admitted an unexpected count");
    }
    Ok(rps)
}

/// A raw batched insert of `n` order rows into a scratch copy of the orders table, in
/// transactions of the worker's batch size: rows per second.
pub async fn insert_ceiling(scratch: &Scratch, n: usize) -> anyhow::Result<f64> {
    let db = &scratch.core.db;
    sqlx::raw_sql("CREATE TABLE scratch_orders (LIKE orders INCLUDING ALL)")
        .execute(db)
        .await?;
    let batch = scratch.core.config.worker.batch_size;
    let ids: Vec<i64> = (1..=n as i64).collect();
    let started = Instant::now();
    for chunk in ids.chunks(batch) {
        let mut tx = db.begin().await?;
        sqlx::query(
            "INSERT INTO scratch_orders (id, voucher_id, user_id, admitted_at, pay_by)
             SELECT id, 1, id, now(), now() + interval '15 minutes'
             FROM UNNEST($1::bigint[]) AS t(id)",
        )
        .bind(chunk)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    sqlx::raw_sql("DROP TABLE scratch_orders")
        .execute(db)
        .await?;
    Ok(rate)
}
