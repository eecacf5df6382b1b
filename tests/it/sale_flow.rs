//! The sale flow against the real Redis and PostgreSQL: admission outcomes, concurrency
//! invariants, crash recovery, dead letters and state restoration.

use std::collections::HashSet;

use crate::common::*;
use seckill::{
    domain::{FailureReason, OrderId, OrderStatus, Shard, SHARD_SEQUENCE_MAX},
    jobs::order_writer::Worker,
    sale::{self, BuyError},
    testing::store,
};
use sqlx::PgPool;

#[sqlx::test]
async fn every_admission_outcome_is_produced(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let open = voucher(&core, 1, 60, 3600).await;
    let later = voucher(&core, 1, -3600, 7200).await;
    // A sale that closes one second from now (a voucher cannot be created already ended).
    let over = voucher(&core, 1, 10, 11).await;

    let id = sale::buy(&core, u[0], open).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[0], open).await,
        Err(BuyError::AlreadyBought(_))
    ));
    assert!(matches!(
        sale::buy(&core, u[1], open).await,
        Err(BuyError::SoldOut)
    ));
    assert!(matches!(
        sale::buy(&core, u[1], later).await,
        Err(BuyError::NotStarted)
    ));
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let r = sale::buy(&core, u[1], over).await;
    assert!(matches!(r, Err(BuyError::Ended)), "{r:?}");
    let unknown = seckill::domain::VoucherId::try_from(999_999).expect("id");
    assert!(matches!(
        sale::buy(&core, u[1], unknown).await,
        Err(BuyError::NotFound)
    ));

    let status = sale::order_status(&core, u[0], id)
        .await
        .expect("status")
        .expect("visible");
    assert_eq!(status.status, OrderStatus::Queued);
    assert!(
        sale::order_status(&core, u[1], id)
            .await
            .expect("status")
            .is_none(),
        "not another's"
    );
}

#[sqlx::test]
async fn two_thousand_shoppers_on_a_stock_of_one_hundred(db: PgPool) {
    let core = core(db, &[]).await;
    let shoppers = users(&core, 2_000).await;
    let v = voucher(&core, 100, 60, 3600).await;

    let tasks: Vec<_> = shoppers
        .iter()
        .map(|u| {
            let (core, u) = (core.clone(), *u);
            tokio::spawn(async move { (u, sale::buy(&core, u, v).await) })
        })
        .collect();
    let mut admitted = Vec::new();
    for t in tasks {
        match t.await.expect("task") {
            (u, Ok(id)) => admitted.push((u, id)),
            (_, Err(BuyError::SoldOut)) => {}
            (_, Err(e)) => panic!("unexpected refusal {e}"),
        }
    }
    assert_eq!(admitted.len(), 100);
    let ids: HashSet<OrderId> = admitted.iter().map(|a| a.1).collect();
    assert_eq!(ids.len(), 100, "IDs are unique");

    let report = Worker::new(core.clone(), "w1")
        .await
        .expect("worker")
        .drain()
        .await
        .expect("drain");
    assert_eq!(report.written, 100);
    assert_stock_conserved(&core, v, 100).await;
    assert_eq!(redis_i64(&core, &core.keys.voucher(v).stock).await, Some(0));
    let distinct: i64 =
        sqlx::query_scalar("SELECT count(DISTINCT user_id) FROM orders WHERE voucher_id = $1")
            .bind(v.get())
            .fetch_one(&core.db)
            .await
            .expect("count");
    assert_eq!(distinct, 100);
    for (u, id) in admitted {
        let s = sale::order_status(&core, u, id)
            .await
            .expect("status")
            .expect("found");
        assert_eq!(s.status.as_str(), "created");
    }
}

