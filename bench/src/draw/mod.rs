//! `bench draw`: the same crowd meets a sale twice in one sitting, once opening first come and
//! once by a draw (issue #33). Humans act at random times in a window with human latency; bots
//! (a tenth of the accounts, many connections) fire at the opening millisecond. For each
//! opening: the bots' share of the crowd and of the winners, the correlation of arrival order
//! with winning, the time from the opening to every winner admitted and written; and the entry
//! rate against `GET /api/live` on the same connections.

use std::{sync::Arc, time::Duration};

use anyhow::Context;
use futures::StreamExt;
use rand::Rng;
use redis::AsyncCommands;
use seckill::domain::{fair, Phone, UserId, VoucherId};
use tokio::time::Instant;

mod crash;
mod crowd;
mod figures;
mod stats;

use self::{
    crash::crash_mid_draw,
    crowd::{act, settle, winners},
    figures::Figures,
    stats::verdict,
};
use crate::{
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
    let c = Crowd {
        scratch,
        members: members(crowd, window),
        humans: load_client(conns)?,
        bots: load_client(conns)?,
        conns,
        base: server.base.clone(),
    };
    let first = c.first_come(first_tokens, stock).await?;
    let (draw, flushed) = c
        .by_draw(draw_tokens, &users[crowd..], stock, window)
        .await?;
    let entries_per_s = c.entry_rate(first_tokens, stock).await?;
    let live = live_ceiling(&c.humans, &c.base, &Arc::new(first_tokens.to_vec()), conns)
        .await?
        .per_sec;
    let crash = crash_mid_draw(scratch, &mut server, options.quick).await;
    server.stop();
    let figures = Figures {
        members: &c.members,
        first: &first,
        draw: &draw,
        entries_per_s,
        live,
        flushed,
        crash: crash?,
    };
    let verdict = verdict(&c.members, &draw, stock);
    figures.report(options, verdict.clone()).publish(options)?;
    if verdict.starts_with("MISSED") {
        anyhow::bail!("{verdict}");
    }
    Ok(())
}

/// The crowd: a tenth bots firing at the opening, the rest humans at random moments in
/// `window` with a human's latency.
fn members(crowd: usize, window: Duration) -> Vec<Member> {
    let mut rng = rand::rng();
    (0..crowd)
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
        .collect()
}

/// The same crowd, on its own connections, meeting each opening.
struct Crowd<'a> {
    scratch: &'a Scratch,
    members: Vec<Member>,
    humans: reqwest::Client,
    bots: reqwest::Client,
    conns: usize,
    base: String,
}

impl Crowd<'_> {
    /// First come: the sale opens, everyone buys at their moment; who won is who was answered
    /// 202.
    async fn first_come(&self, tokens: &[String], stock: usize) -> anyhow::Result<Outcome> {
        let (scratch, base) = (self.scratch, &self.base);
        let (v, opens) = crate::rush::setup::sale(scratch, stock).await?;
        crate::rush::setup::sleep_until(opens).await;
        let opening = Instant::now();
        // Timed while the crowd still arrives: the units may be gone long before the last human.
        let (arrivals, first) = tokio::join!(
            act(
                &self.humans,
                &self.bots,
                &self.members,
                tokens,
                self.conns,
                |_| { format!("{base}/api/vouchers/{v}/orders") }
            ),
            settle(scratch, v, stock, Vec::new(), opening)
        );
        let arrivals = arrivals?
            .into_iter()
            .map(|a| Arrival {
                took_part: true,
                won: a.status == Some(202),
                ..a
            })
            .collect();
        Ok(Outcome { arrivals, ..first? })
    }

    /// A draw: entries open now, the draw when the window has passed. Redis loses the sale
    /// between the entries and the draw (every key of it, the entries included): the draw must
    /// still rank every entrant answered 202, from the log. The outcome, and what the flush
    /// left.
    async fn by_draw(
        &self,
        tokens: &[String],
        users: &[(UserId, Phone)],
        stock: usize,
        window: Duration,
    ) -> anyhow::Result<(Outcome, String)> {
        let (scratch, base) = (self.scratch, &self.base);
        let draw_in = window + Duration::from_millis(1_500);
        let d = scratch
            .draw_voucher(stock, chrono::Duration::from_std(draw_in)?)
            .await?;
        let entries_opened = Instant::now();
        let entered = act(
            &self.humans,
            &self.bots,
            &self.members,
            tokens,
            self.conns,
            |_| format!("{base}/api/vouchers/{d}/entries"),
        )
        .await?;
        let draw_at = entries_opened + draw_in;
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
        // Entered is who was answered 202 (a human whose request lands after the draw's start
        // is refused `entries_closed`, as a shopper would be); who won is who holds an order.
        let answered = entered.iter().filter(|a| a.status == Some(202)).count();
        let mut draw = settle(scratch, d, stock, entered, draw_at).await?;
        let flushed = flushed_draw(scratch, d, stock, answered).await?;
        let winners = winners(scratch, d, users).await?;
        for (a, won) in draw.arrivals.iter_mut().zip(winners) {
            a.took_part = a.status == Some(202);
            a.won = won;
        }
        Ok((draw, flushed))
    }

    /// Entries per second, every member at once.
    async fn entry_rate(&self, tokens: &[String], stock: usize) -> anyhow::Result<f64> {
        let burst = self
            .scratch
            .draw_voucher(stock, chrono::Duration::hours(1))
            .await?;
        let started = Instant::now();
        let url = format!("{}/api/vouchers/{burst}/entries", self.base);
        let sent = futures::stream::iter(tokens.iter())
            .map(|t| {
                self.humans
                    .post(&url)
                    .header(reqwest::header::COOKIE, format!("seckill_session={t}"))
                    .send()
            })
            .buffer_unordered(self.conns)
            .filter(|r| {
                futures::future::ready(r.as_ref().is_ok_and(|r| r.status().as_u16() == 202))
            })
            .count()
            .await;
        Ok(sent as f64 / started.elapsed().as_secs_f64())
    }
}

/// After a draw whose Redis state was deleted between its entries and its start: every entrant
/// answered 202 is ranked, and the transcript recomputes (`domain::fair::check`, with the
/// `stock` the sale was created with and the one it publishes now; the bench's shop runs without
/// a beacon).
async fn flushed_draw(
    scratch: &Scratch,
    d: VoucherId,
    stock: usize,
    answered: usize,
) -> anyhow::Result<String> {
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
    let v = seckill::testing::store::vouchers::get(&scratch.core.db, d)
        .await?
        .context("voucher")?;
    let sale = fair::Sale {
        voucher_id: d.get(),
        stock: fair::StockSeen::Between {
            before: i64::try_from(stock)?,
            after: v.total_stock(),
        },
        ends_at: v.window.ends_at(),
    };
    let checked = fair::check(&t, &sale, &fair::BeaconCheck::NotExpected)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
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
