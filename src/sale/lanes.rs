//! Batched calls (design.md §8, decision 19): the requests for one voucher that arrive while this
//! instance's previous calls for it are in flight are decided together, by one script call that
//! takes each request in arrival order and answers each one. Buys ([`Admissions`], `lua/admit.lua`)
//! and a draw's entries ([`Entries`], `lua/enter.lua`, then one insert into PostgreSQL's entry log
//! for the batch: an entry is answered once it is durable, decision 42) are batched this way.
//!
//! Each voucher has a *lane*: a channel and a task. The task takes the first request
//! waiting, waits for one of `in_flight` call slots, then takes every request that queued meanwhile
//! (up to `max_batch`) and sends them as one call. Nothing waits on a timer: a request that finds a
//! free slot leaves at once (a batch of one, no added latency when the sale is quiet); under a
//! rush the batches grow with the wait for a slot, so one round trip and one script dispatch
//! serve many shoppers. The scripts decide a batch exactly as they would decide the same requests
//! one by one, so the invariants and every shopper's answer are those of single calls.
//!
//! A lane idle for `SECKILL_ADMIT_LANE_IDLE_MS` closes itself: it leaves the map first, so a new
//! request opens a new lane, then closes its channel and still decides every request already in
//! it. A request whose send finds the channel closed opens a new lane and sends again (it was not
//! decided).

use std::{
    collections::HashMap,
    future::Future,
    sync::{
        atomic::{AtomicU64, Ordering},
        Arc, Mutex,
    },
};

use tokio::sync::{mpsc, oneshot, Semaphore};

use crate::{
    config::AdmissionConfig,
    domain::{UserId, VoucherId},
    infra::backend::Backend,
    infra::durability::ReplicaWait,
    infra::keys::Keys,
    infra::redis_conn::Redis,
    infra::scripts::{self, AdmissionOutcome, EntryOutcome},
    infra::store::draw_log::{self, LoggedEntry},
};

/// A batch's call failed: every buy in it gets this, shared.
pub type AdmitResult = Result<AdmissionOutcome, Backend>;

/// How one kind of request is decided, a batch per script call.
pub trait Decide: Send + Sync + 'static {
    /// What each shopper's answer is.
    type Outcome: Send + 'static;
    /// The metric's and the log's name for it.
    const NAME: &'static str;

    /// One call deciding `users`' requests on `voucher`, in order: one outcome each.
    fn decide(
        &self,
        redis: &mut Redis,
        voucher: VoucherId,
        users: &[UserId],
        wait: Option<ReplicaWait>,
    ) -> impl Future<Output = Result<Vec<Self::Outcome>, Backend>> + Send;
}

/// Buys: `lua/admit.lua`.
pub struct Admit {
    keys: Keys,
    attempts_per_second: u32,
}

impl Decide for Admit {
    type Outcome = AdmissionOutcome;
    const NAME: &'static str = "admission";

    async fn decide(
        &self,
        redis: &mut Redis,
        voucher: VoucherId,
        users: &[UserId],
        wait: Option<ReplicaWait>,
    ) -> Result<Vec<AdmissionOutcome>, Backend> {
        scripts::admit_batch(
            redis,
            &self.keys,
            voucher,
            users,
            self.attempts_per_second,
            wait,
        )
        .await
    }
}

/// A draw's entries: `lua/enter.lua` decides (the window by the Redis clock, the duplicate
/// check), then the batch's admitted entries are logged in PostgreSQL in one statement; an
/// entry is answered only once its log row is committed.
pub struct Enter {
    keys: Keys,
    db: sqlx::PgPool,
}

/// An entry decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryDecision {
    /// In the draw's log (`new`: logged by this request); `entrants` as Redis counts them.
    Logged {
        entry: LoggedEntry,
        entrants: i64,
        new: bool,
    },
    /// Refused by the script (or, as `Closed`, by the log closed meanwhile).
    Refused(EntryOutcome),
}

impl Decide for Enter {
    type Outcome = EntryDecision;
    const NAME: &'static str = "entry";