#[sqlx::test]
async fn one_shopper_firing_two_hundred_buys_gets_one_order(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 1).await[0];
    let v = voucher(&core, 50, 60, 3600).await;
    let tasks: Vec<_> = (0..200)
        .map(|_| {
            let core = core.clone();
            tokio::spawn(async move { sale::buy(&core, u, v).await })
        })
        .collect();
    let mut ok = 0;
    for t in tasks {
        match t.await.expect("task") {
            Ok(_) => ok += 1,
            Err(BuyError::AlreadyBought(_)) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    assert_eq!(ok, 1);
    drain(&core).await;
    assert_eq!(written(&core, v).await, 1);
    assert_stock_conserved(&core, v, 50).await;
}

#[sqlx::test]
async fn a_worker_that_dies_before_its_commit_loses_nothing(db: PgPool) {
    let core = core(db, &[]).await;
    let shoppers = users(&core, 20).await;
    let v = voucher(&core, 20, 60, 3600).await;
    let mut ids = Vec::new();
    for u in &shoppers {
        ids.push((*u, sale::buy(&core, *u, v).await.expect("admitted")));
    }
    // Read the batch, then "crash": never write it.
    let mut doomed = Worker::new(core.clone(), "doomed").await.expect("worker");
    assert_eq!(doomed.read_new(None).await.expect("read").len(), 20);
    drop(doomed);
    let report = heir_drains(&core).await;
    assert_eq!(report.written, 20);
    for (u, id) in ids {
        let s = sale::order_status(&core, u, id)
            .await
            .expect("status")
            .expect("found");
        assert_eq!(s.status.as_str(), "created");
    }
    assert_stock_conserved(&core, v, 20).await;
}

/// Past the reclaim bound (200 ms in these tests), a new worker drains what a dead one left.
async fn heir_drains(core: &seckill::Core) -> seckill::jobs::order_writer::WorkerReport {
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    Worker::new(core.clone(), "heir")
        .await
        .expect("worker")
        .drain()
        .await
        .expect("drain")
}

/// Hands `batch`'s entries of `stream` to "doomed" as if delivered ten times (past
/// SECKILL_MAX_DELIVERIES, 3 in these tests): what a settling that kept failing leaves.
async fn past_the_delivery_limit(
    core: &seckill::Core,
    stream: &str,
    batch: &[seckill::jobs::order_writer::Delivery],
) {
    let mut claim = redis::cmd("XCLAIM");
    claim
        .arg(stream)
        .arg(seckill::testing::keys::ORDER_GROUP)
        .arg("doomed")
        .arg(0);
    for d in batch {
        claim.arg(&d.entry_id);
    }
    let mut c = core.redis.clone();
    let _: redis::Value = claim
        .arg("RETRYCOUNT")
        .arg(10)
        .query_async(&mut c)
        .await
        .expect("XCLAIM");
}

/// A sale of `n` units bought by `n` shoppers whose orders a worker ("doomed") read and
/// committed to PostgreSQL, then died before settling them: the sale and the deliveries.
async fn committed_not_settled(
    core: &seckill::Core,
    n: usize,
) -> (
    seckill::domain::VoucherId,
    Vec<seckill::jobs::order_writer::Delivery>,
) {
    let shoppers = users(core, n).await;
    let v = voucher(core, i64::try_from(n).expect("n"), 60, 3600).await;
    for u in &shoppers {
        sale::buy(core, *u, v).await.expect("admitted");
    }
    let mut doomed = Worker::new(core.clone(), "doomed").await.expect("worker");
    let batch = doomed.read_new(None).await.expect("read");
    let orders: Vec<_> = batch
        .iter()
        .map(|d| *d.order.as_ref().expect("decodes"))
        .collect();
    store::orders::write_batch(&core.db, &orders, core.config.payments.pay_within)
        .await
        .expect("commit");
    (v, batch)
}

#[sqlx::test]
async fn a_worker_that_dies_after_its_commit_is_not_written_twice(db: PgPool) {
    let core = core(db, &[]).await;
    // Commit, then "crash" before the acknowledgement.
    let (v, _) = committed_not_settled(&core, 10).await;
    assert_eq!(written(&core, v).await, 10);
    let report = heir_drains(&core).await;
    assert_eq!(
        report.written, 10,
        "redelivered orders are reported written"
    );
    assert_eq!(written(&core, v).await, 10, "no second row");
    assert_stock_conserved(&core, v, 10).await;
    assert_eq!(
        xlen(&core, &core.keys.voucher(v).orders).await,
        0,
        "acknowledged entries trimmed"
    );
}

#[sqlx::test]
async fn an_order_written_is_never_dead_lettered_however_often_its_settling_failed(db: PgPool) {
    let core = core(db, &[]).await;
    let (v, batch) = committed_not_settled(&core, 4).await;
    // Its settling failed delivery after delivery (a store out of reach, a sale being
    // reconciled): the entries are past SECKILL_MAX_DELIVERIES (3 here).
    past_the_delivery_limit(&core, &core.keys.voucher(v).orders, &batch).await;
    let report = heir_drains(&core).await;
    assert_eq!(report.written, 4, "settled as written: {report:?}");
    assert_eq!(
        report.dead_lettered, 0,
        "no unit given back for a written order"
    );
    assert_eq!(written(&core, v).await, 4);
    assert_stock_conserved(&core, v, 4).await;
}

#[sqlx::test]
async fn an_order_refused_sold_out_whose_settling_kept_failing_gives_back_no_unit(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 1).await[0];
    let v = voucher(&core, 3, 60, 3600).await;
    sale::buy(&core, u, v).await.expect("admitted");
    let k = core.keys.voucher(v);
    assert_eq!(redis_i64(&core, &k.stock).await, Some(2));
    // PostgreSQL has no unit left for it (Redis admitted past its count): the write decides
    // `sold_out`, then the worker dies before settling, delivery after delivery.
    sqlx::query("UPDATE vouchers SET stock = 0 WHERE id = $1")
        .bind(v.get())
        .execute(&core.db)
        .await
        .expect("update");
    let mut doomed = Worker::new(core.clone(), "doomed").await.expect("worker");
    let batch = doomed.read_new(None).await.expect("read");
    let orders: Vec<_> = batch
        .iter()
        .map(|d| *d.order.as_ref().expect("decodes"))
        .collect();
    store::orders::write_batch(&core.db, &orders, core.config.payments.pay_within)
        .await
        .expect("commit");
    past_the_delivery_limit(&core, &k.orders, &batch).await;
    let report = heir_drains(&core).await;
    assert_eq!(report.dead_lettered, 1, "{report:?}");
    // Settled as PostgreSQL decided it: the buyer released, no unit back, no dead letter.
    assert_eq!(
        redis_i64(&core, &k.stock).await,
        Some(2),
        "no unit PostgreSQL never counted"
    );
    assert_eq!(xlen(&core, &k.dead).await, 0);
    sale::buy(&core, u, v)
        .await
        .expect("the shopper may buy again");
}

