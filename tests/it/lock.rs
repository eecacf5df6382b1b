//! The distributed lock on real Redis: mutual exclusion, expiry, owner safety, watchdog,
//! reentrancy, pub/sub wake-up, fencing against PostgreSQL, and RedLock over 5 real masters.

use std::{
    net::TcpListener,
    process::{Child, Command, Stdio},
    sync::{
        atomic::{AtomicBool, AtomicU32, Ordering},
        Arc,
    },
    time::Duration,
};

use seckill::{
    testing::keys::{KeyPrefix, Keys},
    testing::lock::{LockClient, LockError, LockOptions},
    testing::redis_conn::Deployment,
    testing::scripts::{self, LockRelease},
    testing::store,
};
use sqlx::PgPool;
use tokio::time::Instant;

fn redis_url() -> String {
    std::env::var("REDIS_URL").unwrap_or_else(|_| seckill::config::DEFAULT_REDIS_URL.to_owned())
}

/// Keys under a prefix of their own, so tests never see each other's locks.
fn fresh_keys() -> Keys {
    let prefix = format!("lt{}:", uuid::Uuid::new_v4().simple());
    Keys::new(KeyPrefix::try_from(prefix.as_str()).expect("prefix"))
}

fn options(lease_ms: u64, watchdog: bool) -> LockOptions {
    LockOptions {
        lease: Duration::from_millis(lease_ms),
        watchdog,
        ..LockOptions::default()
    }
}

/// A lock client as another process would have one (its own process UUID).
fn locks(keys: &Keys, options: LockOptions) -> LockClient {
    let deployment = Deployment::open(&redis_url()).expect("redis url");
    LockClient::single(deployment, keys.clone(), options)
}

/// A connection to the Redis under test: one node, or the cluster `REDIS_URL` lists.
async fn conn() -> seckill::testing::redis_conn::Redis {
    Deployment::open(&redis_url())
        .expect("redis url")
        .dedicated(Duration::from_secs(5))
        .await
        .expect("connect")
}

/// Whether `client` is refused `name` right now (someone else holds it).
async fn held_elsewhere(client: &LockClient, name: &str) -> bool {
    client
        .try_acquire(name, Duration::ZERO)
        .await
        .expect("try")
        .is_none()
}

async fn pttl(key: &str) -> i64 {
    redis::cmd("PTTL")
        .arg(key)
        .query_async(&mut conn().await)
        .await
        .expect("PTTL")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_tasks_times_fifty_sections_are_mutually_exclusive() {
    // Every waiter tries again at each release (the herd is the point: contention), so the cost
    // grows with tasks × sections; fifty times a hundred took 48 s of two busy cores and showed
    // nothing more than this does.
    let keys = fresh_keys();
    let counter = format!("{}counter", keys.prefix().as_str());
    let client = locks(&keys, LockOptions::default());
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let client = client.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let mut c = conn().await;
                for _ in 0..50 {
                    let guard = client.acquire("counter").await.expect("acquire");
                    // A non-atomic read-modify-write: it loses updates unless the lock excludes.
                    let n: Option<i64> = redis::cmd("GET")
                        .arg(&counter)
                        .query_async(&mut c)
                        .await
                        .expect("GET");
                    tokio::task::yield_now().await;
                    let _: () = redis::cmd("SET")
                        .arg(&counter)
                        .arg(n.unwrap_or(0) + 1)
                        .query_async(&mut c)
                        .await
                        .expect("SET");
                    guard.release().await.expect("release");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    let n: i64 = redis::cmd("GET")
        .arg(&counter)
        .query_async(&mut conn().await)
        .await
        .expect("GET");
    assert_eq!(n, 1_000, "every increment survived");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_that_dies_frees_the_lock_after_its_lease_not_before() {
    let keys = fresh_keys();
    let lock_key = keys.lock("job").lock;
    // The holder runs on a runtime of its own, with its watchdog; then the whole runtime dies,
    // as a crashed process would: nothing is released and nothing renews any more.
    let holder_keys = keys.clone();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async {
            let guard = locks(&holder_keys, options(600, true))
                .acquire("job")
                .await
                .expect("acquire");
            // Outlive one lease, so the watchdog demonstrably renewed before the crash.
            tokio::time::sleep(Duration::from_millis(800)).await;
            assert!(!guard.is_lost());
            std::mem::forget(guard);
        });
        rt.shutdown_background();
    })
    .join()
    .expect("holder thread");

    let died = Instant::now();
    let left = pttl(&lock_key).await;
    assert!(
        left > 0,
        "the dead holder's lease is still running ({left} ms)"
    );
    let other = locks(&keys, options(600, false));
    assert!(
        held_elsewhere(&other, "job").await,
        "not free before the lease ends"
    );
    let guard = other
        .try_acquire("job", Duration::from_secs(3))
        .await
        .expect("try")
        .expect("free after the lease");
    let waited = died.elapsed();
    let lease_left = Duration::from_millis(u64::try_from(left).expect("positive"));
    assert!(
        waited + Duration::from_millis(20) >= lease_left,
        "acquired after {waited:?}, but the lease had {lease_left:?} left"
    );
    // A measured margin: the waiter notices within milliseconds on an idle machine; 1.5 s
    // leaves a busy one room and still tells a waiter that slept through the expiry.
    assert!(
        waited <= lease_left + Duration::from_millis(1_500),
        "the waiter noticed the expiry late: {waited:?} for {lease_left:?}"
    );
    guard.release().await.expect("release");
}

