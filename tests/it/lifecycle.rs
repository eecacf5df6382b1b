//! After the rush, on the real Redis and PostgreSQL: paying before the deadline, cancelling,
//! the deadline's sweep, units going back on sale exactly once (also across a crash between
//! the two stores, and a Redis that lost the sale), and an admin ending a sale or adding stock.

use std::time::Duration;

use crate::common::*;
use seckill::{
    catalog::admin::{self as sale_admin, SaleAdminError},
    domain::{Canceller, IdempotencyKey, OrderStatus, Refund, Stock, VoucherId},
    jobs::sweeper::{self, SweepOutcome, SweepReport},
    orders::checkout::{self, CheckoutError},
    orders::restock,
    sale::{self, BuyError},
    testing::store,
    Core,
};
use sqlx::PgPool;

fn key(k: &str) -> IdempotencyKey {
    IdempotencyKey::try_from(k).expect("key")
}

async fn status(
    core: &Core,
    u: seckill::domain::UserId,
    o: seckill::domain::OrderId,
) -> OrderStatus {
    sale::order_status(core, u, o)
        .await
        .expect("status")
        .expect("found")
        .status
}

async fn swept(core: &Core) -> SweepReport {
    match sweeper::sweep_once(core).await.expect("sweep") {
        SweepOutcome::Ran(r) => r,
        other => panic!("expected a run, got {other:?}"),
    }
}

async fn redis_stock(core: &Core, v: VoucherId) -> i64 {
    redis_i64(core, &core.keys.voucher(v).stock)
        .await
        .expect("stock key")
}

#[sqlx::test]
async fn a_written_order_awaits_payment_and_is_paid_once_through_its_hosted_payment(db: PgPool) {
    let core = core(db, &[("SECKILL_PAY_WITHIN_MS", "600000")]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 3, 60, 3600).await;
    let order = sale::buy(&core, u[0], v).await.expect("admitted");
    assert!(
        matches!(
            checkout::pay(&core, u[0], order).await,
            Err(CheckoutError::StillQueued)
        ),
        "a queued order cannot be paid yet"
    );
    drain(&core).await;
    let OrderStatus::Created { pay_by, .. } = status(&core, u[0], order).await else {
        panic!("awaiting payment");
    };
    let left = pay_by - chrono::Utc::now();
    assert!(
        left > chrono::Duration::seconds(590) && left <= chrono::Duration::seconds(600),
        "pay_by is SECKILL_PAY_WITHIN_MS after the write: {left}"
    );
    assert!(
        matches!(
            checkout::pay(&core, u[1], order).await,
            Err(CheckoutError::NotFound)
        ),
        "someone else's order is unknown to them"
    );
    // Pay now opens the dev provider's "hosted page", which sends the shopper straight back;
    // the order is paid once the provider says so (here, on the return's lookup).
    let start = checkout::pay(&core, u[0], order).await.expect("opened");
    assert_eq!(
        start.redirect_url,
        format!("/orders/{order}?payment=return")
    );
    assert_eq!(
        checkout::pay(&core, u[0], order).await.expect("again"),
        start,
        "a second click opens no second payment"
    );
    assert!(matches!(
        status(&core, u[0], order).await,
        OrderStatus::Created { .. }
    ));
    checkout::returned(&core, u[0], order).await.expect("back");
    assert_eq!(status(&core, u[0], order).await, OrderStatus::Paid);
    assert!(matches!(
        checkout::pay(&core, u[0], order).await,
        Err(CheckoutError::AlreadyPaid)
    ));
    assert!(
        matches!(
            checkout::cancel(&core, u[0], order).await,
            Err(CheckoutError::AlreadyPaid)
        ),
        "a paid order is not cancelled"
    );
    let reference: String = sqlx::query_scalar("SELECT payment_ref FROM orders WHERE id = $1")
        .bind(order.as_i64())
        .fetch_one(&core.db)
        .await
        .expect("ref");
    assert!(reference.starts_with("dev_pay_"), "{reference}");
    assert_stock_conserved(&core, v, 3).await;
}

