//! [`Core`]: the handles every operation needs (PostgreSQL pool, shared Redis connection, key
//! names, configuration). Cheap to clone; the operations themselves live in their modules.

use std::{sync::Arc, time::Duration};

use sqlx::PgPool;

mod links;

use self::links::{once_loaded, Links};

use crate::{
    auth::principal::Principal,
    config::Config,
    infra::keys::Keys,
    infra::lock::{LockClient, LockOptions},
    infra::redis_conn::{Deployment, Redis},
    infra::store,
    infra::ttl_map::TtlMap,
    orders::payment::PaymentProvider,
    sale::deciders::{Admissions, Entries},
    sale::refusals::Refusals,
};

/// Entries each in-process memory holds at most.
const MEMO_CAP: usize = 100_000;

/// Start-up failed: a service did not answer or the schema could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot connect to PostgreSQL: {0}")]
    Postgres(#[source] sqlx::Error),
    #[error("cannot connect to Redis: {0}")]
    Redis(#[source] redis::RedisError),
    #[error("cannot apply migrations: {0}")]
    Migrate(#[source] sqlx::migrate::MigrateError),
    #[error("cannot rewrite stored phones in E.164 form: {0}")]
    LegacyPhones(#[source] sqlx::Error),
    #[error("cannot name the receipt key of older draws: {0}")]
    ReceiptKeys(#[source] sqlx::Error),
    #[error("cannot read the session signing key: {0}")]
    SessionKey(String),
    #[error("cannot read the revoked sessions: {0}")]
    Revocations(String),
    #[error("cannot make the HTTP client: {0}")]
    Http(#[source] reqwest::Error),
}

/// Handles to the backing services. Cheap to clone (one shared allocation): every request
/// clones it into its handler.
#[derive(Clone)]
pub struct Core(Arc<CoreParts>);

impl std::ops::Deref for Core {
    type Target = CoreParts;

    fn deref(&self) -> &CoreParts {
        &self.0
    }
}

/// What a [`Core`] holds.
pub struct CoreParts {
    pub db: PgPool,
    /// Shared, multiplexed and reconnecting, on one node or a cluster. Its commands time out
    /// after [`Core::REDIS_RESPONSE_TIMEOUT`]; never block on it (`XREADGROUP BLOCK`, `BLPOP`).
    pub redis: Redis,
    pub keys: Keys,
    pub config: Arc<Config>,
    /// Locks on the same Redis (fenced work: voucher preloads, singleton jobs, draws), with
    /// short leases renewed while held (`SECKILL_LOCK_LEASE_MS`): work whose instance died is
    /// taken up by another within seconds.
    pub locks: LockClient,
    /// Takes payments for orders (Stripe, or the dev provider; see `orders::payment`).
    pub payments: Arc<dyn PaymentProvider>,
    /// Sessions from before signed tokens, read from Redis a moment ago
    /// (`SECKILL_SESSION_CACHE_MS`).
    pub sessions: Arc<TtlMap<String, Principal>>,
    /// What signs and verifies sessions (`SECKILL_SESSION_KEYS`, or the key kept in Redis).
    pub session_keys: crate::auth::token::SessionKeys,
    /// Signed sessions revoked before their expiry, as this instance knows them.
    pub revocations: crate::auth::revocations::Revocations,
    /// Sales that refused every buyer a moment ago (`SECKILL_SOLD_OUT_TTL_MS`).
    pub refusals: Arc<Refusals>,
    /// The buyers of the sales refused here (`SECKILL_SOLD_OUT_BUYERS_MS`, forgotten when a unit
    /// comes back).
    pub sold_out: Arc<crate::sale::sold_out::SoldOutBuyers>,
    /// The catalog's rows read a moment ago (`SECKILL_CATALOG_CACHE_MS`, refreshed on change).
    pub catalog: crate::catalog::cache::CatalogCache,
    /// The largest voucher ID known: a buy past it is refused before any lane or query.
    pub known: crate::sale::known::KnownVouchers,
    /// Buys gathered into batched admission calls, per voucher (`SECKILL_ADMIT_*`).
    pub admissions: Arc<Admissions>,
    /// A draw's entries gathered into batched calls the same way.
    pub entries: Arc<Entries>,
    /// Draw sales' terms read from PostgreSQL (fixed at creation).
    pub(crate) draw_terms: TtlMap<crate::domain::VoucherId, crate::draw::Terms>,
    /// Recorded draws as published (`GET …/draw`), kept for an hour, a few at a time.
    pub(crate) draw_reveals: TtlMap<crate::domain::VoucherId, Arc<crate::draw::memory::Revealed>>,
    /// Closed entry logs' leaves, sorted (the root's and the proofs' input), a few at a time.
    pub(crate) draw_leaves:
        TtlMap<crate::domain::VoucherId, Arc<crate::draw::memory::ClosedLeaves>>,
    /// Held while this instance reads a draw's leaves or its recorded ranking into the two
    /// caches above: the crowd asking at a close or a draw waits for one read, not one each.
    pub(crate) draw_loading: tokio::sync::Mutex<()>,
    /// The public randomness beacon draws wait for (`None`: draws run without one).
    pub(crate) beacon: Option<Arc<crate::draw::beacon::Beacon>>,
    /// Held while this instance reconciles a sale after its Redis master changed
    /// (`catalog::reconcile`).
    pub(crate) reconciling: tokio::sync::Mutex<()>,
    /// Outgoing HTTP (the SMS gateway's webhook; the payment provider holds a clone).
    pub(crate) http: reqwest::Client,
    /// The sales open pages watch on this instance (`live::run` pushes their changes).
    pub live: Arc<crate::sale::live::Live>,
    /// Owns the work started off a request's path (the lanes and their calls, a sold-out sale's
    /// buyers read, a refund made off a webhook): [`Core::stop_background`] stops and awaits it.
    tasks: tokio_util::task::TaskTracker,
    /// Cancelled by [`Core::stop_background`].
    stopping: tokio_util::sync::CancellationToken,
    /// Bumped whenever a voucher changes (created, ended, stock added) here or on another
    /// instance, so renderings and rows kept from before are not answered again.
    catalog_epoch: std::sync::atomic::AtomicU64,
    deployment: Deployment,
}

impl Core {
    /// A reply slower than this on the shared connection is an error, not a stall.
    pub const REDIS_RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

    /// Connects to PostgreSQL and Redis as configured (no migrations; see [`Core::migrate`]).
    pub async fn connect(config: Config) -> Result<Self, ConnectError> {
        let db = store::connect(config.database_url.expose(), config.db_max_connections)
            .await
            .map_err(ConnectError::Postgres)?;
        Self::with_pool(config, db).await
    }

    /// Like [`Core::connect`], with a PostgreSQL pool made elsewhere (tests: one database each).
    pub async fn with_pool(config: Config, db: PgPool) -> Result<Self, ConnectError> {
        let links = Links::open(&config).await?;
        let core = Self(Arc::new(CoreParts::assemble(config, db, links)));
        // Known before the first request; the subscription and the reload job keep it fresh.
        core.load_revocations().await?;
        Ok(core)
    }

    /// Starts `work` off a request's path, owned by this instance (awaited at shutdown).
    pub fn spawn<F>(&self, work: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.tasks.spawn(work);
    }

    /// Shutdown: the lanes stop taking requests and decide those they hold; then waits up to
    /// `within` for every task [`Core::spawn`] and the lanes started. Whether they all ended.
    pub async fn stop_background(&self, within: Duration) -> bool {
        self.stopping.cancel();
        self.tasks.close();
        tokio::time::timeout(within, self.tasks.wait())
            .await
            .is_ok()
    }

    /// Notes that a voucher changed, here or (announced by pub/sub) on another instance: see
    /// [`Core::catalog_epoch`].
    pub fn catalog_changed(&self) {
        self.catalog_epoch
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// How many voucher changes this instance has heard of: what a rendering or a catalog row
    /// was made under.
    pub fn catalog_epoch(&self) -> u64 {
        self.catalog_epoch
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Checks Redis against `SECKILL_DURABILITY`: `fsync` is made to hold or start-up fails.
    pub async fn check_durability(&self) -> Result<(), crate::DurabilityError> {
        crate::infra::durability::ensure(&self.redis, self.config.durability, self.config.replicas)
            .await
    }

    /// Applies the embedded migrations, then rewrites phones stored as typed into E.164.
    pub async fn migrate(&self) -> Result<(), ConnectError> {
        store::migrate(&self.db)
            .await
            .map_err(ConnectError::Migrate)?;
        let (rewritten, left) =
            store::users::rewrite_legacy_phones(&self.db, self.config.auth.country)
                .await
                .map_err(ConnectError::LegacyPhones)?;
        if rewritten > 0 {
            tracing::info!(rewritten, "phones rewritten in E.164 form");
        }
        if left > 0 {
            tracing::warn!(
                left,
                "accounts whose phone has a newer E.164 account were left as they were"
            );
        }
        let key = self.config.draw.receipt_key.public();
        let adopted = store::draws::adopt_receipt_key(&self.db, &key)
            .await
            .map_err(ConnectError::ReceiptKeys)?;
        if adopted > 0 {
            tracing::info!(
                adopted,
                "draws created before receipts named their key now name this one"
            );
        }
        // Read again now that PostgreSQL's lists exist (the first start of a version that
        // keeps them read none at connect).
        self.load_revocations().await
    }

    /// Reads the revoked sessions from both stores, waiting for a Redis still loading its
    /// dataset: before the first request.
    async fn load_revocations(&self) -> Result<(), ConnectError> {
        once_loaded(|| {
            self.revocations.reload(
                &self.db,
                (&self.redis, &self.keys),
                self.config.auth.session_ttl,
                crate::auth::revocations::Need::Both,
            )
        })
        .await
        .map_err(|e| ConnectError::Revocations(e.to_string()))
    }

    /// A dedicated connection whose replies may take up to `timeout`: for blocking reads and
    /// pub/sub waits that would stall everyone on the shared connection.
    pub async fn dedicated_connection(
        &self,
        timeout: Duration,
    ) -> Result<Redis, redis::RedisError> {
        self.deployment.dedicated(timeout).await
    }

    /// Where Redis is (one node or a cluster), to open pub/sub and dedicated connections.
    pub fn redis_deployment(&self) -> &Deployment {
        &self.deployment
    }
}

impl CoreParts {
    /// Every part's state on the stores `links` reached.
    fn assemble(config: Config, db: PgPool, links: Links) -> Self {
        let Links {
            deployment,
            redis,
            keys,
            session_keys,
            http,
            replicated,
        } = links;
        let tasks = tokio_util::task::TaskTracker::new();
        let stopping = tokio_util::sync::CancellationToken::new();
        let owner = || (tasks.clone(), stopping.clone());
        // Shared with the buys' lanes, which answer a batch from them once its sale refuses all.
        let refusals = Arc::new(TtlMap::new(config.memo.refusal_ttl, MEMO_CAP));
        let sold_out = Arc::new(crate::sale::sold_out::SoldOutBuyers::new(
            config.memo.sold_out_buyers_ttl,
            tasks.clone(),
        ));
        Self {
            db: db.clone(),
            redis: redis.clone(),
            locks: LockClient::single(
                deployment.clone(),
                keys.clone(),
                LockOptions {
                    lease: config.lock_lease,
                    ..LockOptions::default()
                },
            ),
            payments: crate::orders::payment::from_settings(
                &config.payments.provider,
                http.clone(),
            ),
            sessions: Arc::new(TtlMap::new(config.memo.session_ttl, MEMO_CAP)),
            session_keys,
            revocations: crate::auth::revocations::Revocations::default(),
            refusals: Arc::clone(&refusals),
            known: crate::sale::known::KnownVouchers::default(),
            sold_out: Arc::clone(&sold_out),
            catalog: crate::catalog::cache::CatalogCache::new(
                config.memo.catalog_ttl,
                config.memo.stock_read_ttl,
            ),
            admissions: Admissions::new(
                redis.clone(),
                replicated.clone(),
                keys.clone(),
                config.limits.buys_per_second,
                crate::sale::deciders::Refused {
                    refusals,
                    buyers: sold_out,
                },
                config.admissions.clone(),
                owner(),
            ),
            entries: Entries::new(
                db.clone(),
                redis,
                replicated,
                keys.clone(),
                config.admissions.clone(),
                owner(),
            ),
            draw_terms: TtlMap::new(Duration::from_secs(3_600), MEMO_CAP),
            draw_reveals: TtlMap::new(Duration::from_secs(3_600), 16),
            draw_leaves: TtlMap::new(Duration::from_secs(3_600), 16),
            beacon: config
                .draw
                .beacon
                .clone()
                .map(|b| Arc::new(crate::draw::beacon::Beacon::new(b, http.clone()))),
            draw_loading: tokio::sync::Mutex::new(()),
            reconciling: tokio::sync::Mutex::new(()),
            live: crate::sale::live::Live::new(),
            http,
            catalog_epoch: std::sync::atomic::AtomicU64::new(0),
            tasks: tasks.clone(),
            stopping: stopping.clone(),
            keys,
            config: Arc::new(config),
            deployment,
        }
    }
}
