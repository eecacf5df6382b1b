//! `bench draw`: the same crowd meets a sale twice in one sitting, once opening first come and
//! once by a draw (issue #33). Humans act at random times in a window with human latency; bots
//! (a tenth of the accounts, many connections) fire at the opening millisecond. For each
//! opening: the bots' share of the crowd and of the winners, the correlation of arrival order
//! with winning, the time from the opening to every winner admitted and written; and the entry
//! rate against `GET /api/live` on the same connections.

use std::{sync::Arc, time::Duration};

use anyhow::Context;
use chrono::Utc;
use futures::StreamExt;
use rand::Rng;
use redis::AsyncCommands;
use seckill::domain::VoucherId;
use tokio::{sync::Semaphore, time::Instant};

use crate::{
    report::Report,
    rush::{fire::live_ceiling, process::Server, setup::load_client},
    scratch::Scratch,
    Options,
};

/// One member of the crowd.
#[derive(Clone, Copy)]
struct Member {
    bot: bool,
    /// When they act, from the opening (bots: at once).
    offset: Duration,
}

/// One member's part in one opening.
#[derive(Clone, Copy, Default)]
struct Arrival {
    /// When their request left, from the opening (or from entries opening).
    sent: Duration,
    /// The answer's status; `None` when no answer came.
    status: Option<u16>,
    /// Took part: clicked (first come) or was entered (the draw: answered 202).
    took_part: bool,
    won: bool,
}

/// What one opening gave.
struct Outcome {
    /// Per member, in `members`' order.
    arrivals: Vec<Arrival>,
    admitted_after: Duration,
    written_after: Duration,
}

pub async fn run(options: &Options) -> anyhow::Result<()> {
    let (crowd, stock, conns, window) = if options.quick {
        (2_000, 200, 50, Duration::from_secs(2))
    } else {
        (100_000, 10_000, 500, Duration::from_secs(8))
    };
    let crowd = options.shoppers.unwrap_or(crowd);
    let stock = options.stock.unwrap_or(stock);
    let conns = options.conns.unwrap_or(conns);
    println!("draw: a crowd of {crowd} (a tenth bots), stock {stock}, {conns} connections");
    let scratch = Scratch::new("draw").await?;
    let result = bench(options, &scratch, crowd, stock, conns, window).await;
    scratch.cleanup().await?;
    result
}

