//! Global order IDs drawn from the real Redis (a cluster too, when `REDIS_URL` lists one).

use std::collections::HashSet;

use seckill::{
    domain::{Shard, SHARD_SEQUENCE_MAX},
    sale::order_id,
    testing::scripts::{self, AdmissionOutcome, CounterDay},
};
use sqlx::PgPool;

#[sqlx::test]
async fn eighty_thousand_ids_from_eight_tasks_over_all_shards_are_unique(db: PgPool) {
    let core = crate::common::core(db, &[]).await;
    let tasks: Vec<_> = (0..8u32)
        .map(|t| {
            let core = core.clone();
            tokio::spawn(async move {
                let mut c = core.redis.clone();
                let mut ids = Vec::with_capacity(10_000);
                for i in 0..10_000u32 {
                    // Two tasks share each shard, and every shard is used.
                    let shard = Shard::new(((i * 8 + t / 2) % 256) as u8);
                    let id = order_id::next(&mut c, &core.keys, shard).await.expect("id");
                    assert_eq!(Shard::of_order(id), shard, "the ID names its shard");
                    ids.push(id);
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
    let core = crate::common::core(db, &[]).await;
    let mut c = core.redis.clone();
    let shard = Shard::new(9);
    let first = order_id::next(&mut c, &core.keys, shard).await.expect("id");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let second = order_id::next(&mut c, &core.keys, shard).await.expect("id");
    assert!(second.seconds() > first.seconds());
    assert!(second > first);
    let now = chrono::Utc::now();
    assert!(
        (now - second.issued_at()).num_seconds().abs() <= 2,
        "seconds come from the clock"
    );
}

#[sqlx::test]
async fn an_exhausted_shard_day_is_an_error_not_a_wrap(db: PgPool) {
    let core = crate::common::core(db, &[]).await;
    let mut c = core.redis.clone();
    let shard = Shard::new(200);
    let key = CounterDay::today().counter(&core.keys, shard);
    let _: () = redis::cmd("SET")
        .arg(&key)
        .arg(SHARD_SEQUENCE_MAX)
        .query_async(&mut c)
        .await
        .expect("SET");
    let r = order_id::next(&mut c, &core.keys, shard).await;
    assert!(matches!(r, Err(order_id::NextIdError::Exhausted)), "{r:?}");
    let other = order_id::next(&mut c, &core.keys, Shard::new(201)).await;
    assert!(other.is_ok(), "other shards still draw: {other:?}");
}

#[sqlx::test]
async fn a_counter_named_for_another_day_is_refused_and_the_buy_retries_with_redis_day(db: PgPool) {
    let core = crate::common::core(db, &[]).await;
    let users = crate::common::users(&core, 1).await;
    let v = crate::common::voucher(&core, 3, 60, 3600).await;
    let mut c = core.redis.clone();
    let today = CounterDay::today();
    let yesterday = CounterDay::from_days(today.get() - 1).expect("a day");
    // An app clock a day behind Redis's (the seconds around midnight): refused, nothing written.
    let refused = scripts::admit_on_day(&mut c, &core.keys, v, users[0], 100, yesterday)
        .await
        .expect("script");
    assert!(
        matches!(refused, AdmissionOutcome::WrongDay(d) if d == today),
        "{refused:?}"
    );
    let stock: i64 = redis::cmd("GET")
        .arg(core.keys.voucher(v).stock)
        .query_async(&mut c)
        .await
        .expect("GET");
    assert_eq!(stock, 3, "a refused day takes no stock");
    let stale: Option<i64> = redis::cmd("GET")
        .arg(yesterday.counter(&core.keys, Shard::of_voucher(v)))
        .query_async(&mut c)
        .await
        .expect("GET");
    assert_eq!(stale, None, "and draws from no counter");
    // The buy path names the day Redis answered and is admitted.
    let id = seckill::sale::buy(&core, users[0], v)
        .await
        .expect("admitted");
    assert_eq!(Shard::of_order(id), Shard::of_voucher(v));
    assert_eq!(id.issued_at().date_naive(), today.date());
}
