//! The read path over HTTP (design.md §8, decisions 21 and 28): requests per second and latency
//! of the server's most trivial answer (`GET /api/live`, the ceiling every other figure is a
//! ratio of), the JSON API's voucher and list, the home page and a voucher's page (anonymous,
//! from the shared rendering; signed in, filled in for the shopper; signed in on a sale sold
//! out) and a static file, each from the same number of kept-alive connections in a closed
//! loop, one after the other in one run; and a cold visit's weight over the wire (the page,
//! then its CSS, JS and wasm as a browser asks for them).

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use anyhow::Context;
use hdrhistogram::Histogram;
use reqwest::{header, StatusCode};
use seckill::domain::VoucherId;
use tokio::{task::JoinSet, time::Instant};

use crate::{
    report::{self, Report},
    rush::{process::Server, setup::load_client},
    scratch::Scratch,
    Options,
};

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let scratch = Scratch::new("pages").await?;
    let result = bench(options, &scratch).await;
    scratch.cleanup().await?;
    result
}

/// One kind of request.
struct Target {
    label: &'static str,
    path: String,
    session: Option<String>,
    /// Accept-Encoding, for static files.
    encoding: Option<&'static str>,
}

/// What one target measured.
struct Measured {
    rate: f64,
    latency: Histogram<u64>,
    errors: u64,
}

async fn bench(options: &Options, scratch: &Scratch) -> anyhow::Result<()> {
    let conns = options.conns.unwrap_or(200);
    let window = if options.quick {
        Duration::from_secs(2)
    } else {
        Duration::from_secs(10)
    };
    let voucher = scratch
        .voucher(1_000, chrono::Duration::seconds(300))
        .await?;
    // Open a few seconds ago with one unit: sold out below, before the targets run.
    let sold_out = scratch.voucher(1, chrono::Duration::seconds(-4)).await?;
    let users = scratch.users(2).await?;
    let mut sessions = scratch.sessions(&users).await?;
    let late = sessions.pop().context("a session")?;
    let token = sessions.pop().context("a session")?;
    let admin = admin_session(scratch).await?;
    let mut server = Server::start(&scratch.env).await?;
    let client = load_client(conns)?;
    sell_out(&client, &server.base, sold_out, &token, &late).await?;
    let page = format!("/vouchers/{voucher}");
    let mut targets = targets(voucher, sold_out, &token, &late);
    // The admin's pages, rendered per request for them: after the shoppers' (whose indices the
    // targets below read).
    targets.extend(admin_targets(voucher, &admin));
    let mut measured = Vec::new();
    for t in &targets {
        measured.push(hammer(&client, &server.base, t, conns, window).await?);
    }
    let weight = cold_weight(&client, &server.base, &page).await?;
    server.stop();
    for (t, m) in targets.iter().zip(&measured) {
        anyhow::ensure!(m.errors == 0, "{}: {} requests failed", t.label, m.errors);
    }

    report(options, conns, window, &targets, &measured, &weight).publish(options)
}

/// What is measured, one after the other: the ceiling, the JSON API, the pages anonymous and
/// signed in (as `token`; `late` holds no order on the sold-out sale), a static file.
fn targets(voucher: VoucherId, sold_out: VoucherId, token: &str, late: &str) -> Vec<Target> {
    let page = format!("/vouchers/{voucher}");
    let target = |label, path: &str, session: bool, encoding| Target {
        label,
        path: path.to_owned(),
        session: session.then(|| token.to_owned()),
        encoding,
    };
    vec![
        // The ceiling: the server's most trivial answer, through the same stack.
        target("GET /api/live (the ceiling)", "/api/live", false, None),
        target(
            "GET /api/vouchers/{id} (JSON)",
            &format!("/api/vouchers/{voucher}"),
            false,
            None,
        ),
        target(
            "GET /api/vouchers (JSON list)",
            "/api/vouchers",
            false,
            None,
        ),
        target("home page, anonymous", "/", false, None),
        target("home page, signed in", "/", true, None),
        target("voucher page, anonymous", &page, false, None),
        target("voucher page, signed in", &page, true, None),
        // The crowd reloading a sold-out sale's page: a shopper who holds no order on it.
        Target {
            label: "voucher page, signed in, sold out",
            path: format!("/vouchers/{sold_out}"),
            session: Some(late.to_owned()),
            encoding: None,
        },
        target(
            "static file (seckill.js, brotli)",
            "/pkg/seckill.js",
            false,
            Some("br"),
        ),
    ]
}

