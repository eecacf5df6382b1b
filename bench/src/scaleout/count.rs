//! A rush against the fleet and what it is counted by: the orders each instance wrote, the
//! requests HAProxy sent each, the invariants at the end.

use std::{collections::BTreeMap, sync::Arc, time::Duration};

use anyhow::Context;
use hdrhistogram::Histogram;
use seckill::domain::VoucherId;
use tokio::time::Instant;

use super::Haproxy;
use crate::{
    report,
    rush::{fire, measure, process::Server, Scenario},
    scratch::Scratch,
};

/// The rush on every sale at once.
pub(super) struct Rush<'a> {
    pub(super) client: &'a reqwest::Client,
    pub(super) base: &'a str,
    pub(super) sales: &'a [VoucherId],
    pub(super) per_sale: &'a [Arc<Vec<String>>],
    pub(super) conns_each: usize,
}

impl Rush<'_> {
    /// Fires every sale's shoppers; in the drill, `kill -9` of `victim` `kill_after` into it.
    /// What each sale got, when the kill happened, and how long the firing took.
    pub(super) async fn run(
        &self,
        victim: Option<&mut Server>,
        kill_after: Option<Duration>,
    ) -> anyhow::Result<(Vec<fire::Fired>, Option<Instant>, f64)> {
        let started = Instant::now();
        let fires = futures::future::try_join_all(
            self.sales
                .iter()
                .zip(self.per_sale)
                .map(|(v, t)| fire::fire_all(self.client, self.base, *v, t, self.conns_each)),
        );
        let (fired, killed_at) = match kill_after {
            Some(after) => {
                let victim = victim.context("an instance to kill")?;
                let kill = async {
                    tokio::time::sleep(after).await;
                    victim.kill9();
                    Instant::now()
                };
                let (fired, at) = tokio::join!(fires, kill);
                (fired?, Some(at))
            }
            None => (fires.await?, None),
        };
        Ok((fired, killed_at, started.elapsed().as_secs_f64()))
    }
}

/// Orders each instance wrote (its metrics), or "killed".
pub(super) async fn written_by(
    client: &reqwest::Client,
    servers: &[Server],
) -> anyhow::Result<Vec<(String, String)>> {
    let mut written_by = Vec::new();
    for s in servers {
        let metrics = client
            .get(format!("{}/metrics", s.metrics))
            .send()
            .await
            .ok()
            .filter(|r| r.status().is_success());
        let written = match metrics {
            Some(r) => r
                .text()
                .await?
                .lines()
                .find_map(|l| l.strip_prefix("seckill_orders_written_total "))
                .map_or_else(|| "0".to_owned(), |n| n.trim().to_owned()),
            None => "killed".to_owned(),
        };
        written_by.push((format!("instance :{}", s.port()), written));
    }
    Ok(written_by)
}

/// Requests HAProxy sent to each instance so far (none without HAProxy).
pub(super) async fn requests(lb: Option<&Haproxy>) -> anyhow::Result<BTreeMap<String, u64>> {
    match lb {
        Some(l) => l.requests().await,
        None => Ok(BTreeMap::new()),
    }
}

/// Each counter's growth from `before` to `after`.
pub(super) fn difference(
    before: &BTreeMap<String, u64>,
    after: BTreeMap<String, u64>,
) -> BTreeMap<String, u64> {
    after
        .into_iter()
        .map(|(k, n)| {
            let grew = n - before.get(&k).copied().unwrap_or(0);
            (k, grew)
        })
        .collect()
}

/// The round's answers over every sale, and the invariants checked on each.
pub(super) struct Tally {
    pub(super) latency: Histogram<u64>,
    pub(super) outcomes: BTreeMap<String, u64>,
    pub(super) admitted: usize,
    pub(super) violations: Vec<String>,
}

pub(super) async fn tally(
    scratch: &Scratch,
    sales: &[VoucherId],
    fired: &[fire::Fired],
    per_sale: &[Arc<Vec<String>>],
    statuses: &[BTreeMap<String, String>],
    sc: Scenario,
) -> anyhow::Result<Tally> {
    let mut t = Tally {
        latency: report::histogram()?,
        outcomes: BTreeMap::new(),
        admitted: 0,
        violations: Vec::new(),
    };
    for (((v, f), shoppers), st) in sales.iter().zip(fired).zip(per_sale).zip(statuses) {
        t.latency.add(&f.latency)?;
        for (k, n) in &f.outcomes {
            *t.outcomes.entry(k.clone()).or_default() += n;
        }
        t.admitted += f.admitted.len();
        let sc = Scenario {
            shoppers: shoppers.len(),
            ..sc
        };
        for broken in measure::check_invariants(scratch, *v, &sc, &f.admitted, st).await? {
            t.violations.push(format!("sale {v}: {broken}"));
        }
    }
    Ok(t)
}

pub(super) fn list<T: std::fmt::Display>(m: impl IntoIterator<Item = (String, T)>) -> String {
    m.into_iter()
        .map(|(k, v)| format!("{k}: {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}
