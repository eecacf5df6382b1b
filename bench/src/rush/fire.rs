//! The rush itself: every connection takes the next shopper and buys, until all have tried.

use std::{
    collections::BTreeMap,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
};

use chrono::{DateTime, Utc};
use hdrhistogram::Histogram;
use seckill::domain::VoucherId;
use tokio::time::Instant;

use crate::report;

/// What the connections saw, together.
pub struct Fired {
    pub latency: Histogram<u64>,
    /// The admissions' alone: a shopper who gets a unit waits for the admission script, one
    /// refused from memory does not.
    pub latency_admitted: Histogram<u64>,
    pub outcomes: BTreeMap<String, u64>,
    /// (shopper index, order ID) of each admission.
    pub admitted: Vec<(usize, String)>,
    pub last_admitted: Option<(Instant, DateTime<Utc>)>,
}

/// What one connection saw. Its latencies are a plain list, made into one histogram at the end:
/// a histogram of this range is ~200 KB, and one per connection (1,000 zeroed, then merged)
/// cost the load generator, on the server's cores, more than the requests they counted.
#[derive(Default)]
struct Shots {
    latencies_us: Vec<u64>,
    admitted_us: Vec<u64>,
    outcomes: BTreeMap<String, u64>,
    admitted: Vec<(usize, String)>,
    last_admitted: Option<(Instant, DateTime<Utc>)>,
}

impl Fired {
    /// Every connection's shots together.
    fn from_shots(all: Vec<Shots>) -> anyhow::Result<Self> {
        let mut fired = Self {
            latency: report::histogram()?,
            latency_admitted: report::histogram()?,
            outcomes: BTreeMap::new(),
            admitted: Vec::new(),
            last_admitted: None,
        };
        for shots in all {
            for us in shots.latencies_us {
                fired.latency.saturating_record(us);
            }
            for us in shots.admitted_us {
                fired.latency_admitted.saturating_record(us);
            }
            for (k, v) in shots.outcomes {
                *fired.outcomes.entry(k).or_default() += v;
            }
            fired.admitted.extend(shots.admitted);
            fired.last_admitted = match (fired.last_admitted, shots.last_admitted) {
                (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
                (a, b) => a.or(b),
            };
        }
        Ok(fired)
    }
}

/// Fires one buy per shopper from `conns` connections at once; returns what they saw together.
pub async fn fire_all(
    client: &reqwest::Client,
    base: &str,
    voucher: VoucherId,
    tokens: &Arc<Vec<String>>,
    conns: usize,
) -> anyhow::Result<Fired> {
    let next = Arc::new(AtomicUsize::new(0));
    let url = format!("{base}/api/vouchers/{voucher}/orders");
    let tasks: Vec<_> = (0..conns)
        .map(|_| {
            let (client, tokens, next, url) =
                (client.clone(), tokens.clone(), next.clone(), url.clone());
            tokio::spawn(async move { fire(&client, &url, &tokens, &next).await })
        })
        .collect();
    let mut all = Vec::with_capacity(conns);
    for t in tasks {
        all.push(t.await?);
    }
    Fired::from_shots(all)
}

/// What the ceiling measured: its rate, and its latency in the same closed loop (the floor of
/// any buy's: a request that waits behind 1,000 connections on two shared cores waits that long
/// whatever it asks for).
#[derive(Debug, Clone, Copy)]
pub struct Ceiling {
    pub per_sec: f64,
    pub p99_ms: f64,
}

/// The same shape against the server's trivial endpoint (`GET /api/live`): one request per
/// shopper with their cookie, `conns` connections each taking the next, each latency kept as a
/// buy's is. What this stack costs per request on this machine: the ceiling a buy is measured
/// against.
pub async fn live_ceiling(
    client: &reqwest::Client,
    base: &str,
    tokens: &Arc<Vec<String>>,
    conns: usize,
) -> anyhow::Result<Ceiling> {
    let next = Arc::new(AtomicUsize::new(0));
    let url = Arc::new(format!("{base}/api/live"));
    let started = Instant::now();
    let tasks: Vec<_> = (0..conns)
        .map(|_| {
            let (client, tokens, next, url) =
                (client.clone(), tokens.clone(), next.clone(), url.clone());
            tokio::spawn(async move {
                let (mut failed, mut latencies_us) = (0_usize, Vec::new());
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(token) = tokens.get(i) else {
                        return (failed, latencies_us);
                    };
                    let sent = Instant::now();
                    let answer = client
                        .get(url.as_str())
                        .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
                        .send()
                        .await;
                    let ok = match answer {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    latencies_us
                        .push(u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX));
                    failed += usize::from(!ok);
                }
            })
        })
        .collect();
    let mut failed = 0;
    let mut latency = report::histogram()?;
    for t in tasks {
        let (f, latencies_us) = t.await?;
        failed += f;
        for us in latencies_us {
            latency.saturating_record(us);
        }
    }
    let per_sec = tokens.len() as f64 / started.elapsed().as_secs_f64();
    anyhow::ensure!(failed == 0, "{failed} GET /api/live requests failed");
    Ok(Ceiling {
        per_sec,
        p99_ms: latency.value_at_quantile(0.99) as f64 / 1e3,
    })
}

