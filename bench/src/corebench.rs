//! The core without HTTP: admissions per second of the Lua script from Rust, batched by the
//! admission lanes (the product) against one script call per buy; and the order worker's drain
//! rate from a filled queue into PostgreSQL.

use std::time::Duration;

use futures::StreamExt;
use seckill::{
    domain::{UserId, VoucherId},
    jobs::order_writer::Worker,
    testing::scripts::{self, AdmissionOutcome},
};
use tokio::time::Instant;

use crate::{report::Report, scratch::Scratch, Options};

const CONCURRENCY: usize = 64;
/// Attempts allowed per shopper and second: each shopper here tries once.
const ATTEMPTS: u32 = 5;

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("core").await?;
    let result = bench(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

async fn bench(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let attempts = if options.quick { 5_000 } else { 100_000 };
    let backlog = if options.quick { 2_000 } else { 20_000 };

    // Admission: every attempt is admitted (stock = attempts, distinct users), the heaviest path.
    let mut batched = Vec::new();
    let mut single = Vec::new();
    for round in 0..2 {
        batched.push(admissions(scratch, attempts, true, round).await?);
        single.push(admissions(scratch, attempts, false, round).await?);
    }
    let best = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (a, b) = (best(&batched), best(&single));

    // Drain: a queue of `backlog` admitted orders, written by one worker.
    let users = scratch.users(backlog).await?;
    let voucher = scratch
        .voucher(backlog, chrono::Duration::milliseconds(-1_000))
        .await?;
    let mut redis = scratch.core.redis.clone();
    futures::stream::iter(users.iter().map(|(u, _)| *u))
        .map(|u| {
            let mut redis = redis.clone();
            let keys = scratch.core.keys.clone();
            async move { scripts::admit(&mut redis, &keys, voucher, u, ATTEMPTS).await }
        })
        .buffer_unordered(CONCURRENCY)
        .for_each(|_| async {})
        .await;
    let queued: i64 = redis::cmd("HLEN")
        .arg(scratch.core.keys.voucher(voucher).queued)
        .query_async(&mut redis)
        .await?;
    let mut worker = Worker::new(scratch.core.clone(), "bench-drain").await?;
    let started = Instant::now();
    let report = worker.drain().await?;
    let drain_secs = started.elapsed().as_secs_f64();
    let drain_rate = report.written as f64 / drain_secs;
    anyhow::ensure!(
        report.written == u64::try_from(queued)?,
        "drained {} of {queued}",
        report.written
    );

    Report {
        name: if options.quick { "core-quick" } else { "core" },
        title: format!("Core{}", if options.quick { " (quick)" } else { "" }),
        rows: vec![
            (
                "admissions/s, batched lanes (product)".into(),
                format!("{a:.0} (rounds: {})", fmt_all(&batched)),
            ),
            (
                "admissions/s, one script call per buy".into(),
                format!("{b:.0} (rounds: {})", fmt_all(&single)),
            ),
            ("batched ÷ single".into(), format!("{:.2}", a / b)),
            (
                "set-up".into(),
                format!("{attempts} admissions per round, {CONCURRENCY} tasks on one multiplexed connection"),
            ),
            (
                "worker drain into PostgreSQL".into(),
                format!(
                    "{drain_rate:.0} orders/s ({} orders in {drain_secs:.3} s, batch {})",
                    report.written, scratch.core.config.worker.batch_size
                ),
            ),
        ],
        notes: Vec::new(),
        json: serde_json::json!({
            "admissions_per_sec_batched": batched,
            "admissions_per_sec_single": single,
            "ratio_batched_to_single": a / b,
            "concurrency": CONCURRENCY,
            "attempts_per_round": attempts,
            "drain_orders_per_sec": drain_rate,
            "drained": report.written,
        }),
    }
    .publish(options)
}

fn fmt_all(v: &[f64]) -> String {
    v.iter()
        .map(|x| format!("{x:.0}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Admissions per second for `n` distinct users on a fresh sale of stock `n`.
async fn admissions(scratch: &Scratch, n: usize, batched: bool, round: u32) -> anyhow::Result<f64> {
    let core = &scratch.core;
    let voucher = VoucherId::try_from(1_000_000_000 + i64::from(round) * 2 + i64::from(batched))?;
    let k = scratch.redis_only_sale(voucher.get(), n).await?;
    let started = Instant::now();
    let admitted = futures::stream::iter(1..=n as i64)
        .map(|u| {
            let mut redis = core.redis.clone();
            let keys = core.keys.clone();
            async move {
                let user = UserId::from_db(u);
                if batched {
                    Ok::<_, anyhow::Error>(core.admissions.admit(voucher, user).await?)
                } else {
                    Ok(scripts::admit(&mut redis, &keys, voucher, user, ATTEMPTS).await?)
                }
            }
        })
        .buffer_unordered(CONCURRENCY)
        .fold(0_usize, |acc, r| async move {
            acc + usize::from(matches!(r, Ok(AdmissionOutcome::Admitted(_))))
        })
        .await;
    let rate = n as f64 / started.elapsed().as_secs_f64();
    anyhow::ensure!(admitted == n, "admitted {admitted} of {n}");
    // Leave Redis as it was for the next round.
    let _: () = redis::cmd("UNLINK")
        .arg(&k.sale)
        .arg(&k.stock)
        .arg(&k.buyers)
        .arg(&k.queued)
        .arg(&k.orders)
        .query_async(&mut core.redis.clone())
        .await?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(rate)
}