#[sqlx::test]
async fn a_cancelled_order_gives_its_unit_back_once_and_its_shopper_may_buy_again(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 1).await;
    let v = voucher(&core, 2, 60, 3600).await;
    let order = sale::buy(&core, u[0], v).await.expect("admitted");
    drain(&core).await;
    assert_eq!(redis_stock(&core, v).await, 1);
    checkout::cancel(&core, u[0], order)
        .await
        .expect("cancelled");
    assert_eq!(
        status(&core, u[0], order).await,
        OrderStatus::Cancelled {
            cancelled_by: Canceller::Shopper,
            refund: Refund::None,
        }
    );
    assert_eq!(redis_stock(&core, v).await, 2, "the unit is back in Redis");
    assert_eq!(db_stock(&core, v).await, 2, "and in PostgreSQL");
    checkout::cancel(&core, u[0], order)
        .await
        .expect("a second cancel is a no-op");
    assert_eq!(redis_stock(&core, v).await, 2, "given back once");
    assert!(
        matches!(
            checkout::pay(&core, u[0], order).await,
            Err(CheckoutError::Cancelled)
        ),
        "a late payment never revives a cancelled order"
    );
    assert_eq!(sale::order_for(&core, u[0], v).await.expect("read"), None);
    let again = sale::buy(&core, u[0], v).await.expect("may buy again");
    assert_ne!(again, order);
    drain(&core).await;
    assert_eq!(status(&core, u[0], again).await.as_str(), "created");
    assert_stock_conserved(&core, v, 2).await;
}

#[sqlx::test]
async fn an_unpaid_order_is_cancelled_at_its_deadline_and_another_shopper_buys_the_unit(
    db: PgPool,
) {
    let core = core(db, &[("SECKILL_PAY_WITHIN_MS", "300")]).await;
    let u = users(&core, 2).await;
    let v = voucher(&core, 1, 60, 3600).await;
    let order = sale::buy(&core, u[0], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(BuyError::SoldOut)
    ));
    drain(&core).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        matches!(
            checkout::pay(&core, u[0], order).await,
            Err(CheckoutError::Expired)
        ),
        "past the deadline a payment is refused, even before the sweep"
    );
    let report = swept(&core).await;
    assert_eq!(report.expired, 1);
    assert_eq!(
        status(&core, u[0], order).await,
        OrderStatus::Cancelled {
            cancelled_by: Canceller::Deadline,
            refund: Refund::None,
        }
    );
    assert_eq!(swept(&core).await.expired, 0, "cancelled once");
    let theirs = sale::buy(&core, u[1], v)
        .await
        .expect("the returned unit is on sale again");
    drain(&core).await;
    assert_eq!(status(&core, u[1], theirs).await.as_str(), "created");
    assert!(matches!(
        sale::buy(&core, u[0], v).await,
        Err(BuyError::SoldOut)
    ));
    // The second order expires too; let it be paid in time instead.
    checkout::pay(&core, u[1], theirs).await.ok();
    swept(&core).await;
    assert_stock_conserved(&core, v, 1).await;
}

#[sqlx::test]
async fn a_crash_between_postgres_and_redis_is_finished_by_the_sweep_and_never_applied_twice(
    db: PgPool,
) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let mut orders = Vec::new();
    for user in &u {
        orders.push(sale::buy(&core, *user, v).await.expect("admitted"));
    }
    drain(&core).await;
    // Cancel the first two in PostgreSQL only: the process "dies" before Redis hears.
    for (user, order) in u.iter().zip(&orders).take(2) {
        let mut tx = core.db.begin().await.expect("tx");
        store::orders::lifecycle::cancel_locked(&mut tx, *order, *user, v, Canceller::Shopper)
            .await
            .expect("cancel");
        tx.commit().await.expect("commit");
    }
    assert_eq!(redis_stock(&core, v).await, 2, "Redis has not heard yet");
    assert_eq!(db_stock(&core, v).await, 4);
    assert_eq!(
        store::moves::pending_count(&core.db).await.expect("count"),
        2
    );
    // Redis loses the sale meanwhile: the restore counts one move (PostgreSQL's stock has it)
    // and the sweep then applies neither twice.
    let k = core.keys.voucher(v);
    lose_and_restore(&core, v, &[&k.stock, &k.moves]).await;
    assert_eq!(redis_stock(&core, v).await, 4, "restored from PostgreSQL");
    let report = swept(&core).await;
    assert_eq!(report.moves_applied, 2, "marked applied");
    assert_eq!(redis_stock(&core, v).await, 4, "not counted twice");
    // Applying a move again (a retry after a crash before marking it) changes nothing.
    let step = store::orders::lifecycle::return_of(orders[0], u[0]);
    restock::apply(&core, v, &step).await.expect("apply");
    assert_eq!(redis_stock(&core, v).await, 4);
    assert_stock_conserved(&core, v, 5).await;

    // Without a state loss: the sweep applies a pending move exactly once.
    let mut tx = core.db.begin().await.expect("tx");
    store::orders::lifecycle::cancel_locked(&mut tx, orders[2], u[2], v, Canceller::Shopper)
        .await
        .expect("cancel");
    tx.commit().await.expect("commit");
    assert_eq!(swept(&core).await.moves_applied, 1);
    assert_eq!(redis_stock(&core, v).await, 5);
    assert_eq!(swept(&core).await.moves_applied, 0);
    assert_stock_conserved(&core, v, 5).await;
}

