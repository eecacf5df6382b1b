//! The drill after the rush: a rush, then a random third of the buyers cancel, a third pay and
//! a third never pay (a 4 s deadline), while the server (its worker, its sweep, the requests in
//! flight) is killed with `kill -9` twice and restarted. At quiescence every order is paid or
//! cancelled, no stock move is pending, and the extended I1 holds:
//! initial = Redis stock + queued + awaiting payment + paid.

use std::{
    collections::{BTreeMap, HashSet},
    sync::Arc,
    time::Duration,
};

use anyhow::bail;
use futures::StreamExt;
use seckill::domain::VoucherId;
use tokio::time::Instant;

use super::{open_sale, shoppers, Drilled, Fault, Opened};
use crate::{
    rush::{measure, process::Server, Scenario},
    scratch::Scratch,
    Options,
};

/// How long an order waits for payment in this drill.
const PAY_WITHIN_MS: u64 = 4_000;

/// What a shopper does with their order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intent {
    Cancel,
    Pay,
    Forget,
}

impl Intent {
    /// A third each, by a hash of the shopper's index (random, and the same on a rerun).
    fn of(shopper: usize) -> Self {
        match (shopper as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 62 {
            0 => Self::Cancel,
            1 => Self::Pay,
            2 => Self::Forget,
            // The fourth quarter spreads evenly over the three.
            _ => [Self::Cancel, Self::Pay, Self::Forget][shopper % 3],
        }
    }
}

pub async fn run(options: &Options, scratch: &Scratch) -> anyhow::Result<Drilled> {
    let sc = Scenario {
        shoppers: options
            .shoppers
            .unwrap_or(if options.quick { 1_500 } else { 3_000 }),
        stock: options
            .stock
            .unwrap_or(if options.quick { 600 } else { 1_500 }),
        conns: options.conns.unwrap_or(50),
        rate: None,
    };
    let mut env = scratch.env.clone();
    for (k, v) in [
        ("SECKILL_DEV_PAYMENTS", "true".to_owned()),
        ("SECKILL_PAY_WITHIN_MS", PAY_WITHIN_MS.to_string()),
        ("SECKILL_SWEEP_MS", "300".to_owned()),
    ] {
        env.push((k.to_owned(), v));
    }
    let Opened {
        mut server,
        port,
        tokens,
        voucher,
        client,
    } = open_sale(scratch, &env, &sc).await?;
    let answers = shoppers::buy_all(
        client.clone(),
        server.base.clone(),
        voucher,
        tokens.clone(),
        shoppers::Arrival {
            conns: sc.conns,
            pace: Duration::from_millis(10),
            deadline: Instant::now() + Duration::from_secs(60),
        },
    )
    .await?;
    let rushed = Instant::now();
    let mut violations = Vec::new();
    // Every order written before its shopper acts (a queued order can be neither paid nor
    // cancelled yet; the shopper's client would retry, this one waits).
    if let Err(e) = measure::poll_until(
        &client,
        &server.base,
        &tokens,
        &answers.admitted,
        sc.conns,
        rushed + Duration::from_secs(30),
    )
    .await
    {
        violations.push(format!("I3: not written within 30 s: {e}"));
    }

    // The shoppers act, retrying through the kills; the kills land while they do and while the
    // deadline's sweep cancels the rest.
    let acting = tokio::spawn(act(
        client.clone(),
        server.base.clone(),
        tokens.clone(),
        answers.admitted.clone(),
        sc.conns,
    ));
    let mut recovery = Vec::new();
    for (k, at) in [(1, 300), (2, 2_500)] {
        tokio::time::sleep_until(rushed + Duration::from_millis(at)).await;
        server.kill9();
        let down = Instant::now();
        server = Server::start_on(&env, port).await?;
        recovery.push((format!("kill {k} → healthy"), down.elapsed().as_secs_f64()));
    }
    let outcomes = acting.await??;
    let restarted = Instant::now();
    let settled = quiescent(scratch, voucher, restarted + SETTLE_WITHIN).await;
    match settled {
        Ok(()) => recovery.push((
            "→ every order paid or cancelled, no move pending".into(),
            restarted.elapsed().as_secs_f64(),
        )),
        Err(e) => violations.push(e.to_string()),
    }
    server.stop();
    violations.extend(check(scratch, voucher, &sc, &answers.admitted, &outcomes).await?);
    // M2 (the dev provider keeps no record of its own to check M1 and M3 against).
    violations.extend(seckill::orders::reconcile::money_violations(&scratch.core, &[], &[]).await?);
    violations.extend(answers.internal_errors());
    let final_after = violations
        .is_empty()
        .then(|| restarted.elapsed().as_secs_f64());
    let counted = |i: Intent| outcomes.values().filter(|o| o.0 == i).count();
    recovery.push((
        format!(
            "{} cancelled, {} paid ({} too late), {} left unpaid",
            counted(Intent::Cancel),
            outcomes
                .values()
                .filter(|o| o.0 == Intent::Pay && o.1 == 200)
                .count(),
            outcomes
                .values()
                .filter(|o| o.0 == Intent::Pay && o.1 == 409)
                .count(),
            answers.admitted.len() - counted(Intent::Cancel) - counted(Intent::Pay),
        ),
        0.0,
    ));
    Ok(Drilled {
        fault: Fault::KillAfterTheRush,
        sc,
        answers,
        recovery,
        final_after,
        violations,
    })
}

/// Each admitted shopper cancels or pays (per [`Intent`]), retrying transport errors and 503s
/// until an answer; returns order → (intent, final HTTP status).
async fn act(
    client: reqwest::Client,
    base: String,
    tokens: Arc<Vec<String>>,
    admitted: Vec<(usize, String)>,
    conns: usize,
) -> anyhow::Result<BTreeMap<String, (Intent, u16)>> {
    let results: Vec<(String, Intent, u16)> = futures::stream::iter(admitted)
        .filter(|(i, _)| std::future::ready(Intent::of(*i) != Intent::Forget))
        .map(|(i, order)| {
            let (client, base, tokens) = (client.clone(), base.clone(), tokens.clone());
            async move {
                let intent = Intent::of(i);
                let token = &tokens[i];
                let deadline = Instant::now() + Duration::from_secs(30);
                let mut status = 0;
                // An answer lost to a kill -9 (no answer, or a 5xx): the request may have
                // taken effect, so a later refusal is not the whole story.
                let mut lost = false;
                while Instant::now() < deadline {
                    let req = match intent {
                        Intent::Cancel => client.post(format!("{base}/api/orders/{order}/cancel")),
                        _ => client.post(format!("{base}/api/orders/{order}/pay")),
                    };
                    let sent = req
                        .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
                        .send()
                        .await;
                    if let Ok(r) = sent {
                        status = r.status().as_u16();
                        if status == 409 && intent == Intent::Pay {
                            // A pay asked again after its answer was lost: `already_paid` says
                            // it took effect; another refusal (the deadline passed meanwhile)
                            // cannot say whether the first one's payment was found since, so
                            // either end is true to what the shopper was told (status 0).
                            let body: serde_json::Value = r.json().await.unwrap_or_default();
                            if body["error"] == "already_paid" {
                                status = 200;
                            } else if lost {
                                status = 0;
                            }
                            break;
                        }
                        if status == 200 && intent == Intent::Pay {
                            // The dev provider's hosted page sends the shopper straight back to
                            // the order's page, whose visit looks the payment up. If this visit
                            // is lost (the server killed), the sweep's expiry finds it paid.
                            let body: serde_json::Value = r.json().await.unwrap_or_default();
                            if let Some(url) = body["redirect_url"].as_str() {
                                let _ = client
                                    .get(format!("{base}{url}"))
                                    .header(
                                        reqwest::header::COOKIE,
                                        format!("seckill_session={token}"),
                                    )
                                    .header(reqwest::header::ACCEPT, "text/html")
                                    .send()
                                    .await;
                            }
                        }
                        if status < 500 {
                            break;
                        }
                    }
                    lost = true;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                (order, intent, status)
            }
        })
        .buffer_unordered(conns)
        .collect()
        .await;
    Ok(results
        .into_iter()
        .map(|(order, intent, status)| (order, (intent, status)))
        .collect())
}

/// Every order paid or cancelled and no move pending this soon after the last restart: the
/// sweep's period (300 ms here) plus the lock lease a killed sweeper leaves (3 s,
/// `SECKILL_LOCK_LEASE_MS`), with room for a slow machine.
const SETTLE_WITHIN: Duration = Duration::from_secs(15);

/// Waits until no order of `voucher` awaits payment, nothing is queued, and no stock move is
/// pending.
async fn quiescent(scratch: &Scratch, voucher: VoucherId, until: Instant) -> anyhow::Result<()> {
    let core = &scratch.core;
    loop {
        let (created, pending): (i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM orders WHERE voucher_id = $1 AND status = 'created'),
                    (SELECT count(*) FROM stock_moves WHERE applied_at IS NULL)",
        )
        .bind(voucher.get())
        .fetch_one(&core.db)
        .await?;
        let mut redis = core.redis.clone();
        let queued: i64 = redis::cmd("HLEN")
            .arg(core.keys.voucher(voucher).queued)
            .query_async(&mut redis)
            .await?;
        if created == 0 && pending == 0 && queued == 0 {
            return Ok(());
        }
        if Instant::now() > until {
            bail!(
                "not quiescent {} s after the last restart: {created} awaiting payment, {pending} moves pending, {queued} queued",
                SETTLE_WITHIN.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The extended I1, I2 and what each shopper was told.
async fn check(
    scratch: &Scratch,
    voucher: VoucherId,
    sc: &Scenario,
    admitted: &[(usize, String)],
    outcomes: &BTreeMap<String, (Intent, u16)>,
) -> anyhow::Result<Vec<String>> {
    let core = &scratch.core;
    let mut broken = Vec::new();
    let (redis_stock, queued, buyers) = measure::redis_counts(scratch, voucher).await?;
    let rows: Vec<(i64, String, Option<String>)> =
        sqlx::query_as("SELECT id, status, cancelled_by FROM orders WHERE voucher_id = $1")
            .bind(voucher.get())
            .fetch_all(&core.db)
            .await?;
    let db_stock: i64 = sqlx::query_scalar("SELECT stock FROM vouchers WHERE id = $1")
        .bind(voucher.get())
        .fetch_one(&core.db)
        .await?;
    let count = |s: &str| rows.iter().filter(|r| r.1 == s).count() as i64;
    let (created, paid) = (count("created"), count("paid"));
    let initial = sc.stock as i64;
    let redis_stock = redis_stock.unwrap_or(-1);
    if redis_stock + queued + created + paid != initial {
        broken.push(format!(
            "I1: redis stock {redis_stock} + queued {queued} + awaiting {created} + paid {paid} != {initial}"
        ));
    }
    if db_stock != initial - created - paid {
        broken.push(format!(
            "I1: PostgreSQL stock {db_stock} != {initial} - {created} - {paid}"
        ));
    }
    if buyers != created + paid {
        broken.push(format!(
            "I2: Redis holds {buyers} buyers for {} live orders",
            created + paid
        ));
    }
    let ids: HashSet<String> = admitted.iter().map(|(_, id)| id.clone()).collect();
    let by_id: BTreeMap<String, (String, Option<String>)> = rows
        .into_iter()
        .map(|(id, s, by)| (id.to_string(), (s, by)))
        .collect();
    if by_id.len() != ids.len() || !by_id.keys().all(|id| ids.contains(id)) {
        broken.push(format!(
            "I4: {} orders written for {} admitted",
            by_id.len(),
            ids.len()
        ));
    }
    for (i, id) in admitted {
        let Some((status, by)) = by_id.get(id) else {
            continue;
        };
        let told = outcomes.get(id).copied();
        let ok = match (Intent::of(*i), told) {
            (Intent::Cancel, Some((_, 200))) => status == "cancelled",
            (Intent::Pay, Some((_, 200))) => status == "paid",
            // A payment refused (too late: the deadline passed while the server was down).
            (Intent::Pay, Some((_, 409))) => status == "cancelled",
            // Refused after an answer lost to a kill: paid by the first request, or cancelled.
            (Intent::Pay, Some((_, 0))) => status == "paid" || status == "cancelled",
            (Intent::Forget, None) => status == "cancelled" && by.as_deref() == Some("deadline"),
            _ => false,
        };
        if !ok {
            broken.push(format!(
                "order {id} ({:?}, told {told:?}) ended {status} by {by:?}",
                Intent::of(*i)
            ));
            if broken.len() > 20 {
                break;
            }
        }
    }
    Ok(broken)
}