#[sqlx::test]
async fn giving_up_on_an_order_waits_for_a_worker_still_writing_it(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 1).await[0];
    let v = voucher(&core, 2, 60, 3600).await;
    let id = sale::buy(&core, u, v).await.expect("admitted");
    let k = core.keys.voucher(v);
    // A worker read it, and its deliveries went past the limit (its settling kept failing).
    let mut doomed = Worker::new(core.clone(), "doomed").await.expect("worker");
    let batch = doomed.read_new(None).await.expect("read");
    past_the_delivery_limit(&core, &k.orders, &batch[..1]).await;
    // Another consumer is writing it right now, under the voucher's row lock, not committed.
    let mut writer = core.db.begin().await.expect("begin");
    sqlx::query("SELECT 1 FROM vouchers WHERE id = $1 FOR UPDATE")
        .bind(v.get())
        .execute(&mut *writer)
        .await
        .expect("lock");
    sqlx::query(
        "INSERT INTO orders (id, voucher_id, user_id, admitted_at, pay_by, status)
         VALUES ($1, $2, $3, now(), now() + interval '15 minutes', 'created')",
    )
    .bind(id.as_i64())
    .bind(v.get())
    .bind(u.get())
    .execute(&mut *writer)
    .await
    .expect("insert");
    sqlx::query("UPDATE vouchers SET stock = stock - 1 WHERE id = $1")
        .bind(v.get())
        .execute(&mut *writer)
        .await
        .expect("stock");
    // The heir gives up on it meanwhile, and the writer commits.
    let heir = tokio::spawn({
        let core = core.clone();
        async move { heir_drains(&core).await }
    });
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    writer.commit().await.expect("commit");
    let report = heir.await.expect("heir");
    // Written once, never also failed with its unit given back.
    assert_eq!((report.written, report.dead_lettered), (1, 0), "{report:?}");
    let failed: i64 = sqlx::query_scalar("SELECT count(*) FROM order_failures WHERE id = $1")
        .bind(id.as_i64())
        .fetch_one(&core.db)
        .await
        .expect("count");
    assert_eq!(failed, 0);
    assert_stock_conserved(&core, v, 2).await;
}

