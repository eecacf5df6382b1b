//! Every sale ever run, found fast (issue #55): a shop's history of 100,000 sales (10,000 with
//! `--quick`), then the admin's console and `GET /api/admin/vouchers` on it, one request at a
//! time (an admin, not a crowd): the newest page, every page walked by cursor to the oldest, the
//! oldest page, and searches by title (a rare word, a common Chinese one, one matching nothing).
//! Each answer's latency, p50 / p99 / max.

use std::time::Duration;

use anyhow::Context;
use hdrhistogram::Histogram;
use reqwest::header;
use serde_json::Value;
use tokio::time::Instant;

use crate::{
    report::{self, Report},
    rush::process::Server,
    scratch::Scratch,
    Options,
};

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("sales").await?;
    let result = bench(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

/// Times each target is asked for.
const REPEATS: usize = 50;

async fn bench(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let sales: i64 = if options.quick { 10_000 } else { 100_000 };
    let loaded = Instant::now();
    history(scratch, sales).await?;
    let load_secs = loaded.elapsed().as_secs_f64();
    let session = crate::pages::admin_session(scratch).await?;
    let mut server = Server::start(&scratch.env).await?;
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()?;
    let ask = Asker {
        client: &client,
        base: &server.base,
        cookie: format!("seckill_session={session}"),
    };
    let result = measure(&ask, sales).await;
    server.stop();
    let measured = result?;
    report(options, sales, load_secs, &measured).publish(options)
}

/// `n` sales a minute apart, the newest a day ago, titled as a shop's are (a third in Chinese),
/// and one "Jade dragon oolong" in the middle; then the planner's statistics.
async fn history(scratch: &Scratch, n: i64) -> anyhow::Result<()> {
    sqlx::query(
        "INSERT INTO vouchers (title, price_cents, initial_stock, stock, begins_at, ends_at)
         SELECT CASE WHEN k = $1 / 2 THEN 'Jade dragon oolong'
                     ELSE (ARRAY['Green tea ', '茉莉花茶 ', 'Coffee beans ', '咖啡豆 ', 'Mooncakes ',
                                 '月饼礼盒 '])[k % 6 + 1] || k END,
                990, 100, 100, now() - interval '1 day' - k * interval '1 minute',
                now() - interval '1 day' - k * interval '1 minute' + interval '10 minutes'
         FROM generate_series(1, $1) k",
    )
    .bind(n)
    .execute(&scratch.core.db)
    .await?;
    sqlx::query("ANALYZE vouchers")
        .execute(&scratch.core.db)
        .await?;
    Ok(())
}

struct Asker<'a> {
    client: &'a reqwest::Client,
    base: &'a str,
    cookie: String,
}

impl Asker<'_> {
    /// `path` once: its latency (µs) and its body.
    async fn get(&self, path: &str) -> anyhow::Result<(u64, String)> {
        let sent = Instant::now();
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .header(header::COOKIE, &self.cookie)
            .send()
            .await?;
        let status = r.status();
        let body = r.text().await?;
        let took = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
        anyhow::ensure!(status.is_success(), "{path}: {status}: {body}");
        Ok((took, body))
    }

    /// `path` [`REPEATS`] times.
    async fn repeat(&self, path: &str) -> anyhow::Result<Histogram<u64>> {
        let mut h = report::histogram()?;
        for _ in 0..REPEATS {
            h.record(self.get(path).await?.0)?;
        }
        Ok(h)
    }
}

/// One measured target: what, how many it found, its latencies.
struct Measured {
    label: String,
    found: String,
    latency: Histogram<u64>,
}

async fn measure(ask: &Asker<'_>, sales: i64) -> anyhow::Result<Vec<Measured>> {
    let mut out = Vec::new();
    // Every page of the history by cursor, as the console pages it (25), newest to oldest.
    let mut walk = report::histogram()?;
    let (mut cursor, mut seen) = (String::new(), 0_i64);
    loop {
        let (took, body) = ask
            .get(&format!("/api/admin/vouchers?cursor={cursor}"))
            .await?;
        walk.record(took)?;
        let page: Value = serde_json::from_str(&body)?;
        seen += i64::try_from(page["vouchers"].as_array().context("vouchers")?.len())?;
        match page["next"].as_str() {
            Some(next) => cursor = next.to_owned(),
            None => break,
        }
    }
    anyhow::ensure!(seen == sales, "the walk saw {seen} of {sales} sales");
    // The cursor that read the last page.
    let oldest = cursor;
    out.push(Measured {
        label: "REST, every page walked by cursor (25 a page)".into(),
        found: format!("{seen} sales in {} pages", walk.len()),
        latency: walk,
    });
    let targets = [
        ("console, the newest page (/admin)", "/admin".to_owned()),
        (
            "console, the oldest page",
            format!("/admin?cursor={oldest}"),
        ),
        ("REST, the newest page", "/api/admin/vouchers".to_owned()),
        (
            "REST, the oldest page",
            format!("/api/admin/vouchers?cursor={oldest}"),
        ),
        (
            "REST, search a rare word (oolong)",
            "/api/admin/vouchers?q=oolong".to_owned(),
        ),
        (
            "REST, search a common Chinese word (茉莉)",
            "/api/admin/vouchers?q=%E8%8C%89%E8%8E%89".to_owned(),
        ),
        (
            "REST, search a word nothing has (zzzz)",
            "/api/admin/vouchers?q=zzzz".to_owned(),
        ),
        ("console, search a rare word", "/admin?q=oolong".to_owned()),
    ];
    for (label, path) in targets {
        let latency = ask.repeat(&path).await?;
        let (_, body) = ask.get(&path).await?;
        let found = match serde_json::from_str::<Value>(&body) {
            Ok(v) => format!(
                "{} on the page{}",
                v["vouchers"].as_array().map_or(0, Vec::len),
                if v["next"].is_null() {
                    ""
                } else {
                    ", more after"
                }
            ),
            Err(_) => format!(
                "{} rows",
                body.matches("data-testid=\"console-row\"").count()
            ),
        };
        out.push(Measured {
            label: label.to_owned(),
            found,
            latency,
        });
    }
    Ok(out)
}

fn report(options: &Options, sales: i64, load_secs: f64, measured: &[Measured]) -> Report {
    let mut rows = vec![(
        "history".to_owned(),
        format!(
            "{} sales (loaded in {load_secs:.1} s), one admin asking one request at a time, each target {REPEATS} times",
            seckill::domain::grouped(sales)
        ),
    )];
    let mut json = Vec::new();
    for m in measured {
        rows.push((
            m.label.clone(),
            format!("{} · {}", m.found, report::latency_row(&m.latency)),
        ));
        json.push(serde_json::json!({
            "target": m.label,
            "found": m.found,
            "latency": report::latency_json(&m.latency),
        }));
    }
    let worst = measured
        .iter()
        .map(|m| report::ms(m.latency.value_at_quantile(0.99)))
        .fold(0.0, f64::max);
    rows.push((
        "target".into(),
        format!(
            "every page and search answers in milliseconds (p99 ≤ 50 ms): {} (worst p99 {worst:.1} ms)",
            if worst <= 50.0 { "met" } else { "missed" }
        ),
    ));
    Report {
        name: if options.quick {
            "sales-quick"
        } else {
            "sales"
        },
        title: format!(
            "Every sale ever run, found{}",
            if options.quick { " (quick)" } else { "" }
        ),
        rows,
        notes: Vec::new(),
        json: serde_json::json!({ "sales": sales, "repeats": REPEATS, "targets": json }),
    }
}