/// A session of the bench's admin (the configured admin phone).
pub async fn admin_session(scratch: &Scratch) -> anyhow::Result<String> {
    let phone = seckill::domain::Phone::parse(
        seckill::config::DEFAULT_ADMIN_PHONE,
        scratch.core.config.auth.country,
    )?;
    let admin = scratch.admin().await?;
    Ok(
        seckill::auth::open_session(&scratch.core, admin.user(), phone)
            .await?
            .token,
    )
}

/// The admin on a sale's page (with its manage link) and on the console (every row's counts
/// read from Redis and PostgreSQL, the chart's series).
fn admin_targets(voucher: VoucherId, session: &str) -> Vec<Target> {
    let target = |label, path: String| Target {
        label,
        path,
        session: Some(session.to_owned()),
        encoding: None,
    };
    vec![
        target("voucher page, admin", format!("/vouchers/{voucher}")),
        target("console, admin (/admin)", "/admin".to_owned()),
        target(
            "console managing a sale, admin",
            format!("/admin?manage={voucher}&chart={voucher}"),
        ),
    ]
}

fn report(
    options: &Options,
    conns: usize,
    window: Duration,
    targets: &[Target],
    measured: &[Measured],
    weight: &[(String, usize)],
) -> Report {
    let ceiling = measured[0].rate;
    let mut rows = vec![(
        "scenario".to_owned(),
        format!(
            "{conns} connections, closed loop, {:.0} s per target, one after the other",
            window.as_secs_f64()
        ),
    )];
    let mut json = Vec::new();
    for (t, m) in targets.iter().zip(measured) {
        rows.push((
            t.label.to_owned(),
            format!(
                "{:.0}/s ({:.2}× the ceiling) · p50 {:.2} / p99 {:.2} ms{}",
                m.rate,
                m.rate / ceiling,
                report::ms(m.latency.value_at_quantile(0.5)),
                report::ms(m.latency.value_at_quantile(0.99)),
                if m.errors > 0 {
                    format!(" · {} errors", m.errors)
                } else {
                    String::new()
                }
            ),
        ));
        json.push(serde_json::json!({
            "target": t.label,
            "per_sec": m.rate,
            "ratio_to_ceiling": m.rate / ceiling,
            "latency": report::latency_json(&m.latency),
            "errors": m.errors,
        }));
    }
    let parts: Vec<String> = weight
        .iter()
        .map(|(what, bytes)| format!("{what} {:.1} KB", *bytes as f64 / 1024.0))
        .collect();
    let total: usize = weight.iter().map(|(_, b)| b).sum();
    rows.push((
        "cold visit over the wire (brotli)".into(),
        format!("{:.1} KB: {}", total as f64 / 1024.0, parts.join(", ")),
    ));
    let verdict = |ok: bool| if ok { "met" } else { "missed" };
    let at_least = |i: usize, ratio: f64| measured[i].rate >= ratio * ceiling;
    let p99_ok = |i: usize| report::ms(measured[i].latency.value_at_quantile(0.99)) <= 20.0;
    rows.push((
        "targets".into(),
        format!(
            "API voucher and list ≥ 0.8× the ceiling: {}; anonymous home and voucher page ≥ 0.8×: {}; \
             signed-in home and voucher page ≥ 0.5×: {}; a static file ≥ 0.5×: {}; p99 ≤ 20 ms on every page: {}; \
             cold weight ≤ 150 KB: {}",
            verdict(at_least(1, 0.8) && at_least(2, 0.8)),
            verdict(at_least(3, 0.8) && at_least(5, 0.8)),
            verdict(at_least(4, 0.5) && at_least(6, 0.5)),
            verdict(at_least(8, 0.5)),
            verdict((3..=6).all(p99_ok)),
            verdict(total <= 150 * 1024),
        ),
    ));
    Report {
        name: if options.quick {
            "pages-quick"
        } else {
            "pages"
        },
        title: format!("Pages{}", if options.quick { " (quick)" } else { "" }),
        rows,
        notes: Vec::new(),
        json: serde_json::json!({
            "connections": conns,
            "window_s": window.as_secs_f64(),
            "targets": json,
            "cold_weight_bytes": total,
        }),
    }
}

