//! Global order IDs drawn from the real Redis.

mod common;

use std::collections::HashSet;

use seckill::order_id;
use sqlx::PgPool;

#[sqlx::test]
async fn eighty_thousand_ids_from_eight_tasks_are_unique(db: PgPool) {
    let core = common::core(db, &[]).await;
    let tasks: Vec<_> = (0..8)
        .map(|_| {
            let core = core.clone();
            tokio::spawn(async move {
                let mut c = core.redis.clone();
                let mut ids = Vec::with_capacity(10_000);
                for _ in 0..10_000 {
                    ids.push(order_id::next(&mut c, &core.keys).await.expect("id"));
                }
                ids
            })
        })
        .collect();
    let mut all = HashSet::new();
    for t in tasks {
        for id in t.await.expect("task") {
            assert!(all.insert(id), "duplicate {id}");
        }
    }
    assert_eq!(all.len(), 80_000);
}

#[sqlx::test]
async fn ids_increase_with_the_second(db: PgPool) {
    let core = common::core(db, &[]).await;
    let mut c = core.redis.clone();
    let first = order_id::next(&mut c, &core.keys).await.expect("id");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let second = order_id::next(&mut c, &core.keys).await.expect("id");
    assert!(second.seconds() > first.seconds());
    assert!(second > first);
    let now = chrono::Utc::now();
    assert!(
        (now - second.issued_at()).num_seconds().abs() <= 2,
        "seconds come from the clock"
    );
}

#[sqlx::test]
async fn an_exhausted_day_is_an_error_not_a_wrap(db: PgPool) {
    let core = common::core(db, &[]).await;
    let mut c = core.redis.clone();
    let day = chrono::Utc::now().format("%Y:%m:%d");
    let key = format!("{}{day}", core.keys.order_counter_prefix());
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg(u32::MAX)
        .query_async(&mut c)
        .await
        .expect("SET");
    let r = order_id::next(&mut c, &core.keys).await;
    assert!(matches!(r, Err(order_id::NextIdError::Exhausted)), "{r:?}");
}
