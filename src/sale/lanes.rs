//! Batched calls (design.md §8, decision 19): the requests for one voucher that arrive while this
//! instance's previous calls for it are in flight are decided together, by one script call that
//! takes each request in arrival order and answers each one. Buys (`Admissions`, `lua/admit.lua`)
//! and a draw's entries (`Entries`, `lua/enter.lua`, then one insert into PostgreSQL's entry log
//! for the batch: an entry is answered once it is durable, decision 42) are batched this way
//! (`deciders.rs` says how each kind is decided).
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
use tokio_util::{sync::CancellationToken, task::TaskTracker};

use crate::{
    config::AdmissionConfig,
    domain::{UserId, VoucherId},
    infra::backend::Backend,
    infra::durability::ReplicaWait,
    infra::redis_conn::Redis,
};

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
    /// Owns every lane's task and every batch's call (the instance waits for them at shutdown).
    tasks: TaskTracker,
    /// Cancelled at shutdown: each lane stops taking requests and decides those it holds.
    stopping: CancellationToken,
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

impl<D: Decide> Lanes<D> {
    /// Requests waiting in one lane before new ones wait to be queued (back-pressure).
    const QUEUE: usize = 4_096;

    pub(super) fn with(
        redis: Redis,
        replicated: Option<Arc<Replicated>>,
        decider: D,
        config: AdmissionConfig,
        (tasks, stopping): (TaskTracker, CancellationToken),
    ) -> Arc<Self> {
        Arc::new(Self {
            lanes: Mutex::new(HashMap::new()),
            tasks,
            stopping,
            redis,
            replicated,
            decider,
            config,
            next_lane: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        })
    }

    /// Decides `user`'s request on `voucher` in its lane's next batch.
    pub(super) async fn submit(
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
        self.tasks
            .spawn(Arc::clone(self).run_lane(voucher, id, receiver));
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
            // `Err`: idle for `lane_idle`, or the instance is stopping (idleness, without the
            // wait).
            let next: Result<Option<_>, ()> = tokio::select! {
                next = tokio::time::timeout(self.config.lane_idle, queue.recv()) => {
                    next.map_err(|_idle| ())
                }
                () = self.stopping.cancelled() => Err(()),
            };
            let first = match next {
                Ok(Some(first)) => first,
                Ok(None) => break,
                Err(()) => {
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
            self.tasks.spawn(async move {
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
