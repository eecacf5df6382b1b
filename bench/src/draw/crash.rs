//! A large draw whose server is killed with `kill -9` half-way through admitting its winners.

use std::time::Duration;

use redis::AsyncCommands;
use tokio::time::Instant;

use crate::{rush::process::Server, scratch::Scratch};

/// A large draw whose server is killed with `kill -9` half-way through admitting its winners
/// (the cursor seen between 0 and the stock), then started again: the draw must resume, admit
/// every one of the first `stock` ranks exactly once and nobody else, and be recorded.
pub(super) async fn crash_mid_draw(
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