#[sqlx::test]
async fn a_poison_entry_goes_to_the_dead_letters_and_gives_back(db: PgPool) {
    let core = core(db, &[]).await;
    let real = users(&core, 1).await[0];
    let v = voucher(&core, 5, 60, 3600).await;
    // A user that does not exist in PostgreSQL: its insert violates the foreign key every time.
    let ghost = seckill::domain::UserId::try_from(987_654_321).expect("id");
    let poison = sale::buy(&core, ghost, v).await.expect("admitted");
    let good = sale::buy(&core, real, v).await.expect("admitted");
    let k = core.keys.voucher(v);
    assert_eq!(redis_i64(&core, &k.stock).await, Some(3));

    let mut w = Worker::new(core.clone(), "w").await.expect("worker");
    let mut dead = 0;
    for _ in 0..20 {
        let r = w.drain().await.expect("drain");
        dead += r.dead_lettered;
        if dead > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    }
    assert_eq!(dead, 1, "dead-lettered after the delivery limit");
    assert_eq!(xlen(&core, &k.dead).await, 1);
    assert_eq!(
        redis_i64(&core, &k.stock).await,
        Some(4),
        "its unit went back"
    );
    let mut c = core.redis.clone();
    let is_buyer: bool = redis::cmd("HEXISTS")
        .arg(&k.buyers)
        .arg(ghost.get())
        .query_async(&mut c)
        .await
        .expect("HEXISTS");
    assert!(!is_buyer, "its buyer was released");
    let s = sale::order_status(&core, ghost, poison)
        .await
        .expect("status")
        .expect("found");
    assert!(matches!(
        s.status,
        OrderStatus::Failed {
            reason: FailureReason::DeadLetter { .. }
        }
    ));
    let s = sale::order_status(&core, real, good)
        .await
        .expect("status")
        .expect("found");
    assert_eq!(
        s.status.as_str(),
        "created",
        "the good order was not held up"
    );
    assert_stock_conserved(&core, v, 5).await;
}

#[sqlx::test]
async fn after_redis_loses_a_sale_the_restore_cannot_oversell(db: PgPool) {
    let core = core(db, &[]).await;
    let shoppers = users(&core, 30).await;
    let v = voucher(&core, 20, 60, 3600).await;
    for u in &shoppers[..8] {
        sale::buy(&core, *u, v).await.expect("admitted");
    }
    drain(&core).await;
    for u in &shoppers[8..12] {
        sale::buy(&core, *u, v).await.expect("admitted");
    }
    // Lose the stock key (a partial loss keeps the queue; the rebuild must count it).
    let k = core.keys.voucher(v);
    let outcome = lose_and_restore(&core, v, &[&k.stock, &k.buyers]).await;
    assert_eq!(
        outcome,
        seckill::testing::scripts::PreloadOutcome::Rebuilt { stock: 8 },
        "20 - 8 written - 4 queued"
    );
    // Earlier buyers (written and queued) are still refused.
    assert!(matches!(
        sale::buy(&core, shoppers[0], v).await,
        Err(BuyError::AlreadyBought(_))
    ));
    assert!(matches!(
        sale::buy(&core, shoppers[9], v).await,
        Err(BuyError::AlreadyBought(_))
    ));
    sells_exactly_the_rest(&core, v, &shoppers[12..], 8, 20).await;
}

/// `others` buy what the sale has left: exactly `left` are admitted, then every order is
/// written and the sale's `total` units are all accounted for.
async fn sells_exactly_the_rest(
    core: &seckill::Core,
    v: seckill::domain::VoucherId,
    others: &[seckill::domain::UserId],
    left: usize,
    total: i64,
) {
    let mut admitted = 0;
    for u in others {
        if sale::buy(core, *u, v).await.is_ok() {
            admitted += 1;
        }
    }
    assert_eq!(admitted, left);
    drain(core).await;
    assert_eq!(written(core, v).await, total);
    assert_stock_conserved(core, v, total).await;
}

#[sqlx::test]
async fn a_sale_missing_from_redis_is_restored_on_the_next_buy(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 3, 60, 3600).await;
    sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    // Flush everything of this test's prefix.
    let mut c = core.redis.clone();
    let keys: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}*", core.keys.prefix().as_str()))
        .query_async(&mut c)
        .await
        .expect("KEYS");
    let _: () = redis::cmd("DEL")
        .arg(&keys)
        .query_async(&mut c)
        .await
        .expect("DEL");

    assert!(matches!(
        sale::buy(&core, u[0], v).await,
        Err(BuyError::AlreadyBought(_))
    ));
    sale::buy(&core, u[1], v)
        .await
        .expect("admitted after restore");
    assert_eq!(redis_i64(&core, &core.keys.voucher(v).stock).await, Some(1));
}

