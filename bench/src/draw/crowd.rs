//! The crowd acting at its moments, and the sale settling: every winner admitted and written.

use std::{sync::Arc, time::Duration};

use redis::AsyncCommands;
use seckill::domain::VoucherId;
use tokio::{sync::Semaphore, time::Instant};

use super::{Arrival, Member, Outcome};
use crate::scratch::Scratch;

/// Everyone acts at their moment from the start of the call: bots from their own connections,
/// humans from theirs. Returns per member when their request left and its answer's status.
pub(super) async fn act(
    humans: &reqwest::Client,
    bots: &reqwest::Client,
    members: &[Member],
    tokens: &[String],
    conns: usize,
    url: impl Fn(usize) -> String,
) -> anyhow::Result<Vec<Arrival>> {
    let start = Instant::now();
    let (human_slots, bot_slots) = (
        Arc::new(Semaphore::new(conns)),
        Arc::new(Semaphore::new(conns)),
    );
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by_key(|i| members[*i].offset);
    let mut tasks = Vec::with_capacity(members.len());
    for i in order {
        let m = members[i];
        tokio::time::sleep_until(start + m.offset).await;
        let (client, slots) = if m.bot {
            (bots.clone(), bot_slots.clone())
        } else {
            (humans.clone(), human_slots.clone())
        };
        let (url, token) = (url(i), tokens[i].clone());
        tasks.push(tokio::spawn(async move {
            let _slot = slots.acquire_owned().await;
            let sent = start.elapsed();
            let status = client
                .post(url)
                .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
                .send()
                .await
                .ok()
                .map(|r| r.status().as_u16());
            (i, sent, status)
        }));
    }
    let mut out = vec![Arrival::default(); members.len()];
    for t in tasks {
        let (i, sent, status) = t.await?;
        out[i] = Arrival {
            sent,
            status,
            ..Arrival::default()
        };
    }
    Ok(out)
}

/// Waits until `stock` orders are admitted (Redis's stock at 0) and written (PostgreSQL), each
/// timed from `opening`.
pub(super) async fn settle(
    scratch: &Scratch,
    v: VoucherId,
    stock: usize,
    arrivals: Vec<Arrival>,
    opening: Instant,
) -> anyhow::Result<Outcome> {
    let mut o = Outcome {
        arrivals,
        admitted_after: Duration::ZERO,
        written_after: Duration::ZERO,
    };
    let keys = scratch.core.keys.voucher(v);
    let mut redis = scratch.core.redis.clone();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        // None: Redis lost the sale and the draw has not restored it yet.
        let left: Option<i64> = redis.get(&keys.stock).await?;
        if left.is_some_and(|n| n <= 0) {
            o.admitted_after = opening.elapsed();
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "{left:?} units never admitted");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    loop {
        let written: i64 = sqlx::query_scalar("SELECT count(*) FROM orders WHERE voucher_id = $1")
            .bind(v.get())
            .fetch_one(&scratch.core.db)
            .await?;
        if written >= i64::try_from(stock)? {
            o.written_after = opening.elapsed();
            return Ok(o);
        }
        anyhow::ensure!(Instant::now() < deadline, "only {written} orders written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Per user (in `users`' order), whether they hold a written order on `v`.
pub(super) async fn winners(
    scratch: &Scratch,
    v: VoucherId,
    users: &[(seckill::domain::UserId, seckill::domain::Phone)],
) -> anyhow::Result<Vec<bool>> {
    let holders: Vec<i64> = sqlx::query_scalar("SELECT user_id FROM orders WHERE voucher_id = $1")
        .bind(v.get())
        .fetch_all(&scratch.core.db)
        .await?;
    let holders: std::collections::HashSet<i64> = holders.into_iter().collect();
    Ok(users
        .iter()
        .map(|(u, _)| holders.contains(&u.get()))
        .collect())
}
