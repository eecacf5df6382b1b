//! A rush's figures beside their ceilings and targets, as a BENCHMARKS.md section and JSON.

use std::{collections::BTreeMap, time::Duration};

use hdrhistogram::Histogram;

use super::{
    cpu::CpuPerRequest,
    measure::Drain,
    rounds::{self, Pair},
    Scenario,
};
use crate::{
    report::{self, Report},
    Options,
};

/// What one rush measured.
pub struct Figures<'a> {
    pub sc: &'a Scenario,
    pub buys_per_sec: f64,
    pub latency: Histogram<u64>,
    pub latency_admitted: Histogram<u64>,
    pub outcomes: BTreeMap<String, u64>,
    /// From the sale's opening to the last admission.
    pub sold_out_after: Option<Duration>,
    /// From the last admission to the last row written, in seconds.
    pub written_after_last_admission: Option<f64>,
    pub drain: Drain,
    pub poll_elapsed: Duration,
    pub peak_rss_mb: f64,
    pub violations: Vec<String>,
    /// Ceilings: EVALSHA calls per second, raw inserted rows per second.
    pub evalsha: f64,
    pub insert: f64,
    /// Ceiling: `GET /api/live` per second with the rush's shape (closed loop only).
    pub live: Option<f64>,
    /// The CPU a buy cost, and (closed loop) a `GET /api/live`.
    pub cpu_rush: Option<CpuPerRequest>,
    pub cpu_live: Option<CpuPerRequest>,
    /// The top of `perf report`, when profiled.
    pub profile: Vec<String>,
    /// Open loop: how far behind its schedule the latest buy was sent (the client's own lag).
    pub send_lag: Duration,
    /// Closed loop: every sale's rush beside its own `/api/live`, this one's first.
    pub pairs: Vec<Pair>,
}