#[sqlx::test]
async fn a_refresh_never_rebuilds_a_sale_whose_stock_vanished_from_a_light_snapshot(db: PgPool) {
    use seckill::testing::scripts::{self, PreloadInput, PreloadMode, PreloadOutcome};
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 3, 60, 3600).await;
    sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    // Redis loses the stock between a preload's check that it is there and its script (a
    // restart without data): the script has only the light snapshot, no buyers, no moves.
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(&k.stock)
        .arg(&k.buyers)
        .query_async(&mut c)
        .await
        .expect("DEL");
    let now = chrono::Utc::now().timestamp_millis();
    let light = PreloadInput {
        begins_ms: now - 60_000,
        ends_ms: now + 3_600_000,
        total_stock: 3,
        db_stock: 2,
        moves: &[],
        buyers: &[],
        cancelled: &[],
        entries_ms: None,
        draw: None,
    };
    let outcome = scripts::preload(&mut c, &k, PreloadMode::Refresh, &light)
        .await
        .expect("preload");
    assert_eq!(outcome, PreloadOutcome::Absent);
    assert_eq!(
        redis_i64(&core, &k.stock).await,
        None,
        "nothing rebuilt without the buyers"
    );
    // The next buy has the sale restored from the full snapshot: the buyer is still one.
    assert!(matches!(
        sale::buy(&core, u[0], v).await,
        Err(BuyError::AlreadyBought(_))
    ));
    sale::buy(&core, u[1], v).await.expect("admitted");
    assert_eq!(redis_i64(&core, &k.stock).await, Some(1));
}

#[sqlx::test]
async fn a_reconcile_frees_the_shopper_of_an_order_cancelled_before_it_was_settled(db: PgPool) {
    let core = core(db, &[]).await;
    // One unit, bought; the worker wrote the order and died before settling it.
    let (v, batch) = committed_not_settled(&core, 1).await;
    let order = *batch[0].order.as_ref().expect("decodes");
    // The shopper cancels it (PostgreSQL, then the unit back in Redis)...
    seckill::orders::checkout::cancel(&core, order.user, order.order)
        .await
        .expect("cancelled");
    // ...and Redis restarts from its append-only file: the sale is checked again under the
    // new master, its order still queued there.
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    let _: () = redis::cmd("HSET")
        .arg(&k.sale)
        .arg("master")
        .arg("a-master-before-the-restart")
        .query_async(&mut c)
        .await
        .expect("HSET");
    let queued: i64 = redis::cmd("HLEN")
        .arg(&k.queued)
        .query_async(&mut c)
        .await
        .expect("HLEN");
    assert_eq!(queued, 1, "the cancelled order is still queued here");

    // The shopper buys again: the reconciled sale holds the unit that came back, and them as
    // nobody's buyer.
    let again = sale::buy(&core, order.user, v).await;
    assert!(
        matches!(again, Ok(id) if id != order.order),
        "a new order, not the cancelled one: {again:?}"
    );
    heir_drains(&core).await;
    assert_stock_conserved(&core, v, 1).await;
}

#[sqlx::test]
async fn a_batch_in_hand_while_redis_lost_the_sale_is_counted_by_the_restore(db: PgPool) {
    let core = core(db, &[]).await;
    let shoppers = users(&core, 10).await;
    let v = voucher(&core, 10, 60, 3600).await;
    for u in &shoppers[..4] {
        sale::buy(&core, *u, v).await.expect("admitted");
    }
    // A worker reads the four orders; before it writes them, Redis loses everything it held of
    // the sale (a restart with nothing on disk), and a buy restores the sale from PostgreSQL,
    // which holds none of the four yet.
    let mut slow = Worker::new(core.clone(), "slow").await.expect("worker");
    let batch = slow.read_new(None).await.expect("read");
    assert_eq!(batch.len(), 4);
    let k = core.keys.voucher(v);
    let outcome = lose_and_restore(
        &core,
        v,
        &[&k.sale, &k.stock, &k.buyers, &k.queued, &k.orders],
    )
    .await;
    assert_eq!(
        outcome,
        seckill::testing::scripts::PreloadOutcome::Rebuilt { stock: 10 }
    );
    // The worker writes and settles the batch it held.
    let report = slow.handle(batch).await.expect("handled");
    assert_eq!(report.written, 4);
    // The sale counts them: the four shoppers hold their orders and six units are left.
    assert!(
        matches!(
            sale::buy(&core, shoppers[0], v).await,
            Err(BuyError::AlreadyBought(_))
        ),
        "the first shopper's written order is theirs"
    );
    sells_exactly_the_rest(&core, v, &shoppers[4..], 6, 10).await;
}

