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

/// What one connection saw.
pub struct Fired {
    pub latency: Histogram<u64>,
    pub outcomes: BTreeMap<String, u64>,
    /// (shopper index, order ID) of each admission.
    pub admitted: Vec<(usize, String)>,
    pub last_admitted: Option<(Instant, DateTime<Utc>)>,
}

impl Fired {
    fn new() -> anyhow::Result<Self> {
        Ok(Self {
            latency: report::histogram()?,
            outcomes: BTreeMap::new(),
            admitted: Vec::new(),
            last_admitted: None,
        })
    }

    /// Adds what another connection saw.
    fn merge(&mut self, other: Self) -> anyhow::Result<()> {
        self.latency.add(&other.latency)?;
        for (k, v) in other.outcomes {
            *self.outcomes.entry(k).or_default() += v;
        }
        self.admitted.extend(other.admitted);
        self.last_admitted = match (self.last_admitted, other.last_admitted) {
            (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
        Ok(())
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
    let mut all = Fired::new()?;
    for t in tasks {
        all.merge(t.await??)?;
    }
    Ok(all)
}

/// The same shape against the server's trivial endpoint (`GET /api/live`): one request per
/// shopper with their cookie, `conns` connections each taking the next; requests per second.
/// What this stack costs per request on this machine: the ceiling a buy is measured against.
pub async fn live_ceiling(
    client: &reqwest::Client,
    base: &str,
    tokens: &Arc<Vec<String>>,
    conns: usize,
) -> anyhow::Result<f64> {
    let next = Arc::new(AtomicUsize::new(0));
    let url = Arc::new(format!("{base}/api/live"));
    let started = Instant::now();
    let tasks: Vec<_> = (0..conns)
        .map(|_| {
            let (client, tokens, next, url) =
                (client.clone(), tokens.clone(), next.clone(), url.clone());
            tokio::spawn(async move {
                let mut failed = 0_usize;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(token) = tokens.get(i) else {
                        return failed;
                    };
                    let answer = client
                        .get(url.as_str())
                        .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
                        .send()
                        .await;
                    let ok = match answer {
                        Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                        Err(_) => false,
                    };
                    failed += usize::from(!ok);
                }
            })
        })
        .collect();
    let mut failed = 0;
    for t in tasks {
        failed += t.await?;
    }
    let rate = tokens.len() as f64 / started.elapsed().as_secs_f64();
    anyhow::ensure!(failed == 0, "{failed} GET /api/live requests failed");
    Ok(rate)
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
                let mut f = Fired::new()?;
                let mut worst_lag = std::time::Duration::ZERO;
                for i in (c..tokens.len()).step_by(conns) {
                    let due = start + interval.mul_f64(i as f64);
                    tokio::time::sleep_until(due).await;
                    worst_lag = worst_lag.max(Instant::now().saturating_duration_since(due));
                    buy_once(&client, &url, &tokens, i, due, &mut f).await;
                }
                anyhow::Ok((f, worst_lag))
            })
        })
        .collect();
    let mut all = Fired::new()?;
    let mut worst_lag = std::time::Duration::ZERO;
    for t in tasks {
        let (f, lag) = t.await??;
        all.merge(f)?;
        worst_lag = worst_lag.max(lag);
    }
    Ok((all, worst_lag))
}

async fn fire(
    client: &reqwest::Client,
    url: &str,
    tokens: &[String],
    next: &AtomicUsize,
) -> anyhow::Result<Fired> {
    let mut f = Fired::new()?;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= tokens.len() {
            return Ok(f);
        }
        buy_once(client, url, tokens, i, Instant::now(), &mut f).await;
    }
}

/// Shopper `i` buys once; the latency counts from `since`.
async fn buy_once(
    client: &reqwest::Client,
    url: &str,
    tokens: &[String],
    i: usize,
    since: Instant,
    f: &mut Fired,
) {
    let Some(token) = tokens.get(i) else {
        return;
    };
    {
        let started = since;
        let sent = client
            .post(url)
            .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
            .send()
            .await;
        let outcome = match sent {
            Ok(resp) => {
                let status = resp.status();
                let body: serde_json::Value = resp.json().await.unwrap_or_default();
                let done = Instant::now();
                f.latency.saturating_record(
                    u64::try_from(done.duration_since(started).as_micros()).unwrap_or(u64::MAX),
                );
                if status == reqwest::StatusCode::ACCEPTED {
                    if let Some(id) = body.get("order_id").and_then(|v| v.as_str()) {
                        f.admitted.push((i, id.to_owned()));
                        f.last_admitted = Some((done, Utc::now()));
                    }
                    "admitted".to_owned()
                } else {
                    body.get("error")
                        .and_then(|v| v.as_str())
                        .map_or_else(|| format!("http_{}", status.as_u16()), str::to_owned)
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "request failed");
                "transport_error".to_owned()
            }
        };
        *f.outcomes.entry(outcome).or_default() += 1;
    }
}
