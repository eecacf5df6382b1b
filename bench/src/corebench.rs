//! The core without HTTP: admissions per second of the Lua script from Rust, batched by the
//! admission lanes (the product) against one script call per buy; and the order worker's drain
//! rate from a filled queue into PostgreSQL; and a sold-out sale's buyers in memory (decision
//! 29): how long a sale of a million buyers takes to read, what it costs in memory, and refused
//! buys answered from it.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use seckill::{
    domain::{OrderId, UserId, VoucherId},
    jobs::order_writer::Worker,
    sale::{self, BuyError},
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

    let buyers = if options.quick { 20_000 } else { 1_000_000 };
    let memory = sold_out_memory(scratch, buyers).await?;

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
            (
                "a sold-out sale's buyers read into memory".into(),
                format!(
                    "{buyers} buyers in {:.2} s, RSS +{:.1} MB ({:.0} bytes a buyer)",
                    memory.read_secs,
                    memory.rss_mb,
                    memory.rss_mb * 1_048_576.0 / buyers as f64
                ),
            ),
            (
                "refused buys answered from it".into(),
                format!(
                    "{:.0}/s ({} buys by buyers and others in turn, {CONCURRENCY} tasks; Redis \
                     commands meanwhile: {}, the refusal renewed once per second)",
                    memory.refused_per_sec, memory.refused, memory.redis_commands
                ),
            ),
        ],
        notes: Vec::new(),
        json: serde_json::json!({
            "sold_out_buyers": buyers,
            "sold_out_read_secs": memory.read_secs,
            "sold_out_rss_mb": memory.rss_mb,
            "sold_out_refused_per_sec": memory.refused_per_sec,
            "sold_out_redis_commands": memory.redis_commands,
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

struct SoldOutMemory {
    read_secs: f64,
    rss_mb: f64,
    refused: usize,
    refused_per_sec: f64,
    redis_commands: u64,
}

/// A sale of `n` buyers, sold out: its buyers planted in Redis as admissions leave them, read
/// once by a refusal, then a buy by each buyer and as many by shoppers without an order, from
/// memory. Checks every answer and counts Redis's commands meanwhile.
async fn sold_out_memory(scratch: &Scratch, n: usize) -> anyhow::Result<SoldOutMemory> {
    let core = &scratch.core;
    let voucher = scratch
        .voucher(1, chrono::Duration::milliseconds(-1_000))
        .await?;
    let first = sale::buy(core, UserId::from_db(1), voucher).await?;
    let keys = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let order_of = |user: i64| OrderId::from_parts(1, u32::try_from(user).unwrap_or(u32::MAX));
    for chunk in (2..=n as i64).collect::<Vec<_>>().chunks(10_000) {
        let mut hset = redis::cmd("HSET");
        hset.arg(&keys.buyers);
        for &user in chunk {
            hset.arg(user).arg(order_of(user)?.to_redis_hex());
        }
        let _: () = hset.query_async(&mut redis).await?;
    }
    let outsider = |i: usize| UserId::from_db(n as i64 + 1 + i as i64);
    anyhow::ensure!(
        matches!(
            sale::buy(core, outsider(0), voucher).await,
            Err(BuyError::SoldOut)
        ),
        "the sale is sold out"
    );
    let rss_before = rss_mb()?;
    let started = Instant::now();
    // The first refusal from memory starts the read.
    let _ = sale::buy(core, outsider(0), voucher).await;
    while core.sold_out.kept() < n {
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(60),
            "read {} of {n} buyers in a minute",
            core.sold_out.kept()
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let read_secs = started.elapsed().as_secs_f64();
    let rss_mb = rss_mb()? - rss_before;

    let mut info = redis_info_connection(scratch).await?;
    let commands_before = redis_commands(&mut info).await?;
    let started = Instant::now();
    let wrong = futures::stream::iter(1..=2 * n)
        .map(|i| async move {
            // Buyers and shoppers without an order, one after the other, as in a crowd: the
            // refusal itself lapses every SECKILL_SOLD_OUT_TTL_MS and the next outsider's
            // script call renews it (decision 17), which a buyer's would not.
            if i % 2 == 1 {
                let buyer = (i as i64 + 1) / 2;
                let expected = if buyer == 1 { first } else { order_of(buyer)? };
                let answer = sale::buy(core, UserId::from_db(buyer), voucher).await;
                Ok::<_, anyhow::Error>(
                    !matches!(answer, Err(BuyError::AlreadyBought(o)) if o == expected),
                )
            } else {
                let answer = sale::buy(core, outsider(i), voucher).await;
                Ok(!matches!(answer, Err(BuyError::SoldOut)))
            }
        })
        .buffer_unordered(CONCURRENCY)
        .try_fold(
            0_usize,
            |acc, wrong| async move { Ok(acc + usize::from(wrong)) },
        )
        .await?;
    let secs = started.elapsed().as_secs_f64();
    // Less the INFO that read the count before.
    let redis_commands = (redis_commands(&mut info).await? - commands_before).saturating_sub(1);
    anyhow::ensure!(
        wrong == 0,
        "{wrong} of {} refused buys answered wrongly",
        2 * n
    );
    Ok(SoldOutMemory {
        read_secs,
        rss_mb,
        refused: 2 * n,
        refused_per_sec: (2 * n) as f64 / secs,
        redis_commands,
    })
}

/// This process's resident set, in MB.
fn rss_mb() -> anyhow::Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kb: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no VmRSS in /proc/self/status"))?;
    Ok(kb / 1024.0)
}

/// A connection of its own to the Redis (on a cluster, the first seed node).
async fn redis_info_connection(
    scratch: &Scratch,
) -> anyhow::Result<redis::aio::MultiplexedConnection> {
    let url = scratch
        .env
        .iter()
        .find(|(k, _)| k == "REDIS_URL")
        .map(|(_, v)| v.split(',').next().unwrap_or(v).to_owned())
        .ok_or_else(|| anyhow::anyhow!("no REDIS_URL"))?;
    Ok(redis::Client::open(url)?
        .get_multiplexed_async_connection()
        .await?)
}

/// Commands that Redis node has run (`INFO stats`' `total_commands_processed`), this INFO not
/// included.
async fn redis_commands(c: &mut redis::aio::MultiplexedConnection) -> anyhow::Result<u64> {
    let info: String = redis::cmd("INFO").arg("stats").query_async(c).await?;
    info.lines()
        .find_map(|l| l.strip_prefix("total_commands_processed:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| anyhow::anyhow!("no total_commands_processed in INFO stats"))
}