#[sqlx::test]
async fn a_batch_written_while_a_restore_reads_its_snapshot_is_counted(db: PgPool) {
    let core = core(db, &[]).await;
    let shoppers = users(&core, 10).await;
    let v = voucher(&core, 10, 60, 3600).await;
    for u in &shoppers[..4] {
        sale::buy(&core, *u, v).await.expect("admitted");
    }
    let mut slow = Worker::new(core.clone(), "slow").await.expect("worker");
    let batch = slow.read_new(None).await.expect("read");
    // Redis loses the sale; a restore reads PostgreSQL's snapshot (none of the four yet)...
    let k = core.keys.voucher(v);
    del(&core, &[&k.sale, &k.stock, &k.buyers, &k.queued, &k.orders]).await;
    let stale = store::vouchers::restore_snapshot(&core.db, v)
        .await
        .expect("snapshot");
    assert!(stale.buyers.is_empty());
    // ...while the worker writes and settles its batch, before the restore's script runs.
    assert_eq!(slow.handle(batch).await.expect("handled").written, 4);
    let stored = store::vouchers::get(&core.db, v)
        .await
        .expect("get")
        .expect("exists");
    let mut c = core.redis.clone();
    seckill::testing::scripts::preload(
        &mut c,
        &k,
        seckill::testing::scripts::PreloadMode::Load,
        &seckill::testing::scripts::PreloadInput {
            begins_ms: stored.window.begins_at().timestamp_millis(),
            ends_ms: stored.window.ends_at().timestamp_millis(),
            total_stock: stale.total_stock,
            db_stock: stale.db_stock,
            moves: &stale.moves,
            buyers: &stale.buyers,
            cancelled: &stale.cancelled,
            entries_ms: None,
            draw: stale.draw,
        },
    )
    .await
    .expect("the restore's script");
    // The four are counted all the same.
    assert!(matches!(
        sale::buy(&core, shoppers[0], v).await,
        Err(BuyError::AlreadyBought(_))
    ));
    sells_exactly_the_rest(&core, v, &shoppers[4..], 6, 10).await;
}

#[sqlx::test]
async fn an_edit_killed_before_its_commit_is_undone_in_redis_by_the_next_preload(db: PgPool) {
    let core = core(db, &[]).await;
    // Opens in an hour with 10 units.
    let v = voucher(&core, 10, -3600, 7200).await;
    let stored = store::vouchers::get(&core.db, v)
        .await
        .expect("get")
        .expect("exists");
    // An admin's edit to 30 units, opening in ten minutes, as a draw whose entries open in
    // five, took effect in Redis, and its process was killed before PostgreSQL committed it.
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    let soon = (chrono::Utc::now() + chrono::Duration::minutes(10)).timestamp_millis();
    let revised = seckill::testing::scripts::revise(
        &mut c,
        &k,
        &seckill::testing::scripts::Revision {
            begins_ms: soon,
            ends_ms: stored.window.ends_at().timestamp_millis(),
            offered: 30,
            delta: 20,
            entries_ms: Some(soon - 300_000),
        },
    )
    .await
    .expect("revise");
    assert_eq!(revised, seckill::testing::scripts::Revised::Applied);
    // The instance that takes over preloads the sale: Redis is PostgreSQL's sale again.
    seckill::catalog::preload(&core, &stored)
        .await
        .expect("preload");
    assert_eq!(
        redis_i64(&core, &k.stock).await,
        Some(10),
        "PostgreSQL's 10 units"
    );
    let begins: i64 = redis::cmd("HGET")
        .arg(&k.sale)
        .arg("begins_ms")
        .query_async(&mut c)
        .await
        .expect("HGET");
    assert_eq!(begins, stored.window.begins_at().timestamp_millis());
    let entries: Option<i64> = redis::cmd("HGET")
        .arg(&k.sale)
        .arg("entries_ms")
        .query_async(&mut c)
        .await
        .expect("HGET");
    assert_eq!(entries, None, "first come, as PostgreSQL has it");
}

