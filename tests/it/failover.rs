//! A Redis master replaced by its replica (design.md decision 32), on Redis servers of the
//! test's own: a replica promoted without the last admissions, the sale reconciled before it
//! sells again; `SECKILL_DURABILITY=replicated` refusing to answer or write what no replica
//! holds.

use std::time::Duration;

use seckill::{sale, sale::BuyError, Backend, Core, Durability};
use sqlx::PgPool;
use tokio::process::Child;

use crate::common;

/// A throwaway Redis on a free loopback port (no persistence), a replica of `master` if given.
async fn redis_node(master: Option<u16>) -> (Child, u16) {
    let master = master.map(|m| m.to_string());
    let mut args = vec!["--save", "", "--appendonly", "no"];
    if let Some(m) = &master {
        args.extend(["--replicaof", "127.0.0.1", m]);
    }
    common::redis_server(None, &args).await
}

async fn conn(port: u16) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    common::redis_conn(port).await
}

/// Waits until `master` has `n` replicas that acknowledged everything written so far.
async fn replicated(master: u16, n: i64) {
    let mut c = conn(master).await.expect("master");
    for _ in 0..100 {
        let acked: i64 = redis::cmd("WAIT")
            .arg(n)
            .arg(100)
            .query_async(&mut c)
            .await
            .expect("WAIT");
        if acked >= n {
            return;
        }
    }
    panic!("the replica of {master} did not catch up");
}

async fn core_on(db: PgPool, port: u16, prefix: &str, extra: &[(&str, &str)]) -> Core {
    let url = format!("redis://127.0.0.1:{port}/");
    let mut vars = vec![("REDIS_URL", url.as_str()), ("SECKILL_KEY_PREFIX", prefix)];
    vars.extend_from_slice(extra);
    common::core(db, &vars).await
}

#[sqlx::test]
async fn an_order_written_that_the_promoted_replica_lacks_is_not_sold_twice(db: PgPool) {
    let (_m, master) = redis_node(None).await;
    let (_r, replica) = redis_node(Some(master)).await;
    let prefix = format!("t{}:", uuid::Uuid::new_v4().simple());
    let on_master = core_on(db.clone(), master, &prefix, &[]).await;
    let v = common::voucher(&on_master, 3, 5, 3600).await;
    let u = common::users(&on_master, 5).await;
    replicated(master, 1).await;

    // The replica is cut off and promoted, then the old master admits Ann and the worker writes
    // her order: PostgreSQL holds an order the new master never heard of.
    let mut r = conn(replica).await.expect("replica");
    let _: () = redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async(&mut r)
        .await
        .expect("promote");
    let ann = sale::buy(&on_master, u[0], v).await.expect("admitted");
    assert_eq!(common::drain(&on_master).await.written, 1);
    assert_eq!(common::live_written(&on_master, v).await, 1);

    // The shoppers follow the new master. Ann learns her order (not a second one); the two
    // units left go to two shoppers and the fourth is refused.
    let on_replica = core_on(db, replica, &prefix, &[]).await;
    match sale::buy(&on_replica, u[0], v).await {
        Err(BuyError::AlreadyBought(order)) => assert_eq!(order, ann),
        other => panic!("Ann bought again: {other:?}"),
    }
    sale::buy(&on_replica, u[1], v).await.expect("admitted");
    sale::buy(&on_replica, u[2], v).await.expect("admitted");
    assert!(matches!(
        sale::buy(&on_replica, u[3], v).await,
        Err(BuyError::SoldOut)
    ));
    common::drain(&on_replica).await;
    assert_eq!(common::live_written(&on_replica, v).await, 3);
    common::assert_stock_conserved(&on_replica, v, 3).await;
}

#[sqlx::test]
async fn a_replicated_admission_is_answered_only_once_a_replica_holds_it(db: PgPool) {
    let (_m, master) = redis_node(None).await;
    let prefix = format!("t{}:", uuid::Uuid::new_v4().simple());
    let replicated_mode = [
        ("SECKILL_DURABILITY", "replicated"),
        ("SECKILL_REPLICA_WAIT_MS", "200"),
    ];
    let core = core_on(db, master, &prefix, &replicated_mode).await;
    assert_eq!(core.config.durability, Durability::Replicated);
    // No replica: start-up refuses, and a buy is not answered as admitted.
    let refused = core.check_durability().await.expect_err("no replica");
    assert!(refused.to_string().contains("has 0"), "{refused}");
    let v = common::voucher(&core, 2, 5, 3600).await;
    let u = common::users(&core, 2).await;
    match sale::buy(&core, u[0], v).await {
        Err(BuyError::Backend(e)) => {
            assert!(
                matches!(
                    e.root(),
                    Backend::NotReplicated {
                        acked: 0,
                        wanted: 1
                    }
                ),
                "{e}"
            );
            assert!(seckill::Unavailable::is_unavailable(&e), "a 503");
        }
        other => panic!("answered without a replica: {other:?}"),
    }
    // The worker does not write what no replica holds: it holds the batch, waiting.
    let mut worker = seckill::jobs::order_writer::Worker::new(core.clone(), "w")
        .await
        .expect("worker");
    let held = tokio::time::timeout(Duration::from_secs(2), worker.drain()).await;
    assert!(held.is_err(), "still waiting for a replica: {held:?}");
    assert_eq!(common::live_written(&core, v).await, 0);

    // With a replica: the retry learns the order the first buy made, then it is written.
    let (_r, _replica) = redis_node(Some(master)).await;
    replicated(master, 1).await;
    core.check_durability().await.expect("one replica");
    let order = match buy_retrying_503(&core, u[0], v).await {
        Err(BuyError::AlreadyBought(order)) => order,
        other => panic!("the retry did not learn its order: {other:?}"),
    };
    let second = buy_retrying_503(&core, u[1], v).await.expect("admitted");
    assert_ne!(order, second);
    let mut worker = seckill::jobs::order_writer::Worker::new(core.clone(), "w")
        .await
        .expect("worker");
    assert_eq!(worker.drain().await.expect("drain").written, 2);
    common::assert_stock_conserved(&core, v, 2).await;
}

/// A buy retried, as a client retries a 503, while no replica acknowledged it in time: a replica
/// that has just synced may miss the first `WAIT`'s 200 ms on a loaded machine (up to 2 s).
async fn buy_retrying_503(
    core: &seckill::Core,
    user: seckill::domain::UserId,
    v: seckill::domain::VoucherId,
) -> Result<seckill::domain::OrderId, BuyError> {
    let mut attempt = sale::buy(core, user, v).await;
    for _ in 0..10 {
        match &attempt {
            Err(BuyError::Backend(e)) if matches!(e.root(), Backend::NotReplicated { .. }) => {
                tokio::time::sleep(Duration::from_millis(200)).await;
                attempt = sale::buy(core, user, v).await;
            }
            _ => break,
        }
    }
    attempt
}