/// Open loop (wrk2's way): shopper i's buy is due at `start + i / rate`; `conns` kept-alive
/// connections share the schedule (connection c sends shoppers c, c + conns, …), each sending
/// its next buy at its due time or, when the previous answer came late, at once. Latency counts
/// from the due time, so time spent waiting for the server, or for a free connection, is not
/// hidden (no coordinated omission). Returns what they saw together, and how far behind its
/// schedule the latest buy went out.
pub async fn fire_open_loop(
    client: &reqwest::Client,
    base: &str,
    voucher: VoucherId,
    tokens: &Arc<Vec<String>>,
    conns: usize,
    rate: usize,
) -> anyhow::Result<(Fired, std::time::Duration)> {
    let url = Arc::new(format!("{base}/api/vouchers/{voucher}/orders"));
    let start = Instant::now();
    let interval = std::time::Duration::from_secs_f64(1.0 / rate as f64);
    let tasks: Vec<_> = (0..conns)
        .map(|c| {
            let (client, tokens, url) = (client.clone(), tokens.clone(), url.clone());
            tokio::spawn(async move {
                let mut f = Shots::default();
                let mut worst_lag = std::time::Duration::ZERO;
                for i in (c..tokens.len()).step_by(conns) {
                    let due = start + interval.mul_f64(i as f64);
                    tokio::time::sleep_until(due).await;
                    worst_lag = worst_lag.max(Instant::now().saturating_duration_since(due));
                    buy_once(&client, &url, &tokens, i, due, &mut f).await;
                }
                (f, worst_lag)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(conns);
    let mut worst_lag = std::time::Duration::ZERO;
    for t in tasks {
        let (f, lag) = t.await?;
        all.push(f);
        worst_lag = worst_lag.max(lag);
    }
    Ok((Fired::from_shots(all)?, worst_lag))
}

async fn fire(client: &reqwest::Client, url: &str, tokens: &[String], next: &AtomicUsize) -> Shots {
    let mut f = Shots::default();
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= tokens.len() {
            return f;
        }
        buy_once(client, url, tokens, i, Instant::now(), &mut f).await;
    }
}

/// The fields of a buy's answer the rush reads: the order ID of an admission, the code of a
/// refusal (the `message` is skipped unread).
#[derive(serde::Deserialize)]
struct Answer<'a> {
    #[serde(borrow)]
    order_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    error: Option<std::borrow::Cow<'a, str>>,
}

/// Shopper `i` buys once; the latency counts from `since`. The answer is read into borrowed
/// fields and counted without an allocation (an outcome's name is copied the first time only):
/// the load generator shares the server's cores, so what it spends per buy beyond what it spends
/// per `GET /api/live` lowers the very ratio the rush measures.
async fn buy_once(
    client: &reqwest::Client,
    url: &str,
    tokens: &[String],
    i: usize,
    since: Instant,
    f: &mut Shots,
) {
    let Some(token) = tokens.get(i) else {
        return;
    };
    let sent = client
        .post(url)
        .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
        .send()
        .await;
    let (status, body) = match sent {
        Ok(resp) => (resp.status(), resp.bytes().await),
        Err(e) => {
            tracing::warn!(error = %e, "request failed");
            count(f, "transport_error");
            return;
        }
    };
    let done = Instant::now();
    let waited = u64::try_from(done.duration_since(since).as_micros()).unwrap_or(u64::MAX);
    f.latencies_us.push(waited);
    let Ok(body) = body else {
        count(f, "transport_error");
        return;
    };
    let answer = serde_json::from_slice::<Answer<'_>>(&body).ok();
    match answer {
        Some(Answer {
            order_id: Some(id), ..
        }) if status == reqwest::StatusCode::ACCEPTED => {
            f.admitted.push((i, id.into_owned()));
            f.admitted_us.push(waited);
            f.last_admitted = Some((done, Utc::now()));
            count(f, "admitted");
        }
        Some(Answer {
            error: Some(code), ..
        }) => count(f, &code),
        _ => count(f, &format!("http_{}", status.as_u16())),
    }
}

/// One more answer of this outcome.
fn count(f: &mut Shots, outcome: &str) {
    match f.outcomes.get_mut(outcome) {
        Some(n) => *n += 1,
        None => {
            f.outcomes.insert(outcome.to_owned(), 1);
        }
    }
}