async fn bench(
    options: &Options,
    scratch: &Scratch,
    crowd: usize,
    stock: usize,
    conns: usize,
    window: Duration,
) -> anyhow::Result<()> {
    let mut server = Server::start(&scratch.env).await?;
    let users = scratch.users(crowd * 2).await?;
    let tokens = scratch.sessions(&users).await?;
    let (first_tokens, draw_tokens) = tokens.split_at(crowd);
    let mut rng = rand::rng();
    let members: Vec<Member> = (0..crowd)
        .map(|i| {
            let bot = i % 10 == 0;
            let offset = if bot {
                Duration::ZERO
            } else {
                window.mul_f64(rng.random::<f64>())
                    + Duration::from_millis(rng.random_range(150..600))
            };
            Member { bot, offset }
        })
        .collect();
    let humans = load_client(conns)?;
    let bots = load_client(conns)?;
    let base = server.base.clone();

    // First come: the sale opens, everyone buys at their moment.
    let v = scratch
        .voucher(stock, chrono::Duration::milliseconds(1_500))
        .await?;
    let opens = seckill::testing::store::vouchers::get(&scratch.core.db, v)
        .await?
        .context("voucher")?
        .window
        .begins_at();
    tokio::time::sleep((opens - Utc::now()).to_std().unwrap_or_default()).await;
    let opening = Instant::now();
    // Timed while the crowd still arrives: the units may be gone long before the last human.
    let (arrivals, first) = tokio::join!(
        act(&humans, &bots, &members, first_tokens, conns, |_| {
            format!("{base}/api/vouchers/{v}/orders")
        }),
        settle(scratch, v, stock, Vec::new(), opening)
    );
    // Everyone clicked; who won is who was answered 202.
    let arrivals = arrivals?
        .into_iter()
        .map(|a| Arrival {
            took_part: true,
            won: a.status == Some(202),
            ..a
        })
        .collect();
    let first = Outcome { arrivals, ..first? };

    // A draw: entries open now, the draw when the window has passed.
    let draw_in = window + Duration::from_millis(1_500);
    let d = scratch
        .draw_voucher(stock, chrono::Duration::from_std(draw_in)?)
        .await?;
    let entries_opened = Instant::now();
    let entered = act(&humans, &bots, &members, draw_tokens, conns, |_| {
        format!("{base}/api/vouchers/{d}/entries")
    })
    .await?;
    let draw_at = entries_opened + draw_in;
    // Redis loses the sale between the entries and the draw (every key of it, the entries
    // included): the draw must still rank every entrant answered 202, from the log.
    let keys = scratch.core.keys.voucher(d);
    let mut redis = scratch.core.redis.clone();
    let _: i64 = redis
        .del(&[
            &keys.sale,
            &keys.stock,
            &keys.entries,
            &keys.buyers,
            &keys.moves,
        ])
        .await?;
    tokio::time::sleep_until(draw_at).await;
    // Entered is who was answered 202 (a human whose request lands after the draw's start is
    // refused `entries_closed`, as a shopper would be); who won is who holds an order.
    let answered = entered.iter().filter(|a| a.status == Some(202)).count();
    let mut draw = settle(scratch, d, stock, entered, draw_at).await?;
    let flushed = flushed_draw(scratch, d, answered).await?;
    let winners = winners(scratch, d, &users[crowd..]).await?;
    for (a, won) in draw.arrivals.iter_mut().zip(winners) {
        a.took_part = a.status == Some(202);
        a.won = won;
    }

    // Entries per second, every member at once, against GET /api/live on the same connections.
    let burst = scratch
        .draw_voucher(stock, chrono::Duration::hours(1))
        .await?;
    let started = Instant::now();
    let url = format!("{base}/api/vouchers/{burst}/entries");
    let sent = futures::stream::iter(first_tokens.iter())
        .map(|t| {
            humans
                .post(&url)
                .header(reqwest::header::COOKIE, format!("seckill_session={t}"))
                .send()
        })
        .buffer_unordered(conns)
        .filter(|r| futures::future::ready(r.as_ref().is_ok_and(|r| r.status().as_u16() == 202)))
        .count()
        .await;
    let entries_per_s = sent as f64 / started.elapsed().as_secs_f64();
    let live = live_ceiling(&humans, &base, &Arc::new(first_tokens.to_vec()), conns).await?;
    let crash = crash_mid_draw(scratch, &mut server, options.quick).await;
    server.stop();
    let crash = crash?;

    let mut rows = Vec::new();
    let mut json = serde_json::Map::new();
    for (name, o) in [("first come", &first), ("draw", &draw)] {
        let s = Shares::of(&members, &o.arrivals);
        let r = rank_correlation(&o.arrivals);
        rows.push((
            format!("{name}: bots' share of those taking part / of the winners"),
            format!(
                "{:.1} % of {} / {:.1} % (± {:.1} % at 2σ)",
                s.bots_taking_part * 100.0,
                s.taking_part,
                s.bots_winning * 100.0,
                2.0 * s.sigma * 100.0
            ),
        ));
        rows.push((
            format!("{name}: rank correlation, arrival order × winning"),
            format!("{r:+.3}"),
        ));
        rows.push((
            format!("{name}: winners admitted / written after the opening"),
            format!(
                "{} / {} ({winners} winners)",
                fmt(o.admitted_after),
                fmt(o.written_after),
                winners = s.winners
            ),
        ));
        json.insert(
            name.replace(' ', "_"),
            serde_json::json!({
                "taking_part": s.taking_part, "bots_share_taking_part": s.bots_taking_part,
                "bots_share_winners": s.bots_winning, "winners": s.winners,
                "rank_correlation": r, "admitted_after_ms": o.admitted_after.as_millis(),
                "written_after_ms": o.written_after.as_millis(), "two_sigma": 2.0 * s.sigma,
            }),
        );
    }
    let (closed, failed) = refusals(&draw.arrivals);
    rows.push((
        "draw: entered / too late (entries_closed) / failed".into(),
        format!(
            "{} / {closed} / {failed} of {crowd}",
            draw.arrivals.iter().filter(|a| a.took_part).count()
        ),
    ));
    rows.push((
        "entries/s (all at once) / GET /api/live req/s".into(),
        format!(
            "{entries_per_s:.0} / {live:.0} ({:.2}x)",
            entries_per_s / live
        ),
    ));
    rows.push((
        "draw: Redis flushed between the entries and the draw".into(),
        flushed.clone(),
    ));
    rows.push(("kill -9 mid-draw".into(), crash.clone()));
    json.insert("flushed".into(), flushed.into());
    json.insert("entries_per_s".into(), entries_per_s.into());
    json.insert("crash".into(), crash.into());
    json.insert("live_per_s".into(), live.into());
    let verdict = verdict(&members, &draw, stock);
    Report {
        name: if options.quick { "draw-quick" } else { "draw" },
        title: format!(
            "Draw vs first come{}",
            if options.quick { " (quick)" } else { "" }
        ),
        rows,
        notes: vec![verdict.clone()],
        json: serde_json::Value::Object(json),
    }
    .publish(options)?;
    if verdict.starts_with("MISSED") {
        anyhow::bail!("{verdict}");
    }
    Ok(())
}

