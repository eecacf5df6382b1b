//! What an instance answers from memory (issue #14), on the real Redis and PostgreSQL: a sale
//! that refused everyone is answered without the admission script until a unit comes back
//! (at once on this instance, by pub/sub on the others, by expiry at the latest), a shopper
//! holding an order still learns it, from the sale's buyers read once (issue #25).

use std::time::Duration;

use crate::common::*;
use seckill::{
    orders::checkout,
    sale::{self, BuyError},
    testing::scripts::AdmissionOutcome,
};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

#[sqlx::test]
async fn a_refusal_is_answered_from_memory_no_longer_than_its_ttl(db: PgPool) {
    let core = core(db, &[("SECKILL_SOLD_OUT_TTL_MS", "400")]).await;
    let u = users(&core, 3).await;
    let v = voucher(&core, 1, 60, 3600).await;
    let held = sale::buy(&core, u[0], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(BuyError::SoldOut)
    ));
    // Units appear behind the instance's back (no announcement): memory still says sold out…
    let mut c = core.redis.clone();
    let _: () = redis::cmd("SET")
        .arg(&core.keys.voucher(v).stock)
        .arg(5)
        .query_async(&mut c)
        .await
        .expect("SET");
    assert!(
        matches!(sale::buy(&core, u[1], v).await, Err(BuyError::SoldOut)),
        "answered from memory, not by the script"
    );
    // …and a shopper who holds an order still learns it.
    assert!(matches!(
        sale::buy(&core, u[0], v).await,
        Err(BuyError::AlreadyBought(o)) if o == held
    ));
    // Past the time to live, the script decides again.
    tokio::time::sleep(Duration::from_millis(450)).await;
    sale::buy(&core, u[1], v)
        .await
        .expect("no false sold out past the TTL");
}

#[sqlx::test]
async fn a_unit_coming_back_clears_the_refusal_on_every_instance_by_pub_sub(db: PgPool) {
    // A long TTL: only the announcement can clear the refusal in time.
    let ttl = [("SECKILL_SOLD_OUT_TTL_MS", "60000")];
    let a = core(db, &ttl).await;
    let b = sibling(&a, &ttl).await;
    let stop = CancellationToken::new();
    listening(&b, &stop).await;

    let u = users(&a, 2).await;
    let v = voucher(&a, 1, 60, 3600).await;
    let order = sale::buy(&a, u[0], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&b, u[1], v).await,
        Err(BuyError::SoldOut)
    ));
    assert!(b.refusals.get(&v).is_some(), "instance B remembers");
    drain(&a).await;
    // The shopper cancels through instance A; instance B hears of the unit.
    checkout::cancel(&a, u[0], order).await.expect("cancelled");
    let mut cleared = false;
    for _ in 0..40 {
        if b.refusals.get(&v).is_none() {
            cleared = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(cleared, "the announcement reached instance B within 1 s");
    sale::buy(&b, u[1], v)
        .await
        .expect("the returned unit sells through instance B");
    stop.cancel();
}

/// Waits up to a second for the background read to keep `n` buyers in memory, then asserts it.
async fn buyers_kept(core: &seckill::Core, n: usize, why: &str) {
    for _ in 0..100 {
        if core.sold_out.kept() == n {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(core.sold_out.kept(), n, "{why}");
}

#[sqlx::test]
async fn a_sold_out_sales_buyers_are_read_once_and_answered_from_memory(db: PgPool) {
    let core = core(db, &[("SECKILL_SOLD_OUT_TTL_MS", "60000")]).await;
    let v = voucher(&core, 2, 5, 600).await;
    let u = users(&core, 4).await;
    let first = sale::buy(&core, u[0], v).await.expect("admitted");
    let second = sale::buy(&core, u[1], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[2], v).await,
        Err(BuyError::SoldOut)
    ));
    // The first refusal from memory starts reading the sale's buyers.
    assert!(matches!(
        sale::buy(&core, u[3], v).await,
        Err(BuyError::SoldOut)
    ));
    buyers_kept(&core, 2, "both buyers read once").await;
    // Redis's buyers are gone behind the instance's back: the answers now come from memory
    // alone, each shopper's own.
    del(&core, &[&core.keys.voucher(v).buyers]).await;
    assert!(
        matches!(sale::buy(&core, u[0], v).await, Err(BuyError::AlreadyBought(o)) if o == first)
    );
    assert!(
        matches!(sale::buy(&core, u[1], v).await, Err(BuyError::AlreadyBought(o)) if o == second)
    );
    assert!(matches!(
        sale::buy(&core, u[2], v).await,
        Err(BuyError::SoldOut)
    ));
    // The sale's page asks the same memory: each shopper's own order, none for the others.
    let order_for = |user| sale::order_for(&core, user, v);
    assert_eq!(
        order_for(u[0]).await.expect("read").map(|o| o.order),
        Some(first)
    );
    assert_eq!(order_for(u[2]).await.expect("read"), None);
    // A unit coming back forgets them: the next answers ask Redis again (whose record of the
    // first buyer was deleted above).
    sale::announce_stock_back(&core, v).await;
    assert_eq!(core.sold_out.kept(), 0, "forgotten with the refusal");
    assert_eq!(
        order_for(u[0]).await.expect("read"),
        None,
        "read from Redis"
    );
}

#[sqlx::test]
async fn a_sold_out_sales_page_reads_its_buyers_once_though_nobody_was_refused(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 3).await;
    let left = voucher(&core, 2, 5, 600).await;
    let gone = voucher(&core, 1, 5, 600).await;
    sale::buy(&core, u[0], left).await.expect("admitted");
    let mine = sale::buy(&core, u[0], gone).await.expect("admitted");
    // Nobody tried to buy after the last unit went: no refusal here, only the stock reading.
    assert!(core.refusals.get(&gone).is_none());
    // A sale with a unit left is asked of Redis each time, and its buyers are not read.
    assert_eq!(
        sale::order_for(&core, u[1], left).await.expect("read"),
        None
    );
    // The sold-out one: the first page view reads Redis and starts reading its buyers.
    assert_eq!(
        sale::order_for(&core, u[1], gone).await.expect("read"),
        None
    );
    buyers_kept(
        &core,
        1,
        "the sold-out sale's one buyer, the other sale's none",
    )
    .await;
    // From then on its page is answered from memory: Redis's buyers deleted behind its back.
    del(&core, &[&core.keys.voucher(gone).buyers]).await;
    assert_eq!(
        sale::order_for(&core, u[0], gone)
            .await
            .expect("read")
            .map(|o| o.order),
        Some(mine),
        "the buyer's own order, from memory"
    );
    assert_eq!(
        sale::order_for(&core, u[2], gone).await.expect("read"),
        None
    );
}

