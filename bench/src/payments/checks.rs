//! The checks at quiescence: I1–I4 on the sale, M1–M3 on the money.

use fakes::stripe::FakeStripe;
use seckill::domain::VoucherId;
use tokio::time::Instant;

use anyhow::bail;
use std::time::Duration;

use crate::{rush::measure, scratch::Scratch};

/// Waits until nothing of `voucher` awaits payment, no payment is open and no refund is owed.
pub(super) async fn quiescent(
    scratch: &Scratch,
    voucher: VoucherId,
    until: Instant,
) -> anyhow::Result<()> {
    loop {
        let (created, open, owed, pending): (i64, i64, i64, i64) = sqlx::query_as(
            "SELECT (SELECT count(*) FROM orders WHERE voucher_id = $1 AND status = 'created'),
                    (SELECT count(*) FROM payments WHERE state = 'open'),
                    (SELECT count(*) FROM payments WHERE state = 'refund_due'),
                    (SELECT count(*) FROM stock_moves WHERE applied_at IS NULL)",
        )
        .bind(voucher.get())
        .fetch_one(&scratch.core.db)
        .await?;
        if created + open + owed + pending == 0 {
            return Ok(());
        }
        if Instant::now() > until {
            bail!("not quiescent: {created} awaiting payment, {open} payments open, {owed} refunds owed, {pending} moves pending");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// I1 (Redis stock + queued + live orders = stock, PostgreSQL's stock likewise), I2 (one live
/// order per buyer), I3/I4 (every admitted order written once).
pub(super) async fn units_hold(
    scratch: &Scratch,
    voucher: VoucherId,
    stock: usize,
    admitted: usize,
) -> anyhow::Result<Vec<String>> {
    let mut broken = Vec::new();
    let (redis_stock, queued, buyers) = measure::redis_counts(scratch, voucher).await?;
    let (live, written, db_stock): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*) FILTER (WHERE status IN ('created', 'paid')), count(*),
                (SELECT stock FROM vouchers WHERE id = $1)
         FROM orders WHERE voucher_id = $1",
    )
    .bind(voucher.get())
    .fetch_one(&scratch.core.db)
    .await?;
    let stock = stock as i64;
    let redis_stock = redis_stock.unwrap_or(-1);
    if redis_stock + queued + live != stock {
        broken.push(format!(
            "I1: Redis {redis_stock} + queued {queued} + live orders {live} != {stock}"
        ));
    }
    if db_stock != stock - live {
        broken.push(format!(
            "I1: PostgreSQL stock {db_stock} != {stock} - {live}"
        ));
    }
    if buyers != live {
        broken.push(format!(
            "I2: {buyers} buyers in Redis for {live} live orders"
        ));
    }
    if written != admitted as i64 {
        broken.push(format!(
            "I3/I4: {written} orders written for {admitted} admitted"
        ));
    }
    Ok(broken)
}

/// M1–M3 against what the stand-in took and gave back.
pub(super) async fn money_holds(
    scratch: &Scratch,
    fake: &FakeStripe,
) -> anyhow::Result<Vec<String>> {
    let captured: Vec<_> = fake.captured().into_iter().map(Into::into).collect();
    let refunded: Vec<_> = fake.refunded().into_iter().map(Into::into).collect();
    let books = seckill::orders::reconcile::money_violations(&scratch.core, &captured, &refunded);
    Ok(books.await?)
}
