//! The catalog read from memory (#25 point 3, decision 28): a voucher's row is read from
//! PostgreSQL once per change, not per request; a change made on this instance is seen at once,
//! one made on another instance as soon as its pub/sub message arrives, and a lost message costs
//! at most `SECKILL_CATALOG_CACHE_MS`.

use std::time::Duration;

use crate::common::*;
use seckill::catalog;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

async fn retitle(db: &PgPool, v: seckill::domain::VoucherId, title: &str) {
    sqlx::query("UPDATE vouchers SET title = $2 WHERE id = $1")
        .bind(v.get())
        .bind(title)
        .execute(db)
        .await
        .expect("retitle");
}

async fn title(core: &seckill::Core, v: seckill::domain::VoucherId) -> String {
    catalog::get(core, v)
        .await
        .expect("read")
        .expect("voucher")
        .voucher
        .title
}

/// Creates a voucher on `core` once its own announcement of it has come back: the epoch moves
/// once when a change is made and once more when the message comes back, and a reading taken
/// before that echo would be dropped by it (a "from memory" check would then see a fresh read).
async fn voucher_heard(core: &seckill::Core, stock: i64) -> seckill::domain::VoucherId {
    let before = core.catalog_epoch();
    let v = voucher(core, stock, 5, 600).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while core.catalog_epoch() < before + 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the instance never heard its own catalog announcement"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    v
}

#[sqlx::test]
async fn rows_come_from_memory_until_a_change_is_announced(db: PgPool) {
    let long = [("SECKILL_CATALOG_CACHE_MS", "60000")];
    let a = core(db.clone(), &long).await;
    let b = sibling(&a, &long).await;
    let stop = CancellationToken::new();
    listening(&a, &stop).await;

    let v = voucher_heard(&a, 5).await;
    assert_eq!(title(&a, v).await, "Test voucher");
    let listed = catalog::list(&a, 50).await.expect("list");
    assert_eq!(listed[0].voucher.title, "Test voucher");
    // Behind the shop's back: PostgreSQL is not asked again, the list neither.
    retitle(&db, v, "Changed in the database").await;
    assert_eq!(title(&a, v).await, "Test voucher", "from memory");
    assert_eq!(
        catalog::list(&a, 50).await.expect("list")[0].voucher.title,
        "Test voucher"
    );
    // A change on the other instance is announced: this one reads the row again.
    let admin = admin(&b).await;
    catalog::admin::end_sale(&b, &admin, v)
        .await
        .expect("ended");
    let mut seen = String::new();
    for _ in 0..50 {
        seen = title(&a, v).await;
        if seen != "Test voucher" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        seen, "Changed in the database",
        "read again after the announcement"
    );
    assert_eq!(
        catalog::list(&a, 50).await.expect("list")[0].voucher.title,
        "Changed in the database"
    );
    stop.cancel();
}

#[sqlx::test]
async fn a_lost_announcement_costs_at_most_the_cache_time(db: PgPool) {
    let a = core(db.clone(), &[("SECKILL_CATALOG_CACHE_MS", "300")]).await;
    let v = voucher(&a, 5, 5, 600).await;
    assert_eq!(title(&a, v).await, "Test voucher");
    retitle(&db, v, "Changed in the database").await;
    assert_eq!(title(&a, v).await, "Test voucher");
    tokio::time::sleep(Duration::from_millis(350)).await;
    assert_eq!(title(&a, v).await, "Changed in the database");
}

async fn remaining(core: &seckill::Core, v: seckill::domain::VoucherId) -> i64 {
    catalog::get(core, v)
        .await
        .expect("read")
        .expect("voucher")
        .remaining
}

#[sqlx::test]
async fn the_stock_left_is_read_once_per_period_and_forgotten_when_it_changes(db: PgPool) {
    let long = [("SECKILL_STOCK_READ_MS", "60000")];
    let a = core(db.clone(), &long).await;
    let b = sibling(&a, &long).await;
    let stop = CancellationToken::new();
    listening(&a, &stop).await;
    let v = voucher_heard(&a, 3).await;
    let shoppers = users(&a, 1).await;
    let stock_key = a.keys.voucher(v).stock;
    assert_eq!(remaining(&a, v).await, 3);

    // Units taken elsewhere (another instance's admissions): this instance answers its reading.
    let mut redis = a.redis.clone();
    let _: () = redis::cmd("SET")
        .arg(&stock_key)
        .arg(2)
        .query_async(&mut redis)
        .await
        .expect("SET");
    assert_eq!(remaining(&a, v).await, 3, "from memory, no read");
    assert_eq!(remaining(&b, v).await, 2, "another instance reads its own");

    // A unit taken here: the reading is forgotten at once.
    seckill::sale::buy(&a, shoppers[0], v)
        .await
        .expect("admitted");
    assert_eq!(remaining(&a, v).await, 1);

    // A unit coming back on another instance: announced, forgotten here too.
    let _: () = redis::cmd("INCR")
        .arg(&stock_key)
        .query_async(&mut redis)
        .await
        .expect("INCR");
    seckill::sale::announce_stock_back(&b, v).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while remaining(&a, v).await != 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the announcement did not reach the other instance"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.cancel();
}
