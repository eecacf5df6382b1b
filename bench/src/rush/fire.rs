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

async fn fire(
    client: &reqwest::Client,
    url: &str,
    tokens: &[String],
    next: &AtomicUsize,
) -> anyhow::Result<Fired> {
    let mut f = Fired::new()?;
    loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(token) = tokens.get(i) else {
            return Ok(f);
        };
        let started = Instant::now();
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