#[sqlx::test]
async fn attempts_beyond_the_limit_in_one_second_are_refused_per_sale(db: PgPool) {
    let core = core(db, &[("SECKILL_BUYS_PER_SECOND", "3")]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 1, 60, 3600).await;
    let other = voucher(&core, 1, 60, 3600).await;
    // Start early in a Redis-clock second, so the burst below stays inside it.
    let mut c = core.redis.clone();
    let (_, micros): (i64, i64) = redis::cmd("TIME").query_async(&mut c).await.expect("TIME");
    if micros > 800_000 {
        tokio::time::sleep(std::time::Duration::from_micros(1_000_050 - micros as u64)).await;
    }
    let mut outcomes = Vec::new();
    for _ in 0..8 {
        outcomes.push(sale::buy(&core, u[0], v).await);
    }
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(outcomes[1..3]
        .iter()
        .all(|r| matches!(r, Err(BuyError::AlreadyBought(_)))));
    assert!(
        outcomes[3..]
            .iter()
            .all(|r| matches!(r, Err(BuyError::RateLimited))),
        "{outcomes:?}"
    );
    // The counter is this shopper's, on this sale.
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(BuyError::SoldOut)
    ));
    assert!(sale::buy(&core, u[0], other).await.is_ok());
    let ttl: i64 = redis::cmd("PTTL")
        .arg(core.keys.voucher(v).rate_of(u[0]))
        .query_async(&mut c)
        .await
        .expect("PTTL");
    assert!(
        (0..=1000).contains(&ttl),
        "expires at the end of the second: {ttl}"
    );
    // The next second starts a new count.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    assert!(matches!(
        sale::buy(&core, u[0], v).await,
        Err(BuyError::AlreadyBought(_))
    ));
}

#[sqlx::test]
async fn a_repeated_buy_answers_the_order_the_shopper_already_holds(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let first = sale::buy(&core, u[0], v).await.expect("admitted");
    let repeat = |r: Result<OrderId, BuyError>| match r {
        Err(BuyError::AlreadyBought(o)) => Some(o),
        _ => None,
    };
    assert_eq!(
        repeat(sale::buy(&core, u[0], v).await),
        Some(first),
        "while queued"
    );
    drain(&core).await;
    assert_eq!(
        repeat(sale::buy(&core, u[0], v).await),
        Some(first),
        "once written"
    );

    // Redis loses the sale; the restore from PostgreSQL brings the shopper's order back with it.
    let k = core.keys.voucher(v);
    lose_and_restore(&core, v, &[&k.stock, &k.buyers]).await;
    assert_eq!(
        repeat(sale::buy(&core, u[0], v).await),
        Some(first),
        "after a restore"
    );

    // Repeats took no unit: one written, four left.
    let second = sale::buy(&core, u[1], v).await.expect("another shopper");
    assert_ne!(second, first);
    drain(&core).await;
    assert_eq!(written(&core, v).await, 2);
    assert_stock_conserved(&core, v, 5).await;
}

/// What the admission script does for an order, done by hand: a day counter that went back
/// hands `order` to `user` although it is taken.
async fn admit_under(
    core: &seckill::Core,
    v: seckill::domain::VoucherId,
    user: seckill::domain::UserId,
    order: OrderId,
) {
    let k = core.keys.voucher(v);
    let hex = order.to_redis_hex();
    let mut c = core.redis.clone();
    let _: () = redis::pipe()
        .cmd("DECR")
        .arg(&k.stock)
        .ignore()
        .cmd("HSET")
        .arg(&k.buyers)
        .arg(user.get())
        .arg(&hex)
        .ignore()
        .cmd("HSET")
        .arg(&k.queued)
        .arg(&hex)
        .arg(user.get())
        .ignore()
        .cmd("XADD")
        .arg(&k.orders)
        .arg("*")
        .arg("order")
        .arg(&hex)
        .arg("user")
        .arg(user.get())
        .arg("voucher")
        .arg(v.get())
        .ignore()
        .query_async(&mut c)
        .await
        .expect("admit by hand");
}

#[sqlx::test]
async fn a_reused_order_id_is_refused_as_a_duplicate_not_taken_for_the_written_order(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let first = sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    admit_under(&core, v, u[1], first).await;

    let report = drain(&core).await;
    assert_eq!((report.written, report.rejected), (0, 1), "{report:?}");
    let status = |user| {
        let core = core.clone();
        async move {
            sale::order_status(&core, user, first)
                .await
                .expect("status")
                .map(|s| s.status)
        }
    };
    assert_eq!(
        status(u[0]).await.map(OrderStatus::as_str),
        Some("created"),
        "the written order stands"
    );
    assert_eq!(
        status(u[1]).await,
        Some(OrderStatus::Failed {
            reason: FailureReason::DuplicateId
        }),
        "the second one is failed, not lost"
    );
    assert_eq!(
        xlen(&core, &core.keys.voucher(v).dead).await,
        1,
        "visible as a dead letter"
    );
    assert_stock_conserved(&core, v, 5).await;
    let again = sale::buy(&core, u[1], v)
        .await
        .expect("its shopper may buy again");
    assert_ne!(again, first);
}