/// A large draw whose server is killed with `kill -9` half-way through admitting its winners
/// (the cursor seen between 0 and the stock), then started again: the draw must resume, admit
/// every one of the first `stock` ranks exactly once and nobody else, and be recorded.
async fn crash_mid_draw(
    scratch: &Scratch,
    server: &mut Server,
    quick: bool,
) -> anyhow::Result<String> {
    let (entrants, stock) = if quick {
        (40_000, 20_000)
    } else {
        (100_000, 50_000)
    };
    let users = scratch.users(entrants).await?;
    let v = scratch
        .draw_voucher(stock, chrono::Duration::seconds(3))
        .await?;
    let keys = scratch.core.keys.voucher(v);
    let mut redis = scratch.core.redis.clone();
    // Set-up, not under test: the entries straight into the log (the draw fills Redis's
    // duplicate check from it).
    for chunk in users.chunks(10_000) {
        let ids: Vec<seckill::domain::UserId> = chunk.iter().map(|(u, _)| *u).collect();
        seckill::testing::store::draw_log::log(&scratch.core.db, v, &ids).await?;
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    let killed_at = loop {
        let cursor: Option<i64> = redis.hget(&keys.sale, "draw_cursor").await?;
        match cursor {
            Some(c) if c > 0 && c < i64::try_from(stock)? => {
                server.kill9();
                break c;
            }
            Some(c) if c >= i64::try_from(stock)? => {
                anyhow::bail!("the draw admitted all {stock} before the kill could land")
            }
            _ => {}
        }
        anyhow::ensure!(Instant::now() < deadline, "the draw never started");
        tokio::time::sleep(Duration::from_micros(500)).await;
    };
    let killed = Instant::now();
    *server = Server::start_on(&scratch.env, server.port()).await?;
    let recorded_after = loop {
        let row = seckill::testing::store::draws::get(&scratch.core.db, v).await?;
        if row.and_then(|r| r.recorded).is_some() {
            break killed.elapsed();
        }
        anyhow::ensure!(
            killed.elapsed() < Duration::from_secs(60),
            "the draw was not resumed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let stock_i = i64::try_from(stock)?;
    let holders: Vec<i64> = loop {
        let holders: Vec<i64> =
            sqlx::query_scalar("SELECT user_id FROM orders WHERE voucher_id = $1")
                .bind(v.get())
                .fetch_all(&scratch.core.db)
                .await?;
        if holders.len() >= stock {
            break holders;
        }
        anyhow::ensure!(
            killed.elapsed() < Duration::from_secs(90),
            "only {} orders written",
            holders.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let ranked = seckill::testing::store::draws::ranks(&scratch.core.db, v, 0, stock_i).await?;
    let mut want: Vec<i64> = ranked.iter().map(|u| u.get()).collect();
    let mut got = holders.clone();
    want.sort_unstable();
    got.sort_unstable();
    anyhow::ensure!(
        got == want,
        "after the kill, the orders are not the first {stock} ranks once each ({} orders)",
        holders.len()
    );
    let buyers: i64 = redis.hlen(&keys.buyers).await?;
    anyhow::ensure!(
        buyers == stock_i,
        "{buyers} buyers in Redis for {stock} units"
    );
    Ok(format!(
        "{entrants} entrants, {stock} units: killed at rank {killed_at}; resumed and recorded {} ms after the kill; the first {stock} ranks hold one order each, nobody else",
        recorded_after.as_millis()
    ))
}

/// After a draw whose Redis state was deleted between its entries and its start: every entrant
/// answered 202 is ranked, and the transcript recomputes (`domain::fair::check`).
async fn flushed_draw(scratch: &Scratch, d: VoucherId, answered: usize) -> anyhow::Result<String> {
    // The ranking is recorded just after the winners are admitted.
    let waited = Instant::now();
    let t = loop {
        let t = seckill::draw::transcript(&scratch.core, d).await?;
        if t.seed.is_some() {
            break t;
        }
        anyhow::ensure!(
            waited.elapsed() < Duration::from_secs(60),
            "the draw was not recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let checked = seckill::domain::fair::check(&t).map_err(|e| anyhow::anyhow!("{e}"))?;
    anyhow::ensure!(
        checked.entrants == answered,
        "{answered} entrants answered 202, {} ranked",
        checked.entrants
    );
    Ok(format!(
        "{answered} answered 202, {} ranked; the transcript recomputes ({} winners)",
        checked.entrants, checked.winners
    ))
}

/// Everyone acts at their moment from the start of the call: bots from their own connections,
/// humans from theirs. Returns per member when their request left and its answer's status.
async fn act(
    humans: &reqwest::Client,
    bots: &reqwest::Client,
    members: &[Member],
    tokens: &[String],
    conns: usize,
    url: impl Fn(usize) -> String,
) -> anyhow::Result<Vec<Arrival>> {
    let start = Instant::now();
    let (human_slots, bot_slots) = (
        Arc::new(Semaphore::new(conns)),
        Arc::new(Semaphore::new(conns)),
    );
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by_key(|i| members[*i].offset);
    let mut tasks = Vec::with_capacity(members.len());
    for i in order {
        let m = members[i];
        tokio::time::sleep_until(start + m.offset).await;
        let (client, slots) = if m.bot {
            (bots.clone(), bot_slots.clone())
        } else {
            (humans.clone(), human_slots.clone())
        };
        let (url, token) = (url(i), tokens[i].clone());
        tasks.push(tokio::spawn(async move {
            let _slot = slots.acquire_owned().await;
            let sent = start.elapsed();
            let status = client
                .post(url)
                .header(reqwest::header::COOKIE, format!("seckill_session={token}"))
                .send()
                .await
                .ok()
                .map(|r| r.status().as_u16());
            (i, sent, status)
        }));
    }
    let mut out = vec![Arrival::default(); members.len()];
    for t in tasks {
        let (i, sent, status) = t.await?;
        out[i] = Arrival {
            sent,
            status,
            ..Arrival::default()
        };
    }
    Ok(out)
}

/// Waits until `stock` orders are admitted (Redis's stock at 0) and written (PostgreSQL), each
/// timed from `opening`.
async fn settle(
    scratch: &Scratch,
    v: VoucherId,
    stock: usize,
    arrivals: Vec<Arrival>,
    opening: Instant,
) -> anyhow::Result<Outcome> {
    let mut o = Outcome {
        arrivals,
        admitted_after: Duration::ZERO,
        written_after: Duration::ZERO,
    };
    let keys = scratch.core.keys.voucher(v);
    let mut redis = scratch.core.redis.clone();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        // None: Redis lost the sale and the draw has not restored it yet.
        let left: Option<i64> = redis.get(&keys.stock).await?;
        if left.is_some_and(|n| n <= 0) {
            o.admitted_after = opening.elapsed();
            break;
        }
        anyhow::ensure!(Instant::now() < deadline, "{left:?} units never admitted");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    loop {
        let written: i64 = sqlx::query_scalar("SELECT count(*) FROM orders WHERE voucher_id = $1")
            .bind(v.get())
            .fetch_one(&scratch.core.db)
            .await?;
        if written >= i64::try_from(stock)? {
            o.written_after = opening.elapsed();
            return Ok(o);
        }
        anyhow::ensure!(Instant::now() < deadline, "only {written} orders written");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Per user (in `users`' order), whether they hold a written order on `v`.
async fn winners(
    scratch: &Scratch,
    v: VoucherId,
    users: &[(seckill::domain::UserId, seckill::domain::Phone)],
) -> anyhow::Result<Vec<bool>> {
    let holders: Vec<i64> = sqlx::query_scalar("SELECT user_id FROM orders WHERE voucher_id = $1")
        .bind(v.get())
        .fetch_all(&scratch.core.db)
        .await?;
    let holders: std::collections::HashSet<i64> = holders.into_iter().collect();
    Ok(users
        .iter()
        .map(|(u, _)| holders.contains(&u.get()))
        .collect())
}

/// Among those taking part, Pearson's correlation of arrival rank (1 first) with winning
/// (1 won): negative when the early win. Ties in arrival get their average rank.
fn rank_correlation(arrivals: &[Arrival]) -> f64 {
    let arrivals: Vec<(Duration, bool)> = arrivals
        .iter()
        .filter(|a| a.took_part)
        .map(|a| (a.sent, a.won))
        .collect();
    let n = arrivals.len();
    let mut idx: Vec<usize> = (0..n).collect();
    idx.sort_by_key(|i| arrivals[*i].0);
    let mut ranks = vec![0.0; n];
    let mut k = 0;
    while k < n {
        let mut j = k;
        while j + 1 < n && arrivals[idx[j + 1]].0 == arrivals[idx[k]].0 {
            j += 1;
        }
        let avg = (k + j) as f64 / 2.0 + 1.0;
        for t in &idx[k..=j] {
            ranks[*t] = avg;
        }
        k = j + 1;
    }
    let wins: Vec<f64> = arrivals
        .iter()
        .map(|(_, w)| f64::from(u8::from(*w)))
        .collect();
    let mean = |xs: &[f64]| xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let (mr, mw) = (mean(&ranks), mean(&wins));
    let cov: f64 = ranks
        .iter()
        .zip(&wins)
        .map(|(r, w)| (r - mr) * (w - mw))
        .sum();
    let var_r: f64 = ranks.iter().map(|r| (r - mr).powi(2)).sum();
    let var_w: f64 = wins.iter().map(|w| (w - mw).powi(2)).sum();
    if var_r == 0.0 || var_w == 0.0 {
        return 0.0;
    }
    cov / (var_r * var_w).sqrt()
}

/// The bots' shares in one opening.
struct Shares {
    taking_part: usize,
    winners: usize,
    bots_taking_part: f64,
    bots_winning: f64,
    /// The standard error of the bots' share of the winners were winners drawn fairly from
    /// those taking part.
    sigma: f64,
}

impl Shares {
    fn of(members: &[Member], arrivals: &[Arrival]) -> Self {
        let count = |f: &dyn Fn(&Member, &Arrival) -> bool| {
            members
                .iter()
                .zip(arrivals)
                .filter(|(m, a)| f(m, a))
                .count()
        };
        let taking_part = count(&|_, a| a.took_part);
        let winners = count(&|_, a| a.won);
        let bots_taking_part =
            count(&|m, a| m.bot && a.took_part) as f64 / taking_part.max(1) as f64;
        let bots_winning = count(&|m, a| m.bot && a.won) as f64 / winners.max(1) as f64;
        let sigma = (bots_taking_part * (1.0 - bots_taking_part) / winners.max(1) as f64).sqrt();
        Self {
            taking_part,
            winners,
            bots_taking_part,
            bots_winning,
            sigma,
        }
    }
}

/// Entries refused as too late (`409`, the draw had started) and entries that failed otherwise
/// (no answer, or any other status).
fn refusals(arrivals: &[Arrival]) -> (usize, usize) {
    let closed = arrivals.iter().filter(|a| a.status == Some(409)).count();
    let failed = arrivals
        .iter()
        .filter(|a| !matches!(a.status, Some(202 | 409)))
        .count();
    (closed, failed)
}

/// The targets: in the draw, the bots' share of the winners within 4σ of their share of the
/// entrants (a fair draw misses it once in 16,000 runs), the correlation of arrival with winning within 4/√n of 0 among the entrants, every
/// unit won when at least `stock` entered, and no entry lost to an error. (Humans whose entry
/// lands after the draw's start are refused, as they would be; on a slow machine there are more
/// of them, which moves the bots' share of the entrants, not the draw's fairness.)
fn verdict(members: &[Member], draw: &Outcome, stock: usize) -> String {
    let s = Shares::of(members, &draw.arrivals);
    let r = rank_correlation(&draw.arrivals);
    let r_bound = 4.0 / (s.taking_part.max(1) as f64).sqrt();
    let (_, failed) = refusals(&draw.arrivals);
    let filled = s.winners == stock.min(s.taking_part);
    let fair = (s.bots_winning - s.bots_taking_part).abs() <= 4.0 * s.sigma && r.abs() <= r_bound;
    format!(
        "{}: in the draw the bots won {:.1} % of the units for {:.1} % of the {} entrants (4σ = {:.1} %), arrival × winning r = {r:+.3} (bound ±{r_bound:.3}); {} winners for {stock} units; {failed} entries failed.",
        if fair && filled && failed == 0 { "Targets met" } else { "MISSED" },
        s.bots_winning * 100.0,
        s.bots_taking_part * 100.0,
        s.taking_part,
        4.0 * s.sigma * 100.0,
        s.winners,
    )
}

fn fmt(d: Duration) -> String {
    format!("{} ms", d.as_millis())
}
