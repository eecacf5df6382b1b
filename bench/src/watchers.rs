//! Open sale pages (design.md §8, decision 20): N pages watch one sale on the release server,
//! first by the push stream (`GET /api/vouchers/{id}/events`), then by polling as a page
//! without a stream does (`GET /api/vouchers/{id}/stock` every 2 s each, spread evenly). For each way:
//! the server's CPU (from `/proc/<pid>/stat`, in % of one core) over a window while the sale is
//! quiet, and for push also while its stock changes every period; the server's memory per open
//! page (resident set after opening them, minus before, over N).

use std::{
    sync::{
        atomic::{AtomicU64, AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use anyhow::Context;
use tokio::{task::JoinSet, time::Instant};

use crate::{report::Report, rush::process::Server, scratch::Scratch, Options};

/// How often a page without a stream asks during a sale (`app/src/pages/voucher.rs`).
const POLL_EVERY: Duration = Duration::from_secs(2);
/// The server's push period in this run (its default).
const PUSH_EVERY: Duration = Duration::from_millis(500);

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("watchers").await?;
    let result = bench(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

/// CPU used by `server` over `window`, in % of one core.
async fn cpu_over(server: &Server, window: Duration) -> f64 {
    let before = server.cpu_seconds();
    tokio::time::sleep(window).await;
    (server.cpu_seconds() - before) / window.as_secs_f64() * 100.0
}

async fn bench(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let (pages, window) = if options.quick {
        (300, Duration::from_secs(2))
    } else {
        (10_000, Duration::from_secs(10))
    };
    let voucher = scratch
        .voucher(1_000_000, chrono::Duration::seconds(-60))
        .await?;
    let mut env = scratch.env.clone();
    env.push((
        "SECKILL_MAX_CONNECTIONS".into(),
        (pages * 2 + 100).to_string(),
    ));
    env.push(("SECKILL_PUSH_MS".into(), PUSH_EVERY.as_millis().to_string()));
    // Every page's stream comes from this one machine.
    env.push((
        "SECKILL_STREAMS_PER_CLIENT".into(),
        (pages + 100).to_string(),
    ));
    let server = Server::start(&env).await?;
    let run = Run {
        scratch,
        server,
        voucher,
        pages,
        window,
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle_cpu = cpu_over(&run.server, window).await;
    let rss_before = run.server.rss_mb();
    let push = run.push().await?;
    let poll = run.poll().await;
    let mut server = run.server;
    server.stop();
    let poll = poll?;
    Figures {
        pages,
        window,
        idle_cpu,
        rss_before,
        push,
        poll,
    }
    .report(options)
    .publish(options)
}

/// One sale watched by `pages` pages of the server under test.
struct Run<'a> {
    scratch: &'a Scratch,
    server: Server,
    voucher: seckill::domain::VoucherId,
    pages: usize,
    window: Duration,
}

/// What push cost.
struct Push {
    opened_in: f64,
    rss_push: f64,
    push_quiet_cpu: f64,
    quiet_events: u64,
    push_moving_cpu: f64,
    moving_events: u64,
    watchers_left: u64,
}

/// What polling cost.
struct Poll {
    rss_poll: f64,
    poll_cpu: f64,
    poll_rate: f64,
}

impl Run<'_> {
    /// Every page opens its stream and waits for its first event; the server's CPU while the
    /// sale is quiet, then while its stock moves every push period (each page hears each
    /// change); then every stream closes and no watcher may stay counted.
    async fn push(&self) -> anyhow::Result<Push> {
        let (server, pages, window, voucher) =
            (&self.server, self.pages, self.window, self.voucher);
        let base = server.base.clone();
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(pages)
            .build()?;
        let events = Arc::new(AtomicU64::new(0));
        let open = Arc::new(AtomicUsize::new(0));
        let mut streams = JoinSet::new();
        let url = format!("{base}/api/vouchers/{voucher}/events");
        let opening = Instant::now();
        for i in 0..pages {
            let (client, url, events, open) = (
                client.clone(),
                url.clone(),
                Arc::clone(&events),
                Arc::clone(&open),
            );
            streams.spawn(async move { watch(&client, &url, &events, &open).await });
            if i % 500 == 499 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        while open.load(Ordering::Relaxed) < pages {
            anyhow::ensure!(
                Instant::now() < deadline,
                "only {} of {pages} streams opened",
                open.load(Ordering::Relaxed)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let opened_in = opening.elapsed().as_secs_f64();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let rss_push = server.rss_mb();
        let quiet_before = events.load(Ordering::Relaxed);
        let push_quiet_cpu = cpu_over(server, window).await;
        let quiet_events = events.load(Ordering::Relaxed) - quiet_before;

        // The stock moves every push period: each page hears each change.
        let stock_key = self.scratch.core.keys.voucher(voucher).stock;
        let mover = {
            let mut redis = self.scratch.core.redis.clone();
            tokio::spawn(async move {
                loop {
                    let _: Result<i64, _> = redis::cmd("DECR")
                        .arg(&stock_key)
                        .query_async(&mut redis)
                        .await;
                    tokio::time::sleep(PUSH_EVERY).await;
                }
            })
        };
        tokio::time::sleep(PUSH_EVERY * 2).await;
        let moving_before = events.load(Ordering::Relaxed);
        let push_moving_cpu = cpu_over(server, window).await;
        let moving_events = events.load(Ordering::Relaxed) - moving_before;
        mover.abort();
        streams.shutdown().await;
        let watchers_left = wait_watchers_gone(&client, &server.metrics).await?;
        anyhow::ensure!(
            watchers_left == 0,
            "{watchers_left} watchers still counted after every stream closed"
        );

        Ok(Push {
            opened_in,
            rss_push,
            push_quiet_cpu,
            quiet_events,
            push_moving_cpu,
            moving_events,
            watchers_left,
        })
    }

    /// Every page asks on its own schedule, spread over the period; the server's CPU and the
    /// requests answered.
    async fn poll(&self) -> anyhow::Result<Poll> {
        let (server, pages, window, voucher) =
            (&self.server, self.pages, self.window, self.voucher);
        let base = server.base.clone();
        let asked = Arc::new(AtomicU64::new(0));
        let failed = Arc::new(AtomicU64::new(0));
        let mut pollers = JoinSet::new();
        for i in 0..pages {
            let offset = POLL_EVERY.mul_f64(i as f64 / pages as f64);
            // A client per page: each page keeps its own connection, as each browser does.
            let (client, base, asked, failed) = (
                reqwest::Client::builder()
                    .pool_max_idle_per_host(1)
                    .build()?,
                base.clone(),
                Arc::clone(&asked),
                Arc::clone(&failed),
            );
            pollers.spawn(async move {
                tokio::time::sleep(offset).await;
                let mut ticks = tokio::time::interval(POLL_EVERY);
                loop {
                    ticks.tick().await;
                    let ok = client
                        .get(format!("{base}/api/vouchers/{voucher}/stock"))
                        .send()
                        .await
                        .is_ok_and(|r| r.status().is_success());
                    let counter = if ok { &asked } else { &failed };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        tokio::time::sleep(POLL_EVERY * 2).await;
        let rss_poll = server.rss_mb();
        let asked_before = asked.load(Ordering::Relaxed);
        let poll_cpu = cpu_over(server, window).await;
        let poll_rate =
            (asked.load(Ordering::Relaxed) - asked_before) as f64 / window.as_secs_f64();
        pollers.shutdown().await;
        anyhow::ensure!(
            failed.load(Ordering::Relaxed) == 0,
            "{} polls failed",
            failed.load(Ordering::Relaxed)
        );

        Ok(Poll {
            rss_poll,
            poll_cpu,
            poll_rate,
        })
    }
}

/// The run's figures.
struct Figures {
    pages: usize,
    window: Duration,
    idle_cpu: f64,
    rss_before: f64,
    push: Push,
    poll: Poll,
}

impl Figures {
    fn report(self, options: &Options) -> Report {
        let Self {
            pages,
            window,
            idle_cpu,
            rss_before,
            push,
            poll,
        } = self;
        let Push {
            opened_in,
            rss_push,
            push_quiet_cpu,
            quiet_events,
            push_moving_cpu,
            moving_events,
            watchers_left,
        } = push;
        let Poll {
            rss_poll,
            poll_cpu,
            poll_rate,
        } = poll;
        let per_stream_kb = (rss_push - rss_before) * 1024.0 / pages as f64;
        let per_poller_kb = (rss_poll - rss_before) * 1024.0 / pages as f64;
        let verdict = |ok: bool| if ok { "met" } else { "missed" };
        let targets = format!(
            "push (quiet) ≤ 5 % of one core: {}; ≤ 20 KB per open stream: {}",
            verdict(push_quiet_cpu - idle_cpu <= 5.0),
            verdict(per_stream_kb <= 20.0),
        );
        let window_s = window.as_secs_f64();
        Report {
        name: if options.quick { "watchers-quick" } else { "watchers" },
        title: format!(
            "Open sale pages{}",
            if options.quick { " (quick)" } else { "" }
        ),
        rows: vec![
            (
                "scenario".into(),
                format!("{pages} pages on one sale, windows of {window_s:.0} s; push every {} ms, polls every {} s", PUSH_EVERY.as_millis(), POLL_EVERY.as_secs()),
            ),
            ("server CPU, no page open".into(), format!("{idle_cpu:.1} % of one core")),
            (
                "push, sale quiet".into(),
                format!("{push_quiet_cpu:.1} % of one core ({quiet_events} events; {pages} streams opened in {opened_in:.1} s)"),
            ),
            (
                "push, stock moving every period".into(),
                format!("{push_moving_cpu:.1} % of one core ({:.0} events/s delivered)", moving_events as f64 / window_s),
            ),
            (
                "polling every 2 s".into(),
                format!("{poll_cpu:.1} % of one core ({poll_rate:.0} requests/s)"),
            ),
            (
                "server memory per page".into(),
                format!("push {per_stream_kb:.1} KB per open stream; polling {per_poller_kb:.1} KB per page's kept-alive connection (RSS {rss_before:.0} MB → {rss_push:.0} MB pushing, {rss_poll:.0} MB polling)"),
            ),
            ("watchers left after the streams closed".into(), watchers_left.to_string()),
            ("targets".into(), targets),
        ],
        notes: Vec::new(),
        json: serde_json::json!({
            "pages": pages,
            "window_s": window_s,
            "idle_cpu_pct": idle_cpu,
            "push_quiet_cpu_pct": push_quiet_cpu,
            "push_quiet_events": quiet_events,
            "push_moving_cpu_pct": push_moving_cpu,
            "push_moving_events_per_s": moving_events as f64 / window_s,
            "poll_cpu_pct": poll_cpu,
            "poll_requests_per_s": poll_rate,
            "kb_per_stream": per_stream_kb,
            "kb_per_polling_page": per_poller_kb,
            "streams_opened_in_s": opened_in,
        }),
    }
    }
}

/// One page's stream: counts its events (one `data:` line each) until the task is stopped.
async fn watch(
    client: &reqwest::Client,
    url: &str,
    events: &AtomicU64,
    open: &AtomicUsize,
) -> anyhow::Result<()> {
    let response = client.get(url).send().await.context("opening a stream")?;
    anyhow::ensure!(response.status().is_success(), "{}", response.status());
    let mut response = response;
    let mut first = true;
    let mut carry: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        carry.extend_from_slice(&chunk);
        let seen = carry.windows(5).filter(|w| w == b"data:").count() as u64;
        // Keep a tail that could hold the start of a split "data:".
        let keep = carry.len().min(4);
        carry.drain(..carry.len() - keep);
        if seen > 0 {
            events.fetch_add(seen, Ordering::Relaxed);
            if first {
                first = false;
                open.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}

/// Waits (up to 10 s) until the server's metrics say no page watches a sale; the count left.
async fn wait_watchers_gone(client: &reqwest::Client, base: &str) -> anyhow::Result<u64> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = client
            .get(format!("{base}/metrics"))
            .send()
            .await?
            .text()
            .await?;
        let left = text
            .lines()
            .find_map(|l| l.strip_prefix("seckill_live_watchers "))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .context("seckill_live_watchers in /metrics")? as u64;
        if left == 0 || Instant::now() >= deadline {
            return Ok(left);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