#[sqlx::test]
async fn a_restored_sale_puts_the_day_counter_past_the_ids_postgres_holds(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let first = sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    // Redis loses the sale and the day's counter (an AOF that missed its last second).
    let k = core.keys.voucher(v);
    let counter = core
        .keys
        .order_counter(Shard::of_order(first), first.issued_at().date_naive());
    lose_and_restore(&core, v, &[&k.stock, &k.buyers, &counter]).await;
    assert!(
        redis_i64(&core, &counter).await.unwrap_or(0)
            >= i64::from(first.sequence() & SHARD_SEQUENCE_MAX),
        "the shard's counter is past the written order's count"
    );
    let next = sale::buy(&core, u[1], v).await.expect("admitted");
    assert!(next.sequence() > first.sequence() || next.seconds() > first.seconds());
}

#[sqlx::test]
async fn an_admission_steps_past_an_id_still_queued_on_its_sale(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let k = core.keys.voucher(v);
    let mut c = core.redis.clone();
    // The next draw will be sequence 1001 of the current day, in one of the next few Redis
    // seconds: mark each of those IDs as still queued (a counter that went back to 1000).
    let (now, _): (i64, i64) = redis::cmd("TIME").query_async(&mut c).await.expect("TIME");
    let today = chrono::DateTime::from_timestamp(now, 0)
        .expect("now")
        .date_naive();
    let _: () = redis::cmd("SET")
        .arg(core.keys.order_counter(Shard::of_voucher(v), today))
        .arg(1_000)
        .query_async(&mut c)
        .await
        .expect("SET");
    let taken: Vec<String> = (now..now + 3)
        .map(|secs| {
            let since_epoch =
                u32::try_from(secs - seckill::domain::ORDER_EPOCH_UNIX).expect("secs");
            let seq = Shard::of_voucher(v).sequence(1_001).expect("in range");
            OrderId::from_parts(since_epoch, seq)
                .expect("id")
                .to_redis_hex()
        })
        .collect();
    for hex in &taken {
        let _: () = redis::cmd("HSET")
            .arg(&k.queued)
            .arg(hex)
            .arg(u[0].get())
            .query_async(&mut c)
            .await
            .expect("HSET");
    }
    let order = sale::buy(&core, u[1], v).await.expect("admitted");
    assert_eq!(
        Some(order.sequence()),
        Shard::of_voucher(v).sequence(1_002),
        "stepped past the queued ID"
    );
    // Take the planted entries away again, then the sale is whole.
    for hex in &taken {
        let _: () = redis::cmd("HDEL")
            .arg(&k.queued)
            .arg(hex)
            .query_async(&mut c)
            .await
            .expect("HDEL");
    }
    assert_eq!(drain(&core).await.written, 1);
    assert_stock_conserved(&core, v, 5).await;
}

#[sqlx::test]
async fn a_shoppers_order_on_a_voucher_is_found_queued_written_and_after_redis_forgets_it(
    db: PgPool,
) {
    let core = core(db, &[]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 5, 60, 3600).await;
    assert_eq!(sale::order_for(&core, u[0], v).await.expect("read"), None);
    let order = sale::buy(&core, u[0], v).await.expect("admitted");
    let found = |user| {
        let core = core.clone();
        async move {
            sale::order_for(&core, user, v)
                .await
                .expect("read")
                .map(|o| (o.order, o.status))
        }
    };
    assert_eq!(found(u[0]).await, Some((order, OrderStatus::Queued)));
    assert_eq!(found(u[1]).await, None, "not someone else's");
    drain(&core).await;
    assert_eq!(
        found(u[0]).await.map(|(o, s)| (o, s.as_str())),
        Some((order, "created"))
    );
    // A retired sale (`lua/retire.lua` deletes its state, the sale hash with the buyers): Redis
    // no longer knows the buyer; PostgreSQL does.
    let mut c = core.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(&core.keys.voucher(v).sale)
        .arg(&core.keys.voucher(v).buyers)
        .query_async(&mut c)
        .await
        .expect("DEL");
    assert_eq!(
        found(u[0]).await.map(|(o, s)| (o, s.as_str())),
        Some((order, "created"))
    );
}
