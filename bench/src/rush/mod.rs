//! Sale day over real HTTP: N shoppers with sessions fire one buy each from C connections at the
//! moment the sale opens, then poll every returned order ID until it is final. The release
//! server runs as a child process (its peak RSS is read from /proc), on a scratch database and
//! key prefix. The invariants I1–I4 are checked against PostgreSQL and Redis afterwards, and the
//! ceilings (the same Lua script under `redis-benchmark`, a raw batched insert) are measured in
//! the same run, so the ratios compare like with like on a noisy machine.

//!
//! | file | job |
//! | --- | --- |
//! | `setup.rs` | the server, the shoppers' sessions, the sale, warm connections |
//! | `fire.rs` | the rush: one buy per shopper from every connection at once |
//! | `measure.rs` | every ID to final, the drain rate, the invariants I1–I4 |
//! | `ceilings.rs` | the script alone under `redis-benchmark`, a raw batched insert |
//! | `rounds.rs` | more sales on the same server, each rush beside its own `/api/live` |
//! | `summary.rs` | figures beside ceilings and targets, as a report |
//! | `process.rs` | the server as a child process, `perf` on it |

mod ceilings;
mod cpu;
pub(crate) mod fire;
pub(crate) mod measure;
pub(crate) mod process;
mod rounds;
pub(crate) mod setup;
mod summary;

use anyhow::bail;
use tokio::time::Instant;

use crate::{scratch::Scratch, Options};

/// How big a rush is.
pub struct Scenario {
    pub shoppers: usize,
    pub stock: usize,
    pub conns: usize,
    /// Open loop at this many buys offered per second (`None`: closed loop over `conns`).
    pub rate: Option<usize>,
}

impl Scenario {
    fn from(o: &Options) -> Self {
        let (shoppers, stock, conns) = if o.quick {
            (2_000, 200, 50)
        } else {
            (100_000, 10_000, 1_000)
        };
        Self {
            shoppers: o.shoppers.unwrap_or(shoppers),
            stock: o.stock.unwrap_or(stock),
            conns: o.conns.unwrap_or(conns),
            rate: o.rate,
        }
    }
}

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let sc = Scenario::from(options);
    println!(
        "rush: {} shoppers, stock {}, {} connections",
        sc.shoppers, sc.stock, sc.conns
    );
    let scratch = Scratch::new("rush").await?;
    let result = rush(options, &sc, &scratch).await;
    scratch.cleanup().await?;
    result
}

/// Set-up, fire, measure, report.
async fn rush(options: &Options, sc: &Scenario, scratch: &Scratch) -> anyhow::Result<()> {
    let mut stage = setup::Stage::prepare(options, sc, scratch).await?;
    let base = stage.server.base.clone();
    stage.wait_for_opening().await;

    let cpu_before = cpu::CpuClock::read(stage.server.pid());
    let fire_start = Instant::now();
    let (fired, send_lag) = match sc.rate {
        Some(rate) => {
            fire::fire_open_loop(
                &stage.client,
                &base,
                stage.voucher,
                &stage.tokens,
                sc.conns,
                rate,
            )
            .await?
        }
        None => (
            fire::fire_all(&stage.client, &base, stage.voucher, &stage.tokens, sc.conns).await?,
            std::time::Duration::ZERO,
        ),
    };
    let fire_elapsed = fire_start.elapsed();
    // The profile is the rush's alone: the polling below reads PostgreSQL.
    let profile = stage.stop_profiler()?;
    let cpu_rush = cpu_before
        .zip(cpu::CpuClock::read(stage.server.pid()))
        .map(|(a, b)| a.per_request(b, sc.shoppers));

    // Every returned ID until it is final.
    let poll_start = Instant::now();
    let statuses = measure::poll_all(
        &stage.client,
        &base,
        &stage.tokens,
        &fired.admitted,
        sc.conns,
    )
    .await?;
    let poll_elapsed = poll_start.elapsed();
    // The stack's own ceiling, same server, connections and shoppers (closed loop only).
    let (live, cpu_live) = match sc.rate {
        None => {
            let before = cpu::CpuClock::read(stage.server.pid());
            let ceiling = fire::live_ceiling(&stage.client, &base, &stage.tokens, sc.conns).await?;
            let spent = before
                .zip(cpu::CpuClock::read(stage.server.pid()))
                .map(|(a, b)| a.per_request(b, stage.tokens.len()));
            (Some(ceiling), spent)
        }
        Some(_) => (None, None),
    };
    // Further sales on the same server, each rush beside its own ceiling (closed loop only).
    let pairs = match live {
        Some(ceiling) => {
            let first = rounds::Pair {
                buys_per_sec: sc.shoppers as f64 / fire_elapsed.as_secs_f64(),
                live_per_sec: ceiling.per_sec,
                p99_ms: fired.latency.value_at_quantile(0.99) as f64 / 1e3,
                live_p99_ms: ceiling.p99_ms,
            };
            let sales = options.rounds.unwrap_or(if options.quick { 1 } else { 5 });
            let more = sales.saturating_sub(1);
            let mut pairs = vec![first];
            pairs.extend(rounds::further(&stage, sc, scratch, more).await?);
            pairs
        }
        None => Vec::new(),
    };
    let peak_rss_mb = stage.server.peak_rss_mb();
    stage.server.stop();

    let drain = measure::drain(scratch, stage.voucher).await?;
    let written_after_last_admission = match (fired.last_admitted, drain.last_written) {
        (Some((_, admitted_at)), Some(w)) => {
            Some((w - admitted_at).num_microseconds().unwrap_or(0) as f64 / 1e6)
        }
        _ => None,
    };
    let violations =
        measure::check_invariants(scratch, stage.voucher, sc, &fired.admitted, &statuses).await?;

    // The ceilings, on the same machine, right after.
    let evalsha = ceilings::evalsha_ceiling(scratch, sc).await?;
    let insert = ceilings::insert_ceiling(scratch, sc.stock.max(5_000)).await?;

    let broken = violations.clone();
    summary::Figures {
        sc,
        buys_per_sec: sc.shoppers as f64 / fire_elapsed.as_secs_f64(),
        sold_out_after: fired
            .last_admitted
            .map(|(at, _)| at.duration_since(fire_start)),
        latency: fired.latency,
        latency_admitted: fired.latency_admitted,
        outcomes: fired.outcomes,
        written_after_last_admission,
        drain,
        poll_elapsed,
        peak_rss_mb,
        violations,
        evalsha,
        insert,
        live: live.map(|c| c.per_sec),
        cpu_rush,
        cpu_live,
        profile,
        send_lag,
        pairs,
    }
    .publish(options)?;
    if !broken.is_empty() {
        bail!("invariants broken: {}", broken.join("; "));
    }
    Ok(())
}
