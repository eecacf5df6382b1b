//! The distributed lock: acquire+release pairs per second, uncontended and with 50 contenders
//! on one name, and how long a waiter takes to get the lock after its release (pub/sub wake-up).

use std::{sync::Arc, time::Duration};

use seckill::testing::lock::{LockClient, LockOptions};
use tokio::time::Instant;

use crate::{
    report::{self, Report},
    scratch::Scratch,
    Options,
};

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("lock").await?;
    let result = bench(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

async fn bench(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let pairs = if options.quick { 500 } else { 10_000 };
    let trials = if options.quick { 20 } else { 200 };
    let client = || {
        LockClient::single(
            scratch.core.redis_deployment().clone(),
            scratch.core.keys.clone(),
            LockOptions::default(),
        )
    };

    // Uncontended: one task, one name, acquire then release.
    let solo = client();
    let started = Instant::now();
    for _ in 0..pairs {
        solo.acquire("solo").await?.release().await?;
    }
    let uncontended = pairs as f64 / started.elapsed().as_secs_f64();

    // 50 contenders, each its own client (own owner identity), on one name.
    let contenders = 50;
    let per_task = pairs / contenders;
    let started = Instant::now();
    let tasks: Vec<_> = (0..contenders)
        .map(|_| {
            let c = client();
            tokio::spawn(async move {
                for _ in 0..per_task {
                    c.acquire("contended").await?.release().await?;
                }
                Ok::<_, seckill::testing::lock::LockError>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    let contended = (per_task * contenders) as f64 / started.elapsed().as_secs_f64();

    // Wake-up: a waiter blocked in try_acquire gets the lock after the holder releases.
    let mut wake = report::histogram()?;
    let holder = client();
    let waiter = Arc::new(client());
    for _ in 0..trials {
        let guard = holder.acquire("wake").await?;
        let w = waiter.clone();
        let waiting = tokio::spawn(async move {
            let g = w.try_acquire("wake", Duration::from_secs(10)).await?;
            let at = Instant::now();
            if let Some(g) = g {
                g.release().await?;
            }
            Ok::<_, seckill::testing::lock::LockError>(at)
        });
        // Let the waiter try, fail, subscribe and sleep.
        tokio::time::sleep(Duration::from_millis(20)).await;
        let released = Instant::now();
        guard.release().await?;
        let granted = waiting.await??;
        wake.saturating_record(
            u64::try_from(granted.duration_since(released).as_micros()).unwrap_or(u64::MAX),
        );
    }

    Report {
        name: if options.quick { "lock-quick" } else { "lock" },
        title: format!("Lock{}", if options.quick { " (quick)" } else { "" }),
        rows: vec![
            (
                "acquire+release pairs/s, uncontended".into(),
                format!("{uncontended:.0} ({pairs} pairs, one task)"),
            ),
            (
                "acquire+release pairs/s, 50 contenders on one name".into(),
                format!("{contended:.0} ({} pairs)", per_task * contenders),
            ),
            (
                "wake-up after release (pub/sub)".into(),
                format!("{} over {trials} trials", report::latency_row(&wake)),
            ),
        ],
        notes: Vec::new(),
        json: serde_json::json!({
            "uncontended_pairs_per_sec": uncontended,
            "contended_pairs_per_sec": contended,
            "contenders": contenders,
            "wake_up": report::latency_json(&wake),
        }),
    }
    .publish(options)
}