    async fn decide(
        &self,
        redis: &mut Redis,
        voucher: VoucherId,
        users: &[UserId],
        wait: Option<ReplicaWait>,
    ) -> Result<Vec<EntryDecision>, Backend> {
        let outcomes =
            scripts::enter_batch(redis, &self.keys.voucher(voucher), users, wait).await?;
        // Entered before counts too: the first request's insert may have failed after Redis
        // took it (the shopper was answered 503 and tries again), so it is logged now.
        let admitted: Vec<UserId> = users
            .iter()
            .zip(&outcomes)
            .filter(|(_, o)| {
                matches!(
                    o,
                    EntryOutcome::Entered { .. } | EntryOutcome::AlreadyEntered { .. }
                )
            })
            .map(|(u, _)| *u)
            .collect();
        let mut logged: HashMap<UserId, LoggedEntry> = draw_log::log(&self.db, voucher, &admitted)
            .await?
            .into_iter()
            .map(|e| (e.user, e))
            .collect();
        Ok(users
            .iter()
            .zip(outcomes)
            .map(|(user, outcome)| match outcome {
                EntryOutcome::Entered { entrants } | EntryOutcome::AlreadyEntered { entrants } => {
                    match logged.remove(user) {
                        Some(entry) => EntryDecision::Logged {
                            new: matches!(outcome, EntryOutcome::Entered { .. }),
                            entry,
                            entrants,
                        },
                        // The log closed between the script and the insert.
                        None => EntryDecision::Refused(EntryOutcome::Closed),
                    }
                }
                refused => EntryDecision::Refused(refused),
            })
            .collect())
    }
}

/// The buys' lanes.
pub type Admissions = Lanes<Admit>;
/// The entries' lanes.
pub type Entries = Lanes<Enter>;

/// `SECKILL_DURABILITY=replicated`: each batch's call is followed by `WAIT` on the connection
/// that ran it. A `WAIT` holds its connection until the replicas answer, so the lanes take turns
/// on connections of their own.
pub struct Replicated {
    pub connections: Vec<Redis>,
    pub wait: ReplicaWait,
}

/// The lanes of one kind of request on one instance.
pub struct Lanes<D: Decide> {
    lanes: Mutex<HashMap<VoucherId, Lane<D::Outcome>>>,
    redis: Redis,
    replicated: Option<Arc<Replicated>>,
    decider: D,
    config: AdmissionConfig,
    next_lane: AtomicU64,
    calls: AtomicU64,
}

struct Lane<O> {
    id: u64,
    sender: mpsc::Sender<Pending<O>>,
}

struct Pending<O> {
    user: UserId,
    reply: oneshot::Sender<Result<O, Backend>>,
}

impl<D: Decide> std::fmt::Debug for Lanes<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("kind", &D::NAME)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Admissions {
    pub fn new(
        redis: Redis,
        replicated: Option<Arc<Replicated>>,
        keys: Keys,
        attempts_per_second: u32,
        config: AdmissionConfig,
    ) -> Arc<Self> {
        Lanes::with(
            redis,
            replicated,
            Admit {
                keys,
                attempts_per_second,
            },
            config,
        )
    }

    /// Decides `user`'s purchase of `voucher`, in a batch with the buys for it arriving
    /// meanwhile. Must run inside a Tokio runtime (lanes are tasks).
    pub async fn admit(self: &Arc<Self>, voucher: VoucherId, user: UserId) -> AdmitResult {
        self.submit(voucher, user).await
    }
}

impl Entries {
    pub fn new(
        db: sqlx::PgPool,
        redis: Redis,
        replicated: Option<Arc<Replicated>>,
        keys: Keys,
        config: AdmissionConfig,
    ) -> Arc<Self> {
        Lanes::with(redis, replicated, Enter { keys, db }, config)
    }

    /// Decides `user`'s entry into `voucher`'s draw, in a batch with the entries arriving
    /// meanwhile, and logs it.
    pub async fn enter(
        self: &Arc<Self>,
        voucher: VoucherId,
        user: UserId,
    ) -> Result<EntryDecision, Backend> {
        self.submit(voucher, user).await
    }
}

impl<D: Decide> Lanes<D> {
    /// Requests waiting in one lane before new ones wait to be queued (back-pressure).
    const QUEUE: usize = 4_096;

    fn with(
        redis: Redis,
        replicated: Option<Arc<Replicated>>,
        decider: D,
        config: AdmissionConfig,
    ) -> Arc<Self> {
        Arc::new(Self {
            lanes: Mutex::new(HashMap::new()),
            redis,
            replicated,
            decider,
            config,
            next_lane: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        })
    }

