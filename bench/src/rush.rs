//! Sale day over real HTTP: N shoppers with sessions fire one buy each from C connections at the
//! moment the sale opens, then poll every returned order ID until it is final. The release
//! server runs as a child process (its peak RSS is read from /proc), on a scratch database and
//! key prefix. The invariants I1–I4 are checked against PostgreSQL and Redis afterwards, and the
//! ceilings (the same Lua script under `redis-benchmark`, a raw batched insert) are measured in
//! the same run, so the ratios compare like with like on a noisy machine.

use std::{
    collections::{BTreeMap, HashSet},
    path::PathBuf,
    process::{Child, Command, Stdio},
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use anyhow::{bail, Context};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use hdrhistogram::Histogram;
use seckill::{domain::VoucherId, scripts};
use tokio::time::Instant;

use crate::{
    report::{self, Report},
    scratch::Scratch,
    Options,
};

struct Scenario {
    shoppers: usize,
    stock: usize,
    conns: usize,
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
        }
    }
}

/// What one connection saw.
struct Fired {
    latency: Histogram<u64>,
    outcomes: BTreeMap<String, u64>,
    /// (shopper index, order ID) of each admission.
    admitted: Vec<(usize, String)>,
    last_admitted: Option<(Instant, DateTime<Utc>)>,
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

async fn rush(options: &Options, sc: &Scenario, scratch: &Scratch) -> anyhow::Result<()> {
    let mut server = Server::start(&scratch.env).await?;
    let base = server.base.clone();
    let users = scratch.users(sc.shoppers).await?;
    let tokens = Arc::new(scratch.sessions(&users).await?);
    // The sale opens shortly after set-up; the shoppers are already waiting.
    let voucher = scratch
        .voucher(sc.stock, chrono::Duration::milliseconds(1_500))
        .await?;
    let begins = seckill::store::vouchers::get(&scratch.core.db, voucher)
        .await?
        .context("voucher")?
        .window
        .begins_at();

    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(sc.conns)
        .tcp_nodelay(true)
        .timeout(Duration::from_secs(30))
        .build()?;
    let profiler = if options.profile {
        Some(Profiler::start(server.pid())?)
    } else {
        None
    };
    // Warm the connections (not measured): one request each, as browsers would have loaded the
    // page, so the rush measures buying, not TCP handshakes.
    futures::stream::iter(0..sc.conns)
        .map(|_| client.get(format!("{base}/api/health")).send())
        .buffer_unordered(sc.conns)
        .for_each(|_| async {})
        .await;

    let wait = (begins - Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(wait).await;
    let fire_start = Instant::now();
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::with_capacity(sc.conns);
    for _ in 0..sc.conns {
        let (client, tokens, next) = (client.clone(), tokens.clone(), next.clone());
        let url = format!("{base}/api/vouchers/{voucher}/orders");
        tasks.push(tokio::spawn(async move {
            fire(&client, &url, &tokens, &next).await
        }));
    }
    let mut latency = report::histogram()?;
    let mut outcomes = BTreeMap::<String, u64>::new();
    let mut admitted = Vec::new();
    let mut last_admitted: Option<(Instant, DateTime<Utc>)> = None;
    for t in tasks {
        let f = t.await??;
        latency.add(&f.latency)?;
        for (k, v) in f.outcomes {
            *outcomes.entry(k).or_default() += v;
        }
        admitted.extend(f.admitted);
        last_admitted = match (last_admitted, f.last_admitted) {
            (Some(a), Some(b)) => Some(if b.0 > a.0 { b } else { a }),
            (a, b) => a.or(b),
        };
    }
    let fire_elapsed = fire_start.elapsed();
    let buys_per_sec = sc.shoppers as f64 / fire_elapsed.as_secs_f64();
    let sold_out_after = last_admitted.map(|(at, _)| at.duration_since(fire_start));

    // Every returned ID until it is final.
    let poll_start = Instant::now();
    let statuses = poll_all(&client, &base, &tokens, &admitted, sc.conns).await?;
    let poll_elapsed = poll_start.elapsed();
    let profile = match profiler {
        Some(p) => p.stop()?,
        None => Vec::new(),
    };
    let peak_rss_mb = server.peak_rss_mb();
    server.stop();

    // Drain, from PostgreSQL's own timestamps.
    let (written, first_written, last_written): (
        i64,
        Option<DateTime<Utc>>,
        Option<DateTime<Utc>>,
    ) = sqlx::query_as(
        "SELECT count(*), min(written_at), max(written_at) FROM orders WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .fetch_one(&scratch.core.db)
    .await?;
    let drain_secs = match (first_written, last_written) {
        (Some(a), Some(b)) => (b - a).num_microseconds().unwrap_or(0) as f64 / 1e6,
        _ => 0.0,
    };
    let drain_rate = if drain_secs > 0.0 {
        written as f64 / drain_secs
    } else {
        f64::NAN
    };
    let written_after_last_admission = match (last_admitted, last_written) {
        (Some((_, admitted_at)), Some(w)) => {
            Some((w - admitted_at).num_microseconds().unwrap_or(0) as f64 / 1e6)
        }
        _ => None,
    };

    let violations = check_invariants(scratch, voucher, sc, &admitted, &statuses).await?;

    // The ceilings, on the same machine, right after.
    let evalsha = evalsha_ceiling(scratch, sc).await?;
    let insert = insert_ceiling(scratch, sc.stock.max(5_000)).await?;

    let ratio_buys = buys_per_sec / evalsha;
    let ratio_drain = drain_rate / insert;
    let p99_ms = report::ms(latency.value_at_quantile(0.99));
    let mut rows = vec![
        (
            "scenario".into(),
            format!(
                "{} shoppers, stock {}, {} connections",
                sc.shoppers, sc.stock, sc.conns
            ),
        ),
        (
            "buys per second (HTTP, all outcomes)".into(),
            format!("{buys_per_sec:.0}"),
        ),
        (
            "ceiling: same script by EVALSHA (redis-benchmark)".into(),
            format!("{evalsha:.0}/s → ratio {ratio_buys:.2}"),
        ),
        ("buy latency".into(), report::latency_row(&latency)),
        (
            "outcomes".into(),
            outcomes
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", "),
        ),
        (
            "sale start → sold out".into(),
            sold_out_after.map_or("not sold out".into(), |d| {
                format!("{:.3} s", d.as_secs_f64())
            }),
        ),
        (
            "last admission → last order written".into(),
            written_after_last_admission.map_or("n/a".into(), |s| format!("{s:.3} s")),
        ),
        (
            "drain into PostgreSQL".into(),
            format!("{drain_rate:.0} orders/s ({written} orders in {drain_secs:.3} s)"),
        ),
        (
            "ceiling: raw batched insert".into(),
            format!("{insert:.0} rows/s → ratio {ratio_drain:.2}"),
        ),
        (
            "polling every ID to final".into(),
            format!("{:.3} s", poll_elapsed.as_secs_f64()),
        ),
        ("server peak RSS".into(), format!("{peak_rss_mb:.1} MB")),
        (
            "invariants I1–I4".into(),
            if violations.is_empty() {
                "hold".into()
            } else {
                format!("BROKEN: {}", violations.join("; "))
            },
        ),
    ];
    let targets = [
        ("buys/s ≥ 0.5× EVALSHA ceiling", ratio_buys >= 0.5),
        ("p99 ≤ 10 ms", p99_ms <= 10.0),
        ("drain ≥ 20,000 orders/s", drain_rate >= 20_000.0),
        (
            "written within 2 s of the last admission",
            written_after_last_admission.is_some_and(|s| s <= 2.0),
        ),
        ("server RSS ≤ 150 MB", peak_rss_mb <= 150.0),
    ];
    rows.push((
        "targets".into(),
        targets
            .iter()
            .map(|(t, ok)| format!("{t}: {}", if *ok { "met" } else { "missed" }))
            .collect::<Vec<_>>()
            .join("; "),
    ));
    let json = serde_json::json!({
        "scenario": {"shoppers": sc.shoppers, "stock": sc.stock, "conns": sc.conns},
        "buys_per_sec": buys_per_sec,
        "latency": report::latency_json(&latency),
        "outcomes": outcomes,
        "sold_out_after_s": sold_out_after.map(|d| d.as_secs_f64()),
        "written_after_last_admission_s": written_after_last_admission,
        "drain_orders_per_sec": drain_rate,
        "written": written,
        "poll_s": poll_elapsed.as_secs_f64(),
        "server_peak_rss_mb": peak_rss_mb,
        "ceiling_evalsha_per_sec": evalsha,
        "ceiling_insert_rows_per_sec": insert,
        "ratio_buys_to_evalsha": ratio_buys,
        "ratio_drain_to_insert": ratio_drain,
        "invariant_violations": violations,
        "targets": targets.iter().map(|(t, ok)| (t.to_string(), *ok)).collect::<BTreeMap<_, _>>(),
    });
    Report {
        name: if options.quick { "rush-quick" } else { "rush" },
        title: format!("Rush{}", if options.quick { " (quick)" } else { "" }),
        rows,
        notes: if profile.is_empty() {
            Vec::new()
        } else {
            vec![format!(
                "Top of `perf report --no-children --sort dso,symbol` for the server during the rush:\n\n```text\n{}\n```",
                profile.join("\n")
            )]
        },
        json,
    }
    .publish(options)?;
    if !violations.is_empty() {
        bail!("invariants broken: {}", violations.join("; "));
    }
    Ok(())
}

async fn fire(
    client: &reqwest::Client,
    url: &str,
    tokens: &[String],
    next: &AtomicUsize,
) -> anyhow::Result<Fired> {
    let mut f = Fired {
        latency: report::histogram()?,
        outcomes: BTreeMap::new(),
        admitted: Vec::new(),
        last_admitted: None,
    };
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

/// Polls every admitted ID until `created` or `failed` (60 s at most); returns the statuses.
async fn poll_all(
    client: &reqwest::Client,
    base: &str,
    tokens: &[String],
    admitted: &[(usize, String)],
    conns: usize,
) -> anyhow::Result<BTreeMap<String, String>> {
    let mut pending: Vec<(usize, String)> = admitted.to_vec();
    let mut finals = BTreeMap::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !pending.is_empty() {
        let replies: Vec<((usize, String), Option<String>)> = futures::stream::iter(pending)
            .map(|(i, id)| async move {
                let status = client
                    .get(format!("{base}/api/orders/{id}"))
                    .header(
                        reqwest::header::COOKIE,
                        format!("seckill_session={}", tokens[i]),
                    )
                    .send()
                    .await
                    .ok()
                    .filter(|r| r.status().is_success());
                let status =
                    match status {
                        Some(r) => r.json::<serde_json::Value>().await.ok().and_then(|b| {
                            b.get("status").and_then(|s| s.as_str()).map(str::to_owned)
                        }),
                        None => None,
                    };
                ((i, id), status)
            })
            .buffer_unordered(conns)
            .collect()
            .await;
        pending = Vec::new();
        for ((i, id), status) in replies {
            match status.as_deref() {
                Some("created" | "failed") => {
                    finals.insert(id, status.unwrap_or_default());
                }
                _ => pending.push((i, id)),
            }
        }
        if pending.is_empty() {
            break;
        }
        if Instant::now() >= deadline {
            bail!("{} orders still not final after 60 s", pending.len());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(finals)
}

/// I1–I4 against PostgreSQL and Redis; returns what is broken.
async fn check_invariants(
    scratch: &Scratch,
    voucher: VoucherId,
    sc: &Scenario,
    admitted: &[(usize, String)],
    statuses: &BTreeMap<String, String>,
) -> anyhow::Result<Vec<String>> {
    let core = &scratch.core;
    let mut broken = Vec::new();
    let k = core.keys.voucher(voucher);
    let mut redis = core.redis.clone();
    let (redis_stock, queued, buyers): (Option<i64>, i64, i64) = redis::pipe()
        .get(&k.stock)
        .hlen(&k.queued)
        .scard(&k.buyers)
        .query_async(&mut redis)
        .await?;
    let (written, distinct_users, db_stock): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM orders WHERE voucher_id = $1),
                (SELECT count(DISTINCT user_id) FROM orders WHERE voucher_id = $1),
                (SELECT stock FROM vouchers WHERE id = $1)",
    )
    .bind(voucher.get())
    .fetch_one(&core.db)
    .await?;
    let initial = sc.stock as i64;
    let redis_stock = redis_stock.unwrap_or(-1);
    // I1: never oversold, and conservation at quiescence.
    if written > initial {
        broken.push(format!("I1: {written} written > stock {initial}"));
    }
    if redis_stock + queued + written != initial {
        broken.push(format!(
            "I1: redis stock {redis_stock} + queued {queued} + written {written} != {initial}"
        ));
    }
    if db_stock != initial - written {
        broken.push(format!(
            "I1/I4: PostgreSQL stock {db_stock} != {initial} - {written}"
        ));
    }
    let expected = sc.stock.min(sc.shoppers) as i64;
    if admitted.len() as i64 != expected {
        broken.push(format!(
            "I1: {} admitted, expected {expected}",
            admitted.len()
        ));
    }
    // I2: one per shopper.
    if distinct_users != written {
        broken.push(format!(
            "I2: {written} orders for {distinct_users} shoppers"
        ));
    }
    let shoppers: HashSet<usize> = admitted.iter().map(|(i, _)| *i).collect();
    if shoppers.len() != admitted.len() {
        broken.push("I2: a shopper was admitted twice".into());
    }
    if buyers != written {
        broken.push(format!("I2: Redis buyers {buyers} != written {written}"));
    }
    // I3: every returned ID is final.
    if statuses.len() != admitted.len() {
        broken.push(format!(
            "I3: {} of {} IDs final",
            statuses.len(),
            admitted.len()
        ));
    }
    // I4: exactly the admitted IDs were written, each once.
    let rows: Vec<i64> = sqlx::query_scalar("SELECT id FROM orders WHERE voucher_id = $1")
        .bind(voucher.get())
        .fetch_all(&core.db)
        .await?;
    let rows: HashSet<String> = rows.into_iter().map(|id| id.to_string()).collect();
    let created: HashSet<String> = statuses
        .iter()
        .filter(|(_, s)| *s == "created")
        .map(|(id, _)| id.clone())
        .collect();
    if rows != created {
        broken.push(format!(
            "I4: {} rows vs {} IDs reported created",
            rows.len(),
            created.len()
        ));
    }
    Ok(broken)
}

/// The admission script alone, by EVALSHA from `redis-benchmark`, with the same connections,
/// shoppers (random user IDs) and stock: requests per second.
async fn evalsha_ceiling(scratch: &Scratch, sc: &Scenario) -> anyhow::Result<f64> {
    let core = &scratch.core;
    let scratch_voucher = VoucherId::try_from(2_000_000_000)?;
    let k = scratch
        .redis_only_sale(scratch_voucher.get(), sc.stock)
        .await?;
    let sha: String = redis::cmd("SCRIPT")
        .arg("LOAD")
        .arg(scripts::ADMIT_SOURCE.as_str())
        .query_async(&mut core.redis.clone())
        .await?;
    let url = reqwest::Url::parse(&scratch.env[1].1)?;
    let out = Command::new("redis-benchmark")
        .args(["-h", url.host_str().unwrap_or("127.0.0.1")])
        .args(["-p", &url.port().unwrap_or(6379).to_string()])
        .args(["-c", &sc.conns.to_string(), "-n", &sc.shoppers.to_string()])
        .args(["-r", "100000000", "-q", "EVALSHA", &sha, "6"])
        .args([&k.sale, &k.stock, &k.buyers, &k.queued, &k.orders])
        .arg(format!("{}__rand_int__", k.rate))
        .arg("__rand_int__")
        .arg(core.keys.order_counter_prefix())
        .arg(scratch_voucher.get().to_string())
        .arg(core.config.limits.buys_per_second.to_string())
        .output()
        .context("redis-benchmark (installed with redis-server by scripts/setup.sh)")?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "EVALSHA ...: 41666.67 requests per second, p50=..." (the last \r-separated update).
    let rps = text
        .rsplit(['\r', '\n'])
        .find_map(|line| {
            let (_, rest) = line.rsplit_once(": ")?;
            rest.split_whitespace().next()?.parse::<f64>().ok()
        })
        .with_context(|| format!("unexpected redis-benchmark output: {text}"))?;
    let admitted: i64 = redis::cmd("HLEN")
        .arg(&k.queued)
        .query_async(&mut core.redis.clone())
        .await?;
    if admitted != sc.stock.min(sc.shoppers) as i64 && sc.shoppers >= sc.stock * 2 {
        tracing::warn!(admitted, "the ceiling run admitted an unexpected count");
    }
    Ok(rps)
}

/// A raw batched insert of `n` order rows into a scratch copy of the orders table, in
/// transactions of the worker's batch size: rows per second.
async fn insert_ceiling(scratch: &Scratch, n: usize) -> anyhow::Result<f64> {
    let db = &scratch.core.db;
    sqlx::raw_sql("CREATE TABLE scratch_orders (LIKE orders INCLUDING ALL)")
        .execute(db)
        .await?;
    let batch = scratch.core.config.worker.batch_size;
    let ids: Vec<i64> = (1..=n as i64).collect();
    let started = Instant::now();
    for chunk in ids.chunks(batch) {
        let mut tx = db.begin().await?;
        sqlx::query(
            "INSERT INTO scratch_orders (id, voucher_id, user_id, admitted_at)
             SELECT id, 1, id, now() FROM UNNEST($1::bigint[]) AS t(id)",
        )
        .bind(chunk)
        .execute(&mut *tx)
        .await?;
        tx.commit().await?;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    sqlx::raw_sql("DROP TABLE scratch_orders")
        .execute(db)
        .await?;
    Ok(rate)
}

/// The release server as a child process.
struct Server {
    child: Child,
    base: String,
}

impl Server {
    async fn start(env: &[(String, String)]) -> anyhow::Result<Self> {
        let bin = std::env::var("SECKILL_SERVER_BIN").map_or_else(
            |_| {
                let target = std::env::var("CARGO_TARGET_DIR")
                    .map_or_else(|_| report::root().join("target"), PathBuf::from);
                target.join("release").join("server")
            },
            PathBuf::from,
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let addr = format!("127.0.0.1:{port}");
        let log = std::fs::File::create(report::root().join("target").join("bench-server.log"))
            .context("server log")?;
        let child = Command::new(&bin)
            .arg("serve")
            .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("LEPTOS_SITE_ADDR", &addr)
            .env("SECKILL_INSTANCE_ID", format!("bench-{port}"))
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| {
                format!(
                    "starting {} (build it with scripts/build.sh --release)",
                    bin.display()
                )
            })?;
        let server = Self {
            child,
            base: format!("http://{addr}"),
        };
        let client = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(r) = client
                .get(format!("{}/api/health", server.base))
                .send()
                .await
            {
                if r.status().is_success() {
                    return Ok(server);
                }
            }
            if Instant::now() >= deadline {
                bail!("the server did not become healthy; see target/bench-server.log");
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Peak resident set (VmHWM) so far, in MB.
    fn peak_rss_mb(&self) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.pid()))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|kb| kb.parse::<f64>().ok())
            })
            .map_or(f64::NAN, |kb| kb / 1024.0)
    }

    /// SIGTERM (graceful), then wait.
    fn stop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `perf record` on the server while the rush runs; the top symbols go to target/bench.
struct Profiler {
    child: Child,
    data: PathBuf,
}

impl Profiler {
    fn start(pid: u32) -> anyhow::Result<Self> {
        let dir = report::root().join("target").join("bench");
        std::fs::create_dir_all(&dir)?;
        let data = dir.join("perf.data");
        let child = Command::new("perf")
            .args(["record", "-F", "499", "-g", "-p", &pid.to_string(), "-o"])
            .arg(&data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("perf (apt install linux-perf)")?;
        Ok(Self { child, data })
    }

    fn stop(mut self) -> anyhow::Result<Vec<String>> {
        let _ = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
        let out = Command::new("perf")
            .args([
                "report",
                "--stdio",
                "--no-children",
                "--sort",
                "dso,symbol",
                "-g",
                "none",
                "-i",
            ])
            .arg(&self.data)
            .output()?;
        let text = String::from_utf8_lossy(&out.stdout);
        let top: Vec<String> = text
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .take(25)
            // Drop the empty call-graph columns and the padding.
            .map(|l| l.trim_end_matches([' ', '-']).to_owned())
            .collect();
        Ok(top)
    }
}