/// `conns` connections asking for `t` back to back for `window` (after a second's warm-up).
async fn hammer(
    client: &reqwest::Client,
    base: &str,
    t: &Target,
    conns: usize,
    window: Duration,
) -> anyhow::Result<Measured> {
    let url = format!("{base}{}", t.path);
    let warm = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = JoinSet::new();
    for _ in 0..conns {
        let mut req = client.get(&url);
        if let Some(token) = &t.session {
            req = req.header(header::COOKIE, format!("seckill_session={token}"));
        }
        if let Some(enc) = t.encoding {
            req = req.header(header::ACCEPT_ENCODING, enc);
        }
        let (warm, stop) = (Arc::clone(&warm), Arc::clone(&stop));
        tasks.spawn(async move {
            let mut latency = report::histogram()?;
            let (mut ok, mut errors) = (0_u64, 0_u64);
            while !stop.load(Ordering::Relaxed) {
                let Some(req) = req.try_clone() else { break };
                let sent = Instant::now();
                let good = match req.send().await {
                    Ok(r) => r.status().is_success() && r.bytes().await.is_ok(),
                    Err(_) => false,
                };
                if warm.load(Ordering::Relaxed) {
                    if good {
                        ok += 1;
                        latency.record(sent.elapsed().as_micros() as u64)?;
                    } else {
                        errors += 1;
                    }
                }
            }
            anyhow::Ok((ok, errors, latency))
        });
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    warm.store(true, Ordering::Relaxed);
    let started = Instant::now();
    tokio::time::sleep(window).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    let mut latency = report::histogram()?;
    let (mut ok, mut errors) = (0, 0);
    while let Some(done) = tasks.join_next().await {
        let (o, e, h) = done??;
        ok += o;
        errors += e;
        latency.add(&h)?;
    }
    Ok(Measured {
        rate: ok as f64 / elapsed,
        latency,
        errors,
    })
}

/// `buyer` takes the only unit of `voucher` and `late` is refused it: the server has seen the
/// sale sell out, as every instance has a second into a rush.
async fn sell_out(
    client: &reqwest::Client,
    base: &str,
    voucher: VoucherId,
    buyer: &str,
    late: &str,
) -> anyhow::Result<()> {
    for (token, expected) in [(buyer, StatusCode::ACCEPTED), (late, StatusCode::CONFLICT)] {
        let answer = client
            .post(format!("{base}/api/vouchers/{voucher}/orders"))
            .header(header::COOKIE, format!("seckill_session={token}"))
            .send()
            .await?;
        let status = answer.status();
        let body = answer.text().await?;
        anyhow::ensure!(
            status == expected,
            "selling out voucher {voucher}: {status} {body}, expected {expected}"
        );
    }
    Ok(())
}

/// A first visit to `page`: the HTML, then each `/pkg/` file it names, as a browser accepting
/// brotli gets them; bytes over the wire (bodies) of each.
async fn cold_weight(
    client: &reqwest::Client,
    base: &str,
    page: &str,
) -> anyhow::Result<Vec<(String, usize)>> {
    let get = |path: String| {
        client
            .get(format!("{base}{path}"))
            .header(header::ACCEPT_ENCODING, "br, gzip")
            .send()
    };
    // The names, from the page as text; then the page again as a browser gets it (encoded).
    let text = client
        .get(format!("{base}{page}"))
        .send()
        .await?
        .text()
        .await?;
    let html = get(page.to_owned()).await?.bytes().await?;
    let mut files: Vec<String> = text
        .match_indices("/pkg/")
        .filter_map(|(at, _)| {
            let rest = &text[at..];
            let end = rest.find(['"', '\'', ' ', ')'])?;
            Some(rest[..end].to_owned())
        })
        .collect();
    // The JS module loads the wasm beside it; the page names only the module.
    if !files.iter().any(|f| f.ends_with(".wasm")) {
        let beside: Vec<String> = files
            .iter()
            .filter_map(|f| f.strip_suffix(".js").map(|stem| format!("{stem}.wasm")))
            .collect();
        files.extend(beside);
    }
    files.sort();
    files.dedup();
    for ext in [".js", ".wasm", ".css"] {
        anyhow::ensure!(
            files.iter().any(|f| f.ends_with(ext)),
            "the page names no {ext} file: {files:?}"
        );
    }
    let mut weight = vec![("page".to_owned(), html.len())];
    for f in files {
        let r = get(f.clone()).await?;
        anyhow::ensure!(r.status().is_success(), "{f}: {}", r.status());
        let name = f.trim_start_matches("/pkg/").to_owned();
        weight.push((name, r.bytes().await?.len()));
    }
    Ok(weight)
}
