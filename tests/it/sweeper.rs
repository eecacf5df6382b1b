//! The housekeeping job on the real Redis and PostgreSQL: it restores lost sales, retires
//! finished ones only once drained, runs on one instance at a time, fenced, and goes on past a
//! sale Redis cannot serve.

use std::time::Duration;

use crate::common::*;
use seckill::{
    jobs::sweeper::{self, SweepOutcome},
    sale,
    testing::lock::{LockClient, LockOptions},
};
use sqlx::PgPool;

async fn ran(core: &seckill::Core) -> sweeper::SweepReport {
    match sweeper::sweep_once(core).await.expect("sweep") {
        SweepOutcome::Ran(r) => r,
        other => panic!("expected a run, got {other:?}"),
    }
}

async fn exists(core: &seckill::Core, key: &str) -> bool {
    let mut c = core.redis.clone();
    redis::cmd("EXISTS")
        .arg(key)
        .query_async::<i64>(&mut c)
        .await
        .expect("EXISTS")
        == 1
}

async fn registered(core: &seckill::Core, v: seckill::domain::VoucherId) -> bool {
    let mut c = core.redis.clone();
    redis::cmd("SISMEMBER")
        .arg(core.keys.preloaded_vouchers())
        .arg(v.get())
        .query_async::<i64>(&mut c)
        .await
        .expect("SISMEMBER")
        == 1
}

#[sqlx::test]
async fn a_live_sale_lost_from_redis_is_restored_by_the_sweep(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let v = voucher(&core, 5, 60, 3600).await;
    sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    sale::buy(&core, u[1], v)
        .await
        .expect("admitted, still queued");
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(&k.stock)
        .arg(&k.buyers)
        .arg(core.keys.preloaded_vouchers())
        .query_async(&mut c)
        .await
        .expect("DEL");

    let report = ran(&core).await;
    assert_eq!(report.restored, vec![v]);
    assert_eq!(
        redis_i64(&core, &k.stock).await,
        Some(3),
        "5 − 1 written − 1 queued"
    );
    assert!(registered(&core, v).await, "back in the worker's registry");
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(sale::BuyError::AlreadyBought(_))
    ));
    // A second pass finds nothing to do.
    assert_eq!(ran(&core).await, sweeper::SweepReport::default());
}

#[sqlx::test]
async fn an_unchecked_sale_nobody_buys_from_is_reconciled_by_the_sweep(db: PgPool) {
    let core = core(db, &[]).await;
    // Opens in an hour: nobody buys before then.
    let v = voucher(&core, 5, -3600, 7200).await;
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    // Left unchecked (an admin's edit whose process died before it reconciled), with a stock
    // PostgreSQL does not hold.
    let _: () = redis::pipe()
        .hdel(&k.sale, "master")
        .set(&k.stock, 50)
        .query_async(&mut c)
        .await
        .expect("unchecked");
    let report = ran(&core).await;
    assert_eq!(report.restored, vec![v]);
    assert_eq!(
        redis_i64(&core, &k.stock).await,
        Some(5),
        "PostgreSQL's stock"
    );
    assert_eq!(
        seckill::catalog::check(&core, v).await.expect("check"),
        seckill::testing::scripts::PreloadOutcome::AlreadyLoaded { stock: 5 }
    );
    assert_eq!(ran(&core).await, sweeper::SweepReport::default());
}

#[sqlx::test]
async fn a_finished_sale_is_retired_only_once_drained(db: PgPool) {
    let core = core(db, &[("SECKILL_RETIRE_AFTER_MS", "100")]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 1, 2).await; // ends in about one second
    let live = voucher(&core, 5, 1, 3600).await;
    let id = sale::buy(&core, u[0], v).await.expect("admitted");
    tokio::time::sleep(Duration::from_millis(1_300)).await;

    let report = ran(&core).await;
    assert!(report.retired.is_empty(), "an order is still queued");
    assert_eq!(report.draining, 1);

    drain(&core).await;
    let report = ran(&core).await;
    assert_eq!(report.retired, vec![v]);
    let k = core.keys.voucher(v);
    for key in [&k.sale, &k.stock, &k.buyers, &k.queued, &k.orders] {
        assert!(!exists(&core, key).await, "{key} deleted");
    }
    assert!(!registered(&core, v).await);
    assert!(registered(&core, live).await, "a live sale stays");
    assert!(exists(&core, &core.keys.voucher(live).stock).await);
    let status = sale::order_status(&core, u[0], id)
        .await
        .expect("status")
        .expect("found");
    assert_eq!(status.status.as_str(), "created");
    assert_eq!(
        written(&core, v).await,
        1,
        "the order lives on in PostgreSQL"
    );
}

