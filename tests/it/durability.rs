//! `SECKILL_DURABILITY=fsync` on a Redis of the test's own, its AOF in a scratch directory:
//! start-up sets `appendfsync always`; killed with `kill -9` and restarted from its own
//! configuration (`everysec`, as a supervisor would), Redis keeps the admission it answered
//! and the watch sets `always` again.

use std::time::Duration;

use seckill::{jobs::durability_watch, sale, sale::BuyError, Durability};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::common;

async fn appendfsync(port: u16) -> String {
    let mut c = common::redis_conn(port).await.expect("redis");
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("appendfsync")
        .query_async(&mut c)
        .await
        .expect("CONFIG GET");
    pair.get(1).cloned().unwrap_or_default()
}

#[sqlx::test]
async fn fsync_is_set_again_on_a_redis_restarted_with_its_own_setting(db: PgPool) {
    let dir = std::env::temp_dir().join(format!("seckill-aof-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("scratch directory");
    let dir_arg = dir.to_string_lossy().into_owned();
    let own_config = [
        "--appendonly",
        "yes",
        "--appendfsync",
        "everysec",
        "--save",
        "",
        "--dir",
        dir_arg.as_str(),
    ];
    let (mut redis, port) = common::redis_server(None, &own_config).await;
    let url = format!("redis://127.0.0.1:{port}/");
    let core = common::core(
        db,
        &[("REDIS_URL", url.as_str()), ("SECKILL_DURABILITY", "fsync")],
    )
    .await;
    assert_eq!(core.config.durability, Durability::Fsync);
    assert_eq!(appendfsync(port).await, "everysec");
    core.check_durability().await.expect("start-up sets it");
    assert_eq!(appendfsync(port).await, "always");

    let v = common::voucher(&core, 3, 5, 3600).await;
    let u = common::users(&core, 1).await;
    let ann = sale::buy(&core, u[0], v).await.expect("admitted");

    redis.kill().await.expect("kill -9");
    let (_redis, _) = common::redis_server(Some(port), &own_config).await;
    assert_eq!(
        appendfsync(port).await,
        "everysec",
        "a restarted Redis reads its own configuration"
    );

    let stop = CancellationToken::new();
    let watch = tokio::spawn(durability_watch::run(core.clone(), stop.clone()));
    let mut set_again = false;
    for _ in 0..50 {
        if appendfsync(port).await == "always" {
            set_again = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.cancel();
    watch.await.expect("the watch stops");
    assert!(
        set_again,
        "appendfsync always not set again within 5 s ({:?} between reads)",
        durability_watch::EVERY
    );
    // The admission answered before the kill came back with Redis: Ann is known as its buyer.
    match sale::buy(&core, u[0], v).await {
        Err(BuyError::AlreadyBought(order)) => assert_eq!(order, ann),
        other => panic!("Ann's admission was lost with the kill: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