#[sqlx::test]
async fn before_a_sale_opens_a_shoppers_order_on_it_is_known_without_a_store(db: PgPool) {
    let core = core(db, &[]).await;
    let u = users(&core, 1).await;
    // Opens in a minute: nobody can hold an order on it yet.
    let later = voucher(&core, 3, -60, 3600).await;
    let open = voucher(&core, 3, 60, 3600).await;
    // A buyer record planted in Redis on both (no admission could make one on the first):
    // the sale not yet open is answered from its window, without reading it.
    let planted = planted_order(&core, u[0], later).await;
    assert_eq!(
        sale::order_for(&core, u[0], later).await.expect("read"),
        None,
        "answered from the window"
    );
    // An open sale is read: its buyer record is found (its status asked as usual).
    let mine = sale::buy(&core, u[0], open).await.expect("admitted");
    let seen = sale::order_for(&core, u[0], open).await.expect("read");
    assert_eq!(seen.map(|o| o.order), Some(mine));
    assert_ne!(planted, mine);
}

/// Records `user` as holding an order on `v` straight in Redis; the order ID.
async fn planted_order(
    core: &seckill::Core,
    user: seckill::domain::UserId,
    v: seckill::domain::VoucherId,
) -> seckill::domain::OrderId {
    let order = seckill::domain::OrderId::from_parts(1, 1).expect("id");
    let mut c = core.redis.clone();
    let _: () = redis::cmd("HSET")
        .arg(&core.keys.voucher(v).buyers)
        .arg(user.get())
        .arg(order.to_redis_hex())
        .query_async(&mut c)
        .await
        .expect("HSET");
    order
}

#[sqlx::test]
async fn buys_queued_in_a_lane_when_the_sale_sold_out_are_answered_from_memory(db: PgPool) {
    let core = core(db, &[("SECKILL_SOLD_OUT_TTL_MS", "60000")]).await;
    let v = voucher(&core, 1, 5, 600).await;
    let u = users(&core, 3).await;
    let first = sale::buy(&core, u[0], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&core, u[1], v).await,
        Err(BuyError::SoldOut)
    ));
    // What a lane decides for buys that were queued before the refusal was known (straight to
    // the lane, past the buy's own check): each shopper's own answer, and no script ran, as
    // the script counts every attempt in the shopper's per-second counter.
    let rate_key = |user| core.keys.voucher(v).rate_of(user);
    assert!(matches!(
        core.admissions.admit(v, u[0]).await,
        Ok(AdmissionOutcome::AlreadyBought(o)) if o == first
    ));
    assert!(matches!(
        core.admissions.admit(v, u[2]).await,
        Ok(AdmissionOutcome::SoldOut)
    ));
    assert_eq!(
        redis_i64(&core, &rate_key(u[2])).await,
        None,
        "no script call"
    );
    // Once the buyers are read, from memory alone.
    buyers_kept(&core, 1, "the buyer read").await;
    del(&core, &[&core.keys.voucher(v).buyers]).await;
    assert!(matches!(
        core.admissions.admit(v, u[0]).await,
        Ok(AdmissionOutcome::AlreadyBought(o)) if o == first
    ));
    // Without the refusal in memory, the lane asks the script again: a unit put back in Redis
    // behind the instance's back is sold.
    core.refusals.remove(&v);
    let mut c = core.redis.clone();
    let () = redis::cmd("SET")
        .arg(&core.keys.voucher(v).stock)
        .arg(1)
        .query_async(&mut c)
        .await
        .expect("set");
    assert!(matches!(
        core.admissions.admit(v, u[2]).await,
        Ok(AdmissionOutcome::Admitted(_))
    ));
}
