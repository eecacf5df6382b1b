//! Test harness: a [`Core`] on the real local Redis (own key prefix per test) and a fresh
//! PostgreSQL database per test (`#[sqlx::test]`).

use std::collections::HashMap;

use chrono::{Duration, Utc};
use seckill::{
    auth::Principal,
    catalog,
    domain::{Phone, UserId, VoucherDraft, VoucherId},
    testing::store,
    Config, Core,
};
use sqlx::PgPool;

pub async fn core(db: PgPool, extra: &[(&str, &str)]) -> Core {
    let prefix = format!("t{}:", uuid::Uuid::new_v4().simple());
    let mut vars: HashMap<String, String> = HashMap::from([
        ("SECKILL_KEY_PREFIX".into(), prefix),
        ("SECKILL_RECLAIM_IDLE_MS".into(), "200".into()),
        ("SECKILL_WORKER_BLOCK_MS".into(), "100".into()),
        ("SECKILL_BUYS_PER_SECOND".into(), "100000".into()),
        ("SECKILL_MAX_DELIVERIES".into(), "3".into()),
        ("SECKILL_DEV_LOGIN".into(), "true".into()),
        ("SECKILL_DEV_PAYMENTS".into(), "true".into()),
    ]);
    if let Ok(url) = std::env::var("REDIS_URL") {
        vars.insert("REDIS_URL".into(), url);
    }
    for (k, v) in extra {
        vars.insert((*k).into(), (*v).into());
    }
    let config = Config::from_lookup(|k| vars.get(k).cloned()).expect("test config");
    Core::with_pool(config, db).await.expect("connect")
}

/// A second instance of the deployment `core` belongs to (same keys, same database), with its
/// own memory and its own subscription.
pub async fn sibling(core: &Core, extra: &[(&str, &str)]) -> Core {
    let prefix = core.keys.prefix().as_str().to_owned();
    let mut vars = vec![("SECKILL_KEY_PREFIX", prefix.as_str())];
    vars.extend_from_slice(extra);
    self::core(core.db.clone(), &vars).await
}

/// The address sign-ins in these tests come from.
pub fn loopback() -> std::net::IpAddr {
    std::net::IpAddr::from([127, 0, 0, 1])
}

/// `n` users, created directly (set-up, not under test).
pub async fn users(core: &Core, n: usize) -> Vec<UserId> {
    let phones: Vec<Phone> = (0..n)
        .map(|i| Phone::try_from(format!("+861500000{i:04}").as_str()).expect("phone"))
        .collect();
    store::users::upsert_many(&core.db, &phones)
        .await
        .expect("users")
}

pub async fn admin(core: &Core) -> seckill::auth::Admin {
    let phone = Phone::parse(
        seckill::config::DEFAULT_ADMIN_PHONE,
        core.config.auth.country,
    )
    .expect("phone");
    let user = store::users::upsert_by_phone(&core.db, &phone)
        .await
        .expect("admin user");
    Principal {
        user,
        phone,
        is_admin: true,
    }
    .as_admin()
    .expect("admin")
}

/// Creates a voucher whose sale opened `opened_secs_ago` seconds ago (negative: in the future).
pub async fn voucher(core: &Core, stock: i64, opened_secs_ago: i64, lasts_secs: i64) -> VoucherId {
    let begins = Utc::now() - Duration::seconds(opened_secs_ago);
    let draft = VoucherDraft {
        title: "Test voucher".into(),
        description: String::new(),
        price_cents: "100".into(),
        stock: stock.to_string(),
        begins_at: begins.to_rfc3339(),
        ends_at: (begins + Duration::seconds(lasts_secs)).to_rfc3339(),
        ..VoucherDraft::default()
    };
    catalog::create_voucher(core, &admin(core).await, &draft, Utc::now())
        .await
        .expect("create voucher")
}

/// Drains the queue with a fresh worker named `w` (set-up, not under test).
pub async fn drain(core: &Core) -> seckill::jobs::order_writer::WorkerReport {
    seckill::jobs::order_writer::Worker::new(core.clone(), "w")
        .await
        .expect("worker")
        .drain()
        .await
        .expect("drain")
}

/// Deletes `keys` from Redis behind the instance's back.
pub async fn del(core: &Core, keys: &[&str]) {
    let mut c = core.redis.clone();
    let _: () = redis::cmd("DEL")
        .arg(keys)
        .query_async(&mut c)
        .await
        .expect("DEL");
}

/// `v`'s sale hash made a string behind the instance's back, so every script on the sale fails
/// (`WRONGTYPE`), as one on a shard out of reach would; what the hash held, to put back.
pub async fn break_sale_hash(core: &Core, v: VoucherId) -> HashMap<String, String> {
    let sale_hash = core.keys.voucher(v).sale;
    let mut c = core.redis.clone();
    let (held, ()): (HashMap<String, String>, ()) = redis::pipe()
        .atomic()
        .cmd("HGETALL")
        .arg(&sale_hash)
        .cmd("DEL")
        .arg(&sale_hash)
        .ignore()
        .cmd("SET")
        .arg(&sale_hash)
        .arg("not a hash")
        .query_async(&mut c)
        .await
        .expect("the sale's hash replaced");
    held
}

/// Redis loses `lost` keys (a partial state loss), then the sale is restored from PostgreSQL as
/// the next buy or the sweeper would.
pub async fn lose_and_restore(
    core: &Core,
    v: VoucherId,
    lost: &[&str],
) -> seckill::testing::scripts::PreloadOutcome {
    del(core, lost).await;
    let restored = store::vouchers::get(&core.db, v)
        .await
        .expect("get")
        .expect("exists");
    catalog::preload(core, &restored).await.expect("preload")
}

