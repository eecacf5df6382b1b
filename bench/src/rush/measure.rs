//! After the rush: every returned ID followed to its final status, the drain rate from
//! PostgreSQL's own timestamps, and the invariants I1–I4.

use std::{
    collections::{BTreeMap, HashSet},
    time::Duration,
};

use anyhow::bail;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use seckill::domain::VoucherId;
use tokio::time::Instant;

use super::Scenario;
use crate::scratch::Scratch;

/// How fast the worker wrote the sale's orders.
pub struct Drain {
    pub written: i64,
    pub secs: f64,
    pub rate: f64,
    pub last_written: Option<DateTime<Utc>>,
}

/// The drain of `voucher`, from PostgreSQL's `written_at` stamps.
pub async fn drain(scratch: &Scratch, voucher: VoucherId) -> anyhow::Result<Drain> {
    drain_of(scratch, &[voucher]).await
}

/// The drain of several sales together: their orders, first to last written.
pub async fn drain_of(scratch: &Scratch, vouchers: &[VoucherId]) -> anyhow::Result<Drain> {
    let ids: Vec<i64> = vouchers.iter().map(|v| v.get()).collect();
    let (written, first_written, last_written): (
        i64,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
    ) = sqlx::query_as(
        "SELECT count(*), min(written_at), max(written_at) FROM orders WHERE voucher_id = ANY($1)",
    )
    .bind(&ids)
    .fetch_one(&scratch.core.db)
    .await?;
    let secs = match (first_written, last_written) {
        (Some(a), Some(b)) => (b - a).num_microseconds().unwrap_or(0) as f64 / 1e6,
        _ => 0.0,
    };
    let rate = if secs > 0.0 {
        written as f64 / secs
    } else {
        f64::NAN
    };
    Ok(Drain {
        written,
        secs,
        rate,
        last_written,
    })
}

/// Polls every admitted ID until `created` or `failed` (60 s at most); returns the statuses.
pub async fn poll_all(
    client: &reqwest::Client,
    base: &str,
    tokens: &[String],
    admitted: &[(usize, String)],
    conns: usize,
) -> anyhow::Result<BTreeMap<String, String>> {
    poll_until(
        client,
        base,
        tokens,
        admitted,
        conns,
        Instant::now() + Duration::from_secs(60),
    )
    .await
}

/// [`poll_all`] with a deadline of the caller's.
pub async fn poll_until(
    client: &reqwest::Client,
    base: &str,
    tokens: &[String],
    admitted: &[(usize, String)],
    conns: usize,
    deadline: Instant,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut pending: Vec<(usize, String)> = admitted.to_vec();
    let mut finals = BTreeMap::new();
    while !pending.is_empty() {
        let replies: Vec<((usize, String), Option<String>)> = futures::stream::iter(pending)
            .map(|(i, id)| async move {
                let status = client
                    .get(format!("{base}/api/orders/{id}"))
                    .header(
                        reqwest::header::COOKIE,
                        format!("seckill_session={}", tokens[i]),
                    )
                    .send()
                    .await
                    .ok()
                    .filter(|r| r.status().is_success());
                let status =
                    match status {
                        Some(r) => r.json::<serde_json::Value>().await.ok().and_then(|b| {
                            b.get("status").and_then(|s| s.as_str()).map(str::to_owned)
                        }),
                        None => None,
                    };
                ((i, id), status)
            })
            .buffer_unordered(conns)
            .collect()
            .await;
        pending = Vec::new();
        for ((i, id), status) in replies {
            match status.as_deref() {
                Some("created" | "failed") => {
                    finals.insert(id, status.unwrap_or_default());
                }
                _ => pending.push((i, id)),
            }
        }
        if pending.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            bail!("{} orders still not final by the deadline", pending.len());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(finals)
}

/// A sale's Redis stock (`None` when absent), queued orders and recorded buyers, in one round
/// trip.
pub async fn redis_counts(
    scratch: &Scratch,
    voucher: VoucherId,
) -> anyhow::Result<(Option<i64>, i64, i64)> {
    let k = scratch.core.keys.voucher(voucher);
    let mut redis = scratch.core.redis.clone();
    Ok(redis::pipe()
        .get(&k.stock)
        .hlen(&k.queued)
        .hlen(&k.buyers)
        .query_async(&mut redis)
        .await?)
}

/// I1–I4 against PostgreSQL and Redis; returns what is broken.
pub async fn check_invariants(
    scratch: &Scratch,
    voucher: VoucherId,
    sc: &Scenario,
    admitted: &[(usize, String)],
    statuses: &BTreeMap<String, String>,
) -> anyhow::Result<Vec<String>> {
    let core = &scratch.core;
    let mut broken = Vec::new();
    let (redis_stock, queued, buyers) = redis_counts(scratch, voucher).await?;
    let (written, distinct_users, db_stock): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM orders WHERE voucher_id = $1),
                (SELECT count(DISTINCT user_id) FROM orders WHERE voucher_id = $1),
                (SELECT stock FROM vouchers WHERE id = $1)",
    )
    .bind(voucher.get())
    .fetch_one(&core.db)
    .await?;
    let initial = sc.stock as i64;
    let redis_stock = redis_stock.unwrap_or(-1);
    // I1: never oversold, and conservation at quiescence.
    if written > initial {
        broken.push(format!("I1: {written} written > stock {initial}"));
    }
    if redis_stock + queued + written != initial {
        broken.push(format!(
            "I1: redis stock {redis_stock} + queued {queued} + written {written} != {initial}"
        ));
    }
    if db_stock != initial - written {
        broken.push(format!(
            "I1/I4: PostgreSQL stock {db_stock} != {initial} - {written}"
        ));
    }
    let expected = sc.stock.min(sc.shoppers) as i64;
    if admitted.len() as i64 != expected {
        broken.push(format!(
            "I1: {} admitted, expected {expected}",
            admitted.len()
        ));
    }
    // I2: one per shopper.
    if distinct_users != written {
        broken.push(format!(
            "I2: {written} orders for {distinct_users} shoppers"
        ));
    }
    let shoppers: HashSet<usize> = admitted.iter().map(|(i, _)| *i).collect();
    if shoppers.len() != admitted.len() {
        broken.push("I2: a shopper was admitted twice".into());
    }
    if buyers != written {
        broken.push(format!("I2: Redis buyers {buyers} != written {written}"));
    }
    // I3: every returned ID is final.
    if statuses.len() != admitted.len() {
        broken.push(format!(
            "I3: {} of {} IDs final",
            statuses.len(),
            admitted.len()
        ));
    }
    // I4: exactly the admitted IDs were written, each once.
    let rows: Vec<i64> = sqlx::query_scalar("SELECT id FROM orders WHERE voucher_id = $1")
        .bind(voucher.get())
        .fetch_all(&core.db)
        .await?;
    let rows: HashSet<String> = rows.into_iter().map(|id| id.to_string()).collect();
    let created: HashSet<String> = statuses
        .iter()
        .filter(|(_, s)| *s == "created")
        .map(|(id, _)| id.clone())
        .collect();
    if rows != created {
        broken.push(format!(
            "I4: {} rows vs {} IDs reported created",
            rows.len(),
            created.len()
        ));
    }
    Ok(broken)
}