/// An end PostgreSQL committed is an end, though Redis failed to take it then (its script
/// errors here on a key of the wrong type): the admin is answered the end, not a failure to
/// retry, and the action is recorded done; the sweep ends it in Redis (the test below).
#[sqlx::test]
async fn an_end_that_redis_did_not_take_is_answered_as_an_end(db: PgPool) {
    let core = core(db, &[]).await;
    let admin = admin(&core).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let saved = break_sale_hash(&core, v).await;

    let ended = sale_admin::end_sale(&core, &admin, v).await.expect("ended");
    assert!(ended <= chrono::Utc::now());
    let (ends_at, outcome): (chrono::DateTime<chrono::Utc>, String) = sqlx::query_as(
        "SELECT v.ends_at, a.outcome FROM vouchers v, admin_actions a
         WHERE v.id = $1 AND a.action = 'end sale' AND a.target = $1::text",
    )
    .bind(v.get())
    .fetch_one(&core.db)
    .await
    .expect("the sale and its action");
    assert!(ends_at <= chrono::Utc::now());
    assert_eq!(outcome, "done");

    // Redis's hash back as it was (the end not in it): the sweep's next pass ends it there.
    let sale_hash = core.keys.voucher(v).sale;
    let mut c = core.redis.clone();
    let _: () = redis::pipe()
        .cmd("DEL")
        .arg(&sale_hash)
        .cmd("HSET")
        .arg(&sale_hash)
        .arg(saved.into_iter().collect::<Vec<_>>())
        .query_async(&mut c)
        .await
        .expect("the sale's hash restored");
    assert_eq!(swept(&core).await.ends_repaired, vec![v]);
}

#[sqlx::test]
async fn an_admin_ends_a_sale_at_once_and_a_crash_before_redis_is_repaired(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let admin = admin(&core).await;
    let v = voucher(&core, 5, 60, 3600).await;
    sale::buy(&core, u[0], v).await.expect("admitted");
    sale_admin::end_sale(&core, &admin, v).await.expect("ended");
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(BuyError::Ended)
    ));
    let again = sale_admin::end_sale(&core, &admin, v)
        .await
        .expect("ending an ended sale is a no-op");
    assert!(again <= chrono::Utc::now());
    let unknown = VoucherId::try_from(987_654).expect("id");
    assert!(matches!(
        sale_admin::end_sale(&core, &admin, unknown).await,
        Err(SaleAdminError::NotFound)
    ));
    assert!(matches!(
        sale_admin::add_stock(&core, &admin, v, Stock::try_from(1).expect("1"), None).await,
        Err(SaleAdminError::Ended)
    ));

    // PostgreSQL ended, Redis not (the process died in between): the sweep ends it in Redis.
    let w = voucher(&core, 5, 60, 3600).await;
    let mut tx = core.db.begin().await.expect("tx");
    store::vouchers::end_now(&mut tx, w).await.expect("end");
    tx.commit().await.expect("commit");
    sale::buy(&core, u[1], w)
        .await
        .expect("Redis has not heard: still admits");
    let report = swept(&core).await;
    assert_eq!(report.ends_repaired, vec![w]);
    assert!(matches!(
        sale::buy(&core, u[2], w).await,
        Err(BuyError::Ended)
    ));
    drain(&core).await;
    assert_stock_conserved(&core, v, 5).await;
    assert_stock_conserved(&core, w, 5).await;
}