#[tokio::test]
async fn a_forgotten_guard_without_watchdog_expires_after_the_lease() {
    let keys = fresh_keys();
    let client = locks(&keys, options(300, false));
    let started = Instant::now();
    let guard = client.acquire("job").await.expect("acquire");
    let mut lost = guard.lost();
    std::mem::forget(guard);
    let other = locks(&keys, options(300, false));
    assert!(held_elsewhere(&other, "job").await);
    let second = other
        .try_acquire("job", Duration::from_secs(2))
        .await
        .expect("try")
        .expect("granted after expiry");
    assert!(started.elapsed() >= Duration::from_millis(290));
    // Without a watchdog the first guard reports its grant over once the validity is gone.
    // Its validity is already over: this is a hang guard.
    tokio::time::timeout(Duration::from_secs(10), lost.wait_for(|l| *l))
        .await
        .expect("lost is announced")
        .expect("channel open");
    second.release().await.expect("release");
}

#[tokio::test]
async fn a_non_owner_cannot_release_and_an_expired_owner_does_not_delete_the_new_holder() {
    let keys = fresh_keys();
    let lock = keys.lock("job");
    let holder = locks(&keys, options(250, false));
    let guard = holder.acquire("job").await.expect("acquire");

    // Another owner's release, straight at the script: refused, the lock stays.
    let mut c = conn().await;
    let refused = scripts::lock_release(&mut c, &lock, "someone-else:task-1", 250, "r1")
        .await
        .expect("script");
    assert_eq!(refused, LockRelease::NotOwner);
    let owner: Option<String> = redis::cmd("HGET")
        .arg(&lock.lock)
        .arg("owner")
        .query_async(&mut c)
        .await
        .expect("HGET");
    assert_eq!(owner.as_deref(), Some(guard.owner()));

    // The lease runs out, someone else takes the lock, the old owner releases late.
    let newcomer = locks(&keys, options(5_000, false));
    let new_guard = newcomer
        .try_acquire("job", Duration::from_secs(2))
        .await
        .expect("try")
        .expect("granted after expiry");
    assert!(matches!(guard.release().await, Err(LockError::NotOwner(_))));
    let owner: Option<String> = redis::cmd("HGET")
        .arg(&lock.lock)
        .arg("owner")
        .query_async(&mut c)
        .await
        .expect("HGET");
    assert_eq!(
        owner.as_deref(),
        Some(new_guard.owner()),
        "the new holder keeps the lock"
    );
    new_guard.release().await.expect("release");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_keeps_a_section_three_leases_long_exclusive_and_stops_at_release() {
    let keys = fresh_keys();
    let lock_key = keys.lock("job").lock;
    // A 1 s lease renewed every third of it: a renewal may be late by up to 2/3 s on a busy
    // machine before the section is lost (it was a 300 ms lease, 200 ms of slack).
    let holder = locks(&keys, options(1_000, true));
    let rival = locks(&keys, options(1_000, false));
    let guard = holder.acquire("job").await.expect("acquire");
    let started = Instant::now();
    let mut probes = 0;
    while started.elapsed() < Duration::from_millis(3_000) {
        assert!(
            held_elsewhere(&rival, "job").await,
            "taken over after {:?}",
            started.elapsed()
        );
        assert!(!guard.is_lost());
        probes += 1;
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(probes > 20);
    let owner = guard.owner().to_owned();
    guard.release().await.expect("release");
    assert_eq!(pttl(&lock_key).await, -2, "released: the key is gone");

    // Plant a lock under the released owner's name: a watchdog still running would renew it.
    let mut c = conn().await;
    let _: () = redis::pipe()
        .cmd("HSET")
        .arg(&lock_key)
        .arg("owner")
        .arg(&owner)
        .arg("count")
        .arg(1)
        .ignore()
        .cmd("PEXPIRE")
        .arg(&lock_key)
        .arg(10_000)
        .ignore()
        .query_async(&mut c)
        .await
        .expect("plant");
    // A renewal would set its time to live to the 1 s lease; left alone it counts down from
    // 10 s. Over several renewal periods, with seconds of margin either way.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let left = pttl(&lock_key).await;
    assert!(
        left > 5_000,
        "something renewed the lock after release: {left} ms left"
    );
    let _: () = redis::cmd("DEL")
        .arg(&lock_key)
        .query_async(&mut c)
        .await
        .expect("del");
}

#[tokio::test]
async fn a_dropped_guard_stops_renewing_and_releases() {
    let keys = fresh_keys();
    let lock_key = keys.lock("job").lock;
    // A 10 s lease: "at once" is told from "after the lease" with a margin a busy machine
    // cannot eat (it was a 300 ms lease against a 250 ms bound).
    let holder = locks(&keys, options(10_000, true));
    let guard = holder.acquire("job").await.expect("acquire");
    drop(guard);
    let rival = locks(&keys, options(10_000, false));
    let started = Instant::now();
    let g = rival
        .try_acquire("job", Duration::from_secs(9))
        .await
        .expect("try")
        .expect("free after drop");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "dropping released at once, it did not wait for the lease: {:?}",
        started.elapsed()
    );
    g.release().await.expect("release");
    assert_eq!(pttl(&lock_key).await, -2);
}

#[tokio::test]
async fn reentrant_holds_count_up_and_down() {
    let keys = fresh_keys();
    let lock_key = keys.lock("job").lock;
    let client = locks(&keys, options(5_000, true));
    let rival = locks(&keys, options(5_000, false));
    let count = || async {
        let n: Option<i64> = redis::cmd("HGET")
            .arg(&lock_key)
            .arg("count")
            .query_async(&mut conn().await)
            .await
            .expect("HGET");
        n
    };
    let outer = client.acquire("job").await.expect("outer");
    let inner = client.acquire("job").await.expect("re-entered");
    assert_eq!(inner.fence(), outer.fence(), "a re-entry keeps its fence");
    let innermost = client
        .try_acquire("job", Duration::ZERO)
        .await
        .expect("try")
        .expect("re-entered without waiting");
    assert_eq!(count().await, Some(3));

    // Another task of the same process is another owner.
    let same_process = client.clone();
    let other_task = tokio::spawn(async move { held_elsewhere(&same_process, "job").await });
    assert!(other_task.await.expect("task"), "another task is contended");

    innermost.release().await.expect("release 3");
    inner.release().await.expect("release 2");
    assert_eq!(count().await, Some(1));
    assert!(held_elsewhere(&rival, "job").await);
    outer.release().await.expect("release 1");
    assert_eq!(count().await, None, "freed at zero");
    rival
        .try_acquire("job", Duration::ZERO)
        .await
        .expect("try")
        .expect("free now")
        .release()
        .await
        .expect("release");
}

#[tokio::test]
async fn a_resent_acquire_or_release_counts_once() {
    // A cluster client re-sends a command whose connection dropped: the same request arriving
    // twice must not count a reentrant hold twice, nor release two.
    let keys = fresh_keys();
    let lock = keys.lock("job");
    let mut c = conn().await;
    let count = |c: &mut seckill::testing::redis_conn::Redis| {
        let mut c = c.clone();
        let key = lock.lock.clone();
        async move {
            let n: Option<i64> = redis::cmd("HGET")
                .arg(&key)
                .arg("count")
                .query_async(&mut c)
                .await
                .expect("HGET");
            n
        }
    };
    let owner = "process:task-1";
    let first = scripts::lock_acquire(&mut c, &lock, owner, 5_000, "a1")
        .await
        .expect("a1");
    let resent = scripts::lock_acquire(&mut c, &lock, owner, 5_000, "a1")
        .await
        .expect("a1 again");
    assert_eq!(first, resent, "the re-sent request answers the same grant");
    assert_eq!(count(&mut c).await, Some(1), "one hold, not two");
    scripts::lock_acquire(&mut c, &lock, owner, 5_000, "a2")
        .await
        .expect("a2");
    scripts::lock_acquire(&mut c, &lock, owner, 5_000, "a2")
        .await
        .expect("a2 again");
    assert_eq!(count(&mut c).await, Some(2), "a real re-entry counts");

    let released = scripts::lock_release(&mut c, &lock, owner, 5_000, "r1")
        .await
        .expect("r1");
    assert_eq!(released, LockRelease::StillHeld { count: 1 });
    let again = scripts::lock_release(&mut c, &lock, owner, 5_000, "r1")
        .await
        .expect("r1 again");
    assert_eq!(
        again,
        LockRelease::StillHeld { count: 1 },
        "not released twice"
    );
    assert_eq!(count(&mut c).await, Some(1));
    let last = scripts::lock_release(&mut c, &lock, owner, 5_000, "r2")
        .await
        .expect("r2");
    assert_eq!(last, LockRelease::Freed);
    assert_eq!(count(&mut c).await, None);
}

#[tokio::test]
async fn a_waiter_is_woken_by_the_release_message_not_by_polling() {
    let keys = fresh_keys();
    // A fallback poll far longer than the test: only the pub/sub message can wake the waiter.
    let slow_poll = LockOptions {
        fallback_poll: Duration::from_secs(20),
        ..options(30_000, true)
    };
    let holder = locks(&keys, slow_poll);
    let waiter = locks(&keys, slow_poll);
    let guard = holder.acquire("job").await.expect("acquire");
    let wait = tokio::spawn(async move {
        let g = waiter
            .try_acquire("job", Duration::from_secs(10))
            .await
            .expect("try")
            .expect("granted");
        let at = Instant::now();
        g.release().await.expect("release");
        at
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    let released = Instant::now();
    guard.release().await.expect("release");
    let granted = wait.await.expect("waiter");
    let latency = granted.duration_since(released);
    assert!(
        latency < Duration::from_millis(500),
        "woken {latency:?} after the release"
    );
}

#[sqlx::test]
async fn fences_strictly_increase_and_a_stale_holders_write_is_rejected(db: PgPool) {
    let core = crate::common::core(db, &[]).await;
    let voucher = crate::common::voucher(&core, 10, 0, 3_600).await;
    let name = format!("preload:{voucher}");

    // Tokens strictly increase over grants to different owners.
    let mut last = 0;
    for i in 0..20 {
        let client = locks(&core.keys, options(1_000, i % 2 == 0));
        let g = client.acquire(&name).await.expect("acquire");
        assert!(g.fence() > last, "fence {} after {last}", g.fence());
        last = g.fence();
        g.release().await.expect("release");
    }

    // A holder pauses past its lease; a newer holder writes; the stale write is refused.
    let stale = locks(&core.keys, options(200, false))
        .acquire(&name)
        .await
        .expect("stale holder");
    let fresh = locks(&core.keys, options(5_000, false))
        .try_acquire(&name, Duration::from_secs(2))
        .await
        .expect("try")
        .expect("granted after the stale lease");
    assert!(fresh.fence() > stale.fence());
    assert!(
        store::vouchers::record_preload(&core.db, voucher, fresh.fence())
            .await
            .expect("write")
    );
    assert!(
        !store::vouchers::record_preload(&core.db, voucher, stale.fence())
            .await
            .expect("write"),
        "the paused holder's write is rejected by its old token"
    );
    let recorded: i64 = sqlx::query_scalar("SELECT preload_fence FROM vouchers WHERE id = $1")
        .bind(voucher.get())
        .fetch_one(&core.db)
        .await
        .expect("fence");
    assert_eq!(recorded, fresh.fence());
    // Its grant is over already: a hang guard.
    tokio::time::timeout(Duration::from_secs(10), stale.lost().wait_for(|l| *l))
        .await
        .expect("the stale guard knows its grant is over")
        .expect("channel open");
    fresh.release().await.expect("release");
}

/// Independent `redis-server` masters on loopback, killed when dropped.
struct Fleet {
    nodes: Vec<Option<Child>>,
    urls: Vec<String>,
    dir: std::path::PathBuf,
}

impl Fleet {
    async fn start(n: usize) -> Self {
        let dir = std::env::temp_dir().join(format!("seckill-redlock-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("dir");
        let mut nodes = Vec::new();
        let mut urls = Vec::new();
        for _ in 0..n {
            let port = TcpListener::bind("127.0.0.1:0")
                .expect("free port")
                .local_addr()
                .expect("addr")
                .port();
            let child = Command::new("redis-server")
                .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
                .args([
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--protected-mode",
                    "yes",
                ])
                .arg("--dir")
                .arg(&dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("redis-server (scripts/setup.sh installs it)");
            nodes.push(Some(child));
            urls.push(format!("redis://127.0.0.1:{port}/"));
        }
        for url in &urls {
            let client = redis::Client::open(url.as_str()).expect("url");
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                if let Ok(mut c) = client.get_multiplexed_async_connection().await {
                    let pong: Result<String, _> = redis::cmd("PING").query_async(&mut c).await;
                    if pong.is_ok() {
                        break;
                    }
                }
                assert!(Instant::now() < deadline, "{url} did not start");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        Self { nodes, urls, dir }
    }

    fn client(&self, keys: &Keys, options: LockOptions) -> LockClient {
        let clients = self
            .urls
            .iter()
            .map(|u| redis::Client::open(u.as_str()).expect("url"))
            .collect();
        LockClient::redlock(clients, keys.clone(), options)
    }

    fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.nodes[i].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Fleet {
    fn drop(&mut self) {
        for i in 0..self.nodes.len() {
            self.kill(i);
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redlock_excludes_works_with_two_of_five_down_and_fails_cleanly_with_three() {
    let mut fleet = Fleet::start(5).await;
    let keys = fresh_keys();
    let opts = LockOptions {
        node_timeout: Duration::from_millis(100),
        ..options(2_000, true)
    };

    // Mutual exclusion across 10 contenders, each its own client (own process identity): split
    // votes among them are retried after a jitter, so more contenders cost time, not coverage.
    let inside = Arc::new(AtomicBool::new(false));
    let sections = Arc::new(AtomicU32::new(0));
    let tasks: Vec<_> = (0..10)
        .map(|_| {
            let client = fleet.client(&keys, opts);
            let (inside, sections) = (inside.clone(), sections.clone());
            tokio::spawn(async move {
                for _ in 0..10 {
                    let g = client.acquire("shared").await.expect("acquire");
                    assert!(!inside.swap(true, Ordering::SeqCst), "two holders at once");
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    inside.store(false, Ordering::SeqCst);
                    sections.fetch_add(1, Ordering::SeqCst);
                    g.release().await.expect("release");
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.expect("task");
    }
    assert_eq!(sections.load(Ordering::SeqCst), 100);

    let client = fleet.client(&keys, opts);
    fleet.kill(0);
    fleet.kill(3);
    let g = client
        .try_acquire("after-failures", Duration::ZERO)
        .await
        .expect("three of five still answer")
        .expect("granted with a quorum of 3");
    let rival = fleet.client(&keys, opts);
    assert!(held_elsewhere(&rival, "after-failures").await);
    g.release().await.expect("release on the live quorum");

    fleet.kill(4);
    let started = Instant::now();
    match client.try_acquire("after-failures", Duration::ZERO).await {
        Err(LockError::NoQuorum { reached, needed }) => {
            assert_eq!((reached, needed), (2, 3));
        }
        Ok(Some(_)) => panic!("granted without a quorum"),
        other => panic!("expected NoQuorum, got {:?}", other.map(|g| g.is_some())),
    }
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "dead nodes fail fast (a refused connection, not a timeout)"
    );
    // The failed attempt left no partial grant behind on the live nodes.
    for url in &fleet.urls[1..3] {
        let mut c = redis::Client::open(url.as_str())
            .expect("url")
            .get_multiplexed_async_connection()
            .await
            .expect("live node");
        let exists: i64 = redis::cmd("EXISTS")
            .arg(keys.lock("after-failures").lock)
            .query_async(&mut c)
            .await
            .expect("EXISTS");
        assert_eq!(exists, 0, "partial grant released on {url}");
    }
}