    /// Decides `user`'s request on `voucher` in its lane's next batch.
    async fn submit(
        self: &Arc<Self>,
        voucher: VoucherId,
        user: UserId,
    ) -> Result<D::Outcome, Backend> {
        let (reply, answer) = oneshot::channel();
        let mut pending = Pending { user, reply };
        // A lane closing between our lookup and our send refuses the send: open a new one.
        // Each retry finds the closed lane gone from the map, so this ends.
        loop {
            let sender = self.lane(voucher);
            match sender.send(pending).await {
                Ok(()) => break,
                Err(mpsc::error::SendError(back)) => pending = back,
            }
        }
        // A lane answers every buy it received; a dropped reply would be a bug, not a refusal.
        answer
            .await
            .unwrap_or_else(|_| Err(Backend::unknown_reply(D::NAME, &[])))
    }

    #[cfg(feature = "testing")]
    /// Admission script calls made so far (each decides one batch).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    #[cfg(feature = "testing")]
    /// Vouchers with an open lane.
    pub fn open_lanes(&self) -> usize {
        self.lanes.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// The open lane of `voucher`, opened if there is none.
    fn lane(self: &Arc<Self>, voucher: VoucherId) -> mpsc::Sender<Pending<D::Outcome>> {
        let mut lanes = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(lane) = lanes.get(&voucher) {
            if !lane.sender.is_closed() {
                return lane.sender.clone();
            }
        }
        let (sender, receiver) = mpsc::channel(Self::QUEUE);
        let id = self.next_lane.fetch_add(1, Ordering::Relaxed);
        lanes.insert(
            voucher,
            Lane {
                id,
                sender: sender.clone(),
            },
        );
        tokio::spawn(Arc::clone(self).run_lane(voucher, id, receiver));
        sender
    }

    /// One lane's task: batches until idle, then closes and drains.
    async fn run_lane(
        self: Arc<Self>,
        voucher: VoucherId,
        id: u64,
        mut queue: mpsc::Receiver<Pending<D::Outcome>>,
    ) {
        let slots = Arc::new(Semaphore::new(self.config.in_flight));
        loop {
            let first = match tokio::time::timeout(self.config.lane_idle, queue.recv()).await {
                Ok(Some(first)) => first,
                Ok(None) => break,
                Err(_idle) => {
                    self.forget_lane(voucher, id);
                    queue.close();
                    match queue.recv().await {
                        Some(first) => first,
                        None => break,
                    }
                }
            };
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                break;
            };
            let mut batch = vec![first];
            while batch.len() < self.config.max_batch {
                match queue.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
            let lanes = Arc::clone(&self);
            tokio::spawn(async move {
                lanes.decide(voucher, batch).await;
                drop(slot);
            });
        }
    }

    /// Removes lane `id` of `voucher` from the map, unless a newer lane took its place.
    fn forget_lane(&self, voucher: VoucherId, id: u64) {
        let mut lanes = self.lanes.lock().unwrap_or_else(|p| p.into_inner());
        if lanes.get(&voucher).is_some_and(|lane| lane.id == id) {
            lanes.remove(&voucher);
        }
    }

    /// One script call for `batch`; each request gets its own outcome (or the call's error).
    async fn decide(&self, voucher: VoucherId, batch: Vec<Pending<D::Outcome>>) {
        let users: Vec<UserId> = batch.iter().map(|p| p.user).collect();
        metrics::histogram!("seckill_batch_size", "kind" => D::NAME).record(users.len() as f64);
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let (mut redis, wait) = match &self.replicated {
            None => (self.redis.clone(), None),
            Some(r) => {
                let turn = usize::try_from(call).unwrap_or(0) % r.connections.len().max(1);
                let redis = r.connections.get(turn).unwrap_or(&self.redis).clone();
                (redis, Some(r.wait))
            }
        };
        let result = self.decider.decide(&mut redis, voucher, &users, wait).await;
        if let Err(Backend::NotReplicated { acked, wanted }) = &result {
            // Per batch, so not a warning each (a replica's outage is thousands a second): the
            // metric counts them, and the order writer warns once per batch it holds.
            tracing::debug!(%voucher, acked, wanted, shoppers = users.len(), kind = D::NAME,
                "a batch was not replicated in time: answered 503");
            metrics::counter!("seckill_batches_unreplicated_total", "kind" => D::NAME).increment(1);
        }
        match result {
            Ok(outcomes) => {
                for (pending, outcome) in batch.into_iter().zip(outcomes) {
                    // A shopper who gave up waiting dropped the receiver; the outcome stands
                    // (a retried buy learns it as "already bought").
                    let _ = pending.reply.send(Ok(outcome));
                }
            }
            Err(e) => {
                let e = Arc::new(e);
                for pending in batch {
                    let _ = pending.reply.send(Err(Backend::Shared(Arc::clone(&e))));
                }
            }
        }
    }
}