#[sqlx::test]
async fn stock_added_to_a_sold_out_sale_sells_once_per_key(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 4).await;
    let admin = admin(&core).await;
    let v = voucher(&core, 1, 60, 3600).await;
    sale::buy(&core, u[0], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(BuyError::SoldOut)
    ));
    let two = Stock::try_from(2).expect("2");
    let added = sale_admin::add_stock(&core, &admin, v, two, Some(&key("top-1")))
        .await
        .expect("added");
    // PostgreSQL has not written the first order yet: 1 + 2 unsold there.
    assert_eq!((added.total, added.unsold), (3, 3));
    let repeated = sale_admin::add_stock(&core, &admin, v, two, Some(&key("top-1")))
        .await
        .expect("the same request again");
    assert_eq!(repeated.total, 3, "added once");
    assert_eq!(redis_stock(&core, v).await, 2);
    sale::buy(&core, u[1], v).await.expect("admitted");
    sale::buy(&core, u[2], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[3], v).await,
        Err(BuyError::SoldOut)
    ));
    let big = Stock::try_from(seckill::domain::MAX_STOCK).expect("max");
    assert!(matches!(
        sale_admin::add_stock(&core, &admin, v, big, None).await,
        Err(SaleAdminError::Invalid(_))
    ));
    drain(&core).await;
    assert_stock_conserved(&core, v, 1).await;
}

#[sqlx::test]
async fn a_top_up_key_is_its_sales_own_and_redis_gets_what_postgres_counted(db: PgPool) {
    let core = core(db, &[]).await;
    let admin = admin(&core).await;
    let (a, b) = (
        voucher(&core, 5, 60, 3600).await,
        voucher(&core, 5, 60, 3600).await,
    );
    let units = |n| Stock::try_from(n).expect("units");
    let on_a = sale_admin::add_stock(&core, &admin, a, units(2), Some(&key("shared")))
        .await
        .expect("added to A");
    assert_eq!(on_a.total, 7);
    assert_stock_conserved(&core, a, 5).await;
    // The same key on another sale is that sale's own top-up, in both stores: before, B's
    // Redis stock took the units while PostgreSQL refused the key (remaining 1,005 of 5).
    let on_b = sale_admin::add_stock(&core, &admin, b, units(1_000), Some(&key("shared")))
        .await
        .expect("added to B");
    assert_eq!(on_b.total, 1_005);
    assert_eq!(redis_stock(&core, b).await, 1_005);
    assert_stock_conserved(&core, b, 5).await;
    assert_stock_conserved(&core, a, 5).await;
    // A repeat naming other units adds nothing more, in either store.
    let again = sale_admin::add_stock(&core, &admin, a, units(1_000), Some(&key("shared")))
        .await
        .expect("the same request again");
    assert_eq!(again.total, 7);
    assert_eq!(redis_stock(&core, a).await, 7);
    assert_stock_conserved(&core, a, 5).await;
}

#[sqlx::test]
async fn a_repeated_top_up_is_answered_as_added_after_it_filled_or_the_sale_ended(db: PgPool) {
    let core = core(db, &[]).await;
    let admin = admin(&core).await;
    let v = voucher(&core, 5, 60, 3600).await;
    let to_max = Stock::try_from(seckill::domain::MAX_STOCK - 5).expect("units");
    let first = sale_admin::add_stock(&core, &admin, v, to_max, Some(&key("fill")))
        .await
        .expect("added");
    assert_eq!(first.total, seckill::domain::MAX_STOCK);
    // Its answer was lost; the admin's client sends it again: the units are in, not "past the
    // maximum".
    let again = sale_admin::add_stock(&core, &admin, v, to_max, Some(&key("fill")))
        .await
        .expect("the same request again, at the maximum");
    assert_eq!(again.total, seckill::domain::MAX_STOCK);
    // And once the sale has ended: the units were added, not "the sale has ended".
    sale_admin::end_sale(&core, &admin, v).await.expect("ended");
    let late = sale_admin::add_stock(&core, &admin, v, to_max, Some(&key("fill")))
        .await
        .expect("the same request again, after the end");
    assert_eq!(late.total, seckill::domain::MAX_STOCK);
    // A new request on the ended sale is refused as before.
    assert!(matches!(
        sale_admin::add_stock(&core, &admin, v, to_max, Some(&key("other"))).await,
        Err(SaleAdminError::Ended)
    ));
    drain(&core).await;
    assert_stock_conserved(&core, v, 5).await;
}