impl Figures<'_> {
    /// Prints, records (full runs) and writes the JSON.
    pub fn publish(self, options: &Options) -> anyhow::Result<()> {
        let targets = self.targets();
        let mut rows = self.rows();
        rows.push((
            "targets".into(),
            targets
                .iter()
                .map(|(t, ok)| format!("{t}: {}", if *ok { "met" } else { "missed" }))
                .collect::<Vec<_>>()
                .join("; "),
        ));
        let json = self.json(&targets);
        let f = self;
        Report {
            name: match (options.quick, f.sc.rate.is_some()) {
                (true, _) => "rush-quick",
                (false, false) => "rush",
                (false, true) => "rush-open-loop",
            },
            title: format!(
                "Rush{}{}",
                if f.sc.rate.is_some() { ", open loop" } else { "" },
                if options.quick { " (quick)" } else { "" }
            ),
            rows,
            notes: if f.profile.is_empty() {
                Vec::new()
            } else {
                vec![format!(
                    "Top of `perf report --no-children --sort dso,symbol` for the server during the rush:\n\n```text\n{}\n```",
                    f.profile.join("\n")
                )]
            },
            json,
        }
        .publish(options)
    }

    /// The median of the pairs' buys/s ÷ `/api/live` ratios (closed loop).
    fn median_ratio(&self) -> Option<f64> {
        rounds::median(self.pairs.iter().map(Pair::ratio).collect())
    }

    /// The ratios of the throughputs to their ceilings: buys to EVALSHA, drain to inserts.
    fn ratios(&self) -> (f64, f64) {
        (
            self.buys_per_sec / self.evalsha,
            self.drain.rate / self.insert,
        )
    }

    fn rows(&self) -> Vec<(String, String)> {
        let f = self;
        let (ratio_buys, ratio_drain) = f.ratios();
        vec![
            (
                "scenario".into(),
                match f.sc.rate {
                    Some(rate) => format!(
                        "{} shoppers, stock {}, open loop: {rate} buys/s offered over {} connections (latency from each buy's scheduled time; sends at most {:.1} ms behind schedule)",
                        f.sc.shoppers,
                        f.sc.stock,
                        f.sc.conns,
                        f.send_lag.as_secs_f64() * 1e3
                    ),
                    None => format!(
                        "{} shoppers, stock {}, {} connections",
                        f.sc.shoppers, f.sc.stock, f.sc.conns
                    ),
                },
            ),
            (
                "buys per second (HTTP, all outcomes)".into(),
                format!("{:.0}", f.buys_per_sec),
            ),
            (
                "ceiling: same script by EVALSHA (redis-benchmark)".into(),
                format!("{:.0}/s → ratio {ratio_buys:.2}", f.evalsha),
            ),
            (
                "ceiling: GET /api/live, same connections, one request per shopper with their cookie".into(),
                f.live.map_or("n/a (open loop)".into(), |live| {
                    format!("{live:.0}/s → ratio {:.2}", f.buys_per_sec / live)
                }),
            ),
            (
                "buys/s ÷ GET /api/live, sale by sale (each rush, then its ceiling)".into(),
                match f.median_ratio() {
                    Some(median) => format!(
                        "{} → median {median:.2} over {} sales",
                        f.pairs
                            .iter()
                            .map(|p| format!(
                                "{:.0}/{:.0} = {:.2}",
                                p.buys_per_sec,
                                p.live_per_sec,
                                p.ratio()
                            ))
                            .collect::<Vec<_>>()
                            .join(", "),
                        f.pairs.len()
                    ),
                    None => "n/a (open loop)".into(),
                },
            ),
            (
                "p99, sale by sale: the rush / its GET /api/live (same connections)".into(),
                if f.pairs.is_empty() {
                    "n/a (open loop)".into()
                } else {
                    f.pairs
                        .iter()
                        .map(|p| format!("{:.1} / {:.1} ms", p.p99_ms, p.live_p99_ms))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            ),
            (
                "CPU per request: a buy / a GET /api/live".into(),
                format!(
                    "{} / {}",
                    f.cpu_rush.map_or("n/a".into(), |c| c.to_string()),
                    f.cpu_live.map_or("n/a".into(), |c| c.to_string())
                ),
            ),
            ("buy latency".into(), report::latency_row(&f.latency)),
            (
                "buy latency, admissions only".into(),
                report::latency_row(&f.latency_admitted),
            ),
            (
                "outcomes".into(),
                f.outcomes
                    .iter()
                    .map(|(k, v)| format!("{k} {v}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ),
            (
                "sale start → sold out".into(),
                f.sold_out_after.map_or("not sold out".into(), |d| {
                    format!("{:.3} s", d.as_secs_f64())
                }),
            ),
            (
                "last admission → last order written".into(),
                f.written_after_last_admission
                    .map_or("n/a".into(), |s| format!("{s:.3} s")),
            ),
            (
                "drain into PostgreSQL".into(),
                format!(
                    "{:.0} orders/s ({} orders in {:.3} s)",
                    f.drain.rate, f.drain.written, f.drain.secs
                ),
            ),
            (
                "ceiling: raw batched insert".into(),
                format!("{:.0} rows/s → ratio {ratio_drain:.2}", f.insert),
            ),
            (
                "polling every ID to final".into(),
                format!("{:.3} s", f.poll_elapsed.as_secs_f64()),
            ),
            ("server peak RSS".into(), format!("{:.1} MB", f.peak_rss_mb)),
            (
                "invariants I1–I4".into(),
                if f.violations.is_empty() {
                    "hold".into()
                } else {
                    format!("BROKEN: {}", f.violations.join("; "))
                },
            ),
        ]
    }

    /// Each target, met or not.
    fn targets(&self) -> [(&'static str, bool); 6] {
        let f = self;
        let (ratio_buys, _) = f.ratios();
        let p99_ms = report::ms(f.latency.value_at_quantile(0.99));
        [
            ("buys/s ≥ 1.0× EVALSHA ceiling", ratio_buys >= 1.0),
            (
                "buys/s ≥ 0.8× GET /api/live (closed loop, the median of the sales' ratios)",
                f.median_ratio().is_some_and(|r| r >= 0.8),
            ),
            (
                if f.sc.rate.is_some() {
                    "p99 ≤ 10 ms (open loop)"
                } else {
                    "p99 ≤ 20 ms (closed loop)"
                },
                p99_ms <= if f.sc.rate.is_some() { 10.0 } else { 20.0 },
            ),
            ("drain ≥ 20,000 orders/s", f.drain.rate >= 20_000.0),
            (
                "written within 2 s of the last admission",
                f.written_after_last_admission.is_some_and(|s| s <= 2.0),
            ),
            ("server RSS ≤ 150 MB", f.peak_rss_mb <= 150.0),
        ]
    }

    fn json(&self, targets: &[(&'static str, bool)]) -> serde_json::Value {
        let f = self;
        let (ratio_buys, ratio_drain) = f.ratios();
        serde_json::json!({
            "scenario": {"shoppers": f.sc.shoppers, "stock": f.sc.stock, "conns": f.sc.conns, "open_loop_rate": f.sc.rate},
            "open_loop_send_lag_ms": f.send_lag.as_secs_f64() * 1e3,
            "buys_per_sec": f.buys_per_sec,
            "latency": report::latency_json(&f.latency),
            "latency_admitted": report::latency_json(&f.latency_admitted),
            "outcomes": f.outcomes,
            "sold_out_after_s": f.sold_out_after.map(|d| d.as_secs_f64()),
            "written_after_last_admission_s": f.written_after_last_admission,
            "drain_orders_per_sec": f.drain.rate,
            "written": f.drain.written,
            "poll_s": f.poll_elapsed.as_secs_f64(),
            "server_peak_rss_mb": f.peak_rss_mb,
            "ceiling_evalsha_per_sec": f.evalsha,
            "ceiling_insert_rows_per_sec": f.insert,
            "ratio_buys_to_evalsha": ratio_buys,
            "ceiling_live_per_sec": f.live,
            "ratio_buys_to_live": f.live.map(|live| f.buys_per_sec / live),
            "sales": f.pairs.iter().map(|p| serde_json::json!({"buys_per_sec": p.buys_per_sec, "live_per_sec": p.live_per_sec, "ratio": p.ratio(), "p99_ms": p.p99_ms, "live_p99_ms": p.live_p99_ms})).collect::<Vec<_>>(),
            "ratio_buys_to_live_median": f.median_ratio(),
            "ratio_drain_to_insert": ratio_drain,
            "cpu_us_per_buy": f.cpu_rush.map(|c| serde_json::json!({"server": c.server_us, "generator": c.generator_us, "others": c.others_us, "redis": c.redis_us, "postgres": c.postgres_us})),
            "cpu_us_per_live": f.cpu_live.map(|c| serde_json::json!({"server": c.server_us, "generator": c.generator_us, "others": c.others_us, "redis": c.redis_us, "postgres": c.postgres_us})),
            "invariant_violations": f.violations,
            "targets": targets.iter().map(|(t, ok)| (t.to_string(), *ok)).collect::<BTreeMap<_, _>>(),
        })
    }
}