#[sqlx::test]
async fn a_sale_whose_hash_is_gone_stays_registered_while_orders_are_queued(db: PgPool) {
    let core = core(db, &[("SECKILL_RETIRE_AFTER_MS", "100")]).await;
    let u = users(&core, 1).await;
    let v = voucher(&core, 5, 1, 2).await; // ends in about one second
    let id = sale::buy(&core, u[0], v).await.expect("admitted");
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    // Redis loses the sale's hash (an eviction, a partial restore) with the order still queued.
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(&k.sale)
        .query_async(&mut c)
        .await
        .expect("DEL");

    let report = ran(&core).await;
    assert!(report.retired.is_empty(), "an order is still queued");
    assert!(
        registered(&core, v).await,
        "the worker still reads its stream"
    );
    drain(&core).await;
    assert_eq!(written(&core, v).await, 1, "the queued order is written");
    let status = sale::order_status(&core, u[0], id)
        .await
        .expect("status")
        .expect("found");
    assert_eq!(status.status.as_str(), "created");
    assert_eq!(ran(&core).await.retired, vec![v], "then retired");
}

#[sqlx::test]
async fn a_buy_on_a_retired_sale_is_answered_from_postgresql_without_loading_it_back(db: PgPool) {
    let core = core(db, &[("SECKILL_RETIRE_AFTER_MS", "100")]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 1, 2).await; // ends in about one second
    let id = sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    tokio::time::sleep(Duration::from_millis(1_300)).await;
    assert_eq!(ran(&core).await.retired, vec![v]);

    // The buyer repeating the buy learns the order; anyone else learns the sale ended.
    assert!(matches!(
        sale::buy(&core, u[0], v).await,
        Err(sale::BuyError::AlreadyBought(o)) if o == id
    ));
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(sale::BuyError::Ended)
    ));
    // Neither buy brought the sale back into Redis.
    let k = core.keys.voucher(v);
    for key in [&k.sale, &k.stock, &k.buyers, &k.queued, &k.orders] {
        assert!(!exists(&core, key).await, "{key} stays deleted");
    }
    assert!(!registered(&core, v).await);
}

#[sqlx::test]
async fn one_instance_sweeps_at_a_time_and_a_stale_token_stands_down(db: PgPool) {
    let core = core(db, &[]).await;
    let other_instance = LockClient::single(
        core.redis_deployment().clone(),
        core.keys.clone(),
        LockOptions::default(),
    );
    let held = other_instance
        .acquire(&format!("job:{}", sweeper::JOB))
        .await
        .expect("acquire");
    assert_eq!(
        sweeper::sweep_once(&core).await.expect("sweep"),
        SweepOutcome::Busy
    );
    held.release().await.expect("release");

    ran(&core).await;
    // A newer run was recorded (say by an instance whose grant came later): ours stands down.
    sqlx::query("UPDATE job_runs SET fence = 9223372036854775000 WHERE name = $1")
        .bind(sweeper::JOB)
        .execute(&core.db)
        .await
        .expect("update");
    assert_eq!(
        sweeper::sweep_once(&core).await.expect("sweep"),
        SweepOutcome::Fenced
    );
}

/// One sale Redis cannot serve (its hash made a string here: every script on it errors, as
/// one on a shard out of reach would) does not stop the pass: another sale's order past its
/// deadline is cancelled in it, and its unit goes back on sale.
#[sqlx::test]
async fn a_sale_redis_cannot_serve_does_not_stop_the_deadlines_of_the_others(db: PgPool) {
    let core = core(db, &[("SECKILL_PAY_WITHIN_MS", "300")]).await;
    let u = users(&core, 1).await;
    let v = voucher(&core, 1, 60, 3600).await;
    let broken = voucher(&core, 1, 60, 3600).await;
    let order = sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    break_sale_hash(&core, broken).await;
    tokio::time::sleep(Duration::from_millis(400)).await;

    let report = ran(&core).await;
    assert_eq!(report.expired, 1, "{report:?}");
    assert!(
        report.restored.is_empty() && report.retired.is_empty(),
        "{report:?}"
    );
    let status = sale::order_status(&core, u[0], order)
        .await
        .expect("status")
        .expect("found")
        .status;
    assert_eq!(status.as_str(), "cancelled");
    assert_eq!(
        redis_i64(&core, &core.keys.voucher(v).stock).await,
        Some(1),
        "its unit back on sale"
    );
}