pub async fn redis_i64(core: &Core, key: &str) -> Option<i64> {
    let mut c = core.redis.clone();
    redis::cmd("GET")
        .arg(key)
        .query_async(&mut c)
        .await
        .expect("GET")
}

pub async fn written(core: &Core, v: VoucherId) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM orders WHERE voucher_id = $1")
        .bind(v.get())
        .fetch_one(&core.db)
        .await
        .expect("count")
}

pub async fn db_stock(core: &Core, v: VoucherId) -> i64 {
    sqlx::query_scalar("SELECT stock FROM vouchers WHERE id = $1")
        .bind(v.get())
        .fetch_one(&core.db)
        .await
        .expect("stock")
}

pub async fn hlen(core: &Core, key: &str) -> i64 {
    let mut c = core.redis.clone();
    redis::cmd("HLEN")
        .arg(key)
        .query_async(&mut c)
        .await
        .expect("HLEN")
}

pub async fn xlen(core: &Core, key: &str) -> i64 {
    let mut c = core.redis.clone();
    redis::cmd("XLEN")
        .arg(key)
        .query_async(&mut c)
        .await
        .expect("XLEN")
}

/// Orders of `v` written and not cancelled (awaiting payment or paid).
pub async fn live_written(core: &Core, v: VoucherId) -> i64 {
    sqlx::query_scalar(
        "SELECT count(*) FROM orders WHERE voucher_id = $1 AND status <> 'cancelled'",
    )
    .bind(v.get())
    .fetch_one(&core.db)
    .await
    .expect("count")
}

/// Units an admin added to `v`.
pub async fn added_stock(core: &Core, v: VoucherId) -> i64 {
    sqlx::query_scalar("SELECT added_stock FROM vouchers WHERE id = $1")
        .bind(v.get())
        .fetch_one(&core.db)
        .await
        .expect("added")
}

/// I1 at quiescence: initial + added = Redis stock + queued + awaiting payment + paid
/// (cancelled units are back in Redis's stock), PostgreSQL agrees, and no stock move is
/// pending.
pub async fn assert_stock_conserved(core: &Core, v: VoucherId, initial: i64) {
    let k = core.keys.voucher(v);
    let offered = initial + added_stock(core, v).await;
    let redis_stock = redis_i64(core, &k.stock).await.expect("stock key");
    let queued = hlen(core, &k.queued).await;
    let live = live_written(core, v).await;
    assert_eq!(queued, 0, "quiescent: nothing queued");
    assert_eq!(
        store::moves::pending_count(&core.db).await.expect("moves"),
        0,
        "quiescent: no stock move pending"
    );
    assert_eq!(redis_stock + queued + live, offered, "I1 conservation");
    assert_eq!(db_stock(core, v).await, offered - live, "PostgreSQL stock");
    assert!(live <= offered, "never oversold");
}

/// Starts `core`'s subscription (stock back, catalog, revocations) until `stop`, and returns
/// once it hears. Before that, a message another instance sends would be missed.
///
/// The probe is a stock-back message, not a catalog one: its echo forgets one sale's refusal
/// and moves no catalog epoch, so a probe whose echo comes late (one sent before the
/// subscription was up is lost, one sent after it may be slow) cannot move the epoch under a
/// test that counts it. A second refusal, never announced, tells the echo from the memory's
/// own expiry.
pub async fn listening(core: &Core, stop: &tokio_util::sync::CancellationToken) {
    use seckill::sale::refusals::Refusal;
    tokio::spawn(seckill::jobs::stock_back::listen(
        core.clone(),
        stop.clone(),
    ));
    let (probe, control) = (
        VoucherId::try_from(i64::MAX - 1).expect("id"),
        VoucherId::try_from(i64::MAX - 2).expect("id"),
    );
    let mut redis = core.redis.clone();
    for _ in 0..100 {
        core.refusals.insert(probe, Refusal::SoldOut);
        core.refusals.insert(control, Refusal::SoldOut);
        let _: i64 = redis::cmd("PUBLISH")
            .arg(core.keys.stock_back_channel())
            .arg(probe.get())
            .query_async(&mut redis)
            .await
            .expect("PUBLISH");
        for _ in 0..10 {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            let (heard, kept) = (
                core.refusals.get(&probe).is_none(),
                core.refusals.get(&control).is_some(),
            );
            if heard && kept {
                core.refusals.remove(&control);
                return;
            }
            if !kept {
                break;
            }
        }
    }
    panic!("the subscription never heard an announcement");
}

/// A redis-server of the test's own on loopback (on `port`, else on a free one) started with
/// `args`; it is killed when the handle drops (`kill_on_drop`).
pub async fn redis_server(port: Option<u16>, args: &[&str]) -> (tokio::process::Child, u16) {
    let port = port.unwrap_or_else(|| {
        std::net::TcpListener::bind("127.0.0.1:0")
            .expect("a free port")
            .local_addr()
            .expect("addr")
            .port()
    });
    let child = tokio::process::Command::new("redis-server")
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(args)
        .stdout(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server (scripts/setup.sh installs it)");
    for _ in 0..100 {
        if let Ok(mut c) = redis_conn(port).await {
            if redis::cmd("PING")
                .query_async::<String>(&mut c)
                .await
                .is_ok()
            {
                return (child, port);
            }
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the test's redis-server did not start on port {port}");
}

/// A connection of the test's own to the redis-server on `port`.
pub async fn redis_conn(port: u16) -> redis::RedisResult<redis::aio::MultiplexedConnection> {
    redis::Client::open(format!("redis://127.0.0.1:{port}/"))?
        .get_multiplexed_async_connection()
        .await
}
