//! Batched admissions (design.md §8, decision 19): the buys for one voucher that arrive while this instance's
//! previous admission calls for it are in flight are decided together, by one call of
//! `lua/admit.lua` that takes each shopper in arrival order and answers each one.
//!
//! Each voucher being bought has a *lane*: a channel and a task. The task takes the first buy
//! waiting, waits for one of `in_flight` call slots, then takes every buy that queued meanwhile
//! (up to `max_batch`) and sends them as one call. Nothing waits on a timer: a buy that finds a
//! free slot leaves at once (a batch of one, no added latency when the sale is quiet); under a
//! rush the batches grow with the wait for a slot, so one round trip and one script dispatch
//! serve many shoppers. The script decides the batch exactly as it would decide the same buys
//! one by one, so the invariants and every shopper's answer are those of single calls.
//!
//! A lane idle for `SECKILL_ADMIT_LANE_IDLE_MS` closes itself: it leaves the map first, so a new buy
//! opens a new lane, then closes its channel and still decides every buy already in it. A buy
//! whose send finds the channel closed opens a new lane and sends again (it was not decided).

use std::{
    collections::HashMap,
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
    infra::scripts::{self, AdmissionOutcome},
};

/// A batch's call failed: every buy in it gets this, shared.
pub type AdmitResult = Result<AdmissionOutcome, Backend>;

/// `SECKILL_DURABILITY=replicated`: each batch's call is followed by `WAIT` on the connection
/// that ran it. A `WAIT` holds its connection until the replicas answer, so the lanes take turns
/// on connections of their own.
pub struct Replicated {
    pub connections: Vec<Redis>,
    pub wait: ReplicaWait,
}

/// The admission lanes of one instance.
pub struct Admissions {
    lanes: Mutex<HashMap<VoucherId, Lane>>,
    redis: Redis,
    replicated: Option<Replicated>,
    keys: Keys,
    attempts_per_second: u32,
    config: AdmissionConfig,
    next_lane: AtomicU64,
    calls: AtomicU64,
}

struct Lane {
    id: u64,
    sender: mpsc::Sender<Pending>,
}

struct Pending {
    user: UserId,
    reply: oneshot::Sender<AdmitResult>,
}

impl std::fmt::Debug for Admissions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Admissions")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Admissions {
    /// Buys waiting in one lane before new ones wait to be queued (back-pressure).
    const QUEUE: usize = 4_096;

    pub fn new(
        redis: Redis,
        replicated: Option<Replicated>,
        keys: Keys,
        attempts_per_second: u32,
        config: AdmissionConfig,
    ) -> Arc<Self> {
        Arc::new(Self {
            lanes: Mutex::new(HashMap::new()),
            redis,
            replicated,
            keys,
            attempts_per_second,
            config,
            next_lane: AtomicU64::new(0),
            calls: AtomicU64::new(0),
        })
    }

    /// Decides `user`'s purchase of `voucher`, in a batch with the buys for it arriving
    /// meanwhile. Must run inside a Tokio runtime (lanes are tasks).
    pub async fn admit(self: &Arc<Self>, voucher: VoucherId, user: UserId) -> AdmitResult {
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
            .unwrap_or_else(|_| Err(Backend::unknown_reply("admit", &[])))
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
    fn lane(self: &Arc<Self>, voucher: VoucherId) -> mpsc::Sender<Pending> {
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
        mut queue: mpsc::Receiver<Pending>,
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

    /// One script call for `batch`; each buy gets its own outcome (or the call's error).
    async fn decide(&self, voucher: VoucherId, batch: Vec<Pending>) {
        let users: Vec<UserId> = batch.iter().map(|p| p.user).collect();
        metrics::histogram!("seckill_admission_batch_size").record(users.len() as f64);
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let (mut redis, wait) = match &self.replicated {
            None => (self.redis.clone(), None),
            Some(r) => {
                let turn = usize::try_from(call).unwrap_or(0) % r.connections.len().max(1);
                let redis = r.connections.get(turn).unwrap_or(&self.redis).clone();
                (redis, Some(r.wait))
            }
        };
        let result = scripts::admit_batch(
            &mut redis,
            &self.keys,
            voucher,
            &users,
            self.attempts_per_second,
            wait,
        )
        .await;
        if let Err(Backend::NotReplicated { acked, wanted }) = &result {
            // Per batch, so not a warning each (a replica's outage is thousands a second): the
            // metric counts them, and the order writer warns once per batch it holds.
            tracing::debug!(%voucher, acked, wanted, shoppers = users.len(),
                "an admission batch was not replicated in time: answered 503");
            metrics::counter!("seckill_admissions_unreplicated_total").increment(1);
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
