//! Distributed lock on Redis: owner-safe, reentrant, self-renewing, woken by pub/sub, fenced,
//! and RedLock over N independent masters.
//!
//! # Guarantees
//! - **Owner-safe**: a lock is a hash `{owner, count, fence}`; release and renewal are Lua
//!   compare-and-act on the owner, so nobody frees or extends a lock they do not hold.
//! - **Reentrant**: the owner is this process's UUID plus the current tokio task's ID; the same
//!   task acquiring again increments a count, and the lock is freed when the count is zero.
//! - **Leases in milliseconds, renewed by a watchdog**: while a [`LockGuard`] lives, its lease is
//!   extended every lease/3. Release or drop stops the renewal. If a renewal finds the lock gone
//!   (or cannot reach a quorum for a whole lease) the guard reports it through
//!   [`LockGuard::is_lost`] and [`LockGuard::lost`], so the holder can stop.
//! - **Waiting without busy polling**: a waiter subscribes to the lock's release channel and
//!   retries when a release is published, or when the holder's lease would have run out, with a
//!   bounded fallback poll in case a message is missed.
//! - **Fencing**: every grant carries a token from a per-name counter that never expires, so
//!   tokens strictly increase per lock name on one master; they are floored at the Redis clock
//!   in microseconds, so they keep increasing after Redis loses the counter. Stores check it
//!   (`... WHERE fence < $token`), which rejects a paused holder whose lease ran out.
//! - **RedLock**: [`LockClient::redlock`] runs the same scripts on N independent masters; a grant
//!   needs N/2+1 of them within the validity time `lease − elapsed − drift`, and a failed attempt
//!   releases on every node. A single-master lock is the same code with N = 1.
//!
//! # Limits
//! - Leases are judged by each Redis's clock; a master that loses the lock key (restart without
//!   persistence, failover to a lagging replica) can grant it twice. RedLock narrows that to a
//!   minority of nodes; fencing is what makes the *store* safe.
//! - With RedLock the fencing token is the largest of the quorum's counters, which is not
//!   guaranteed to increase across grants (different quorums); fenced work should use a
//!   single-master lock, as the product does.
//! - Reentrancy is per tokio task: a lock taken in one task and re-acquired from a spawned task
//!   is contended, not re-entered.

mod guard;
mod node;

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use tokio::time::Instant;
use uuid::Uuid;

pub use guard::LockGuard;
use node::Node;

use crate::infra::{
    backend::{backend_error, Backend, Unavailable},
    keys::{Keys, LockKeys},
    redis_conn::Deployment,
    scripts::LockGrant,
};

/// A lock operation failed.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("lock: {0}")]
    Backend(#[from] Backend),
    #[error("the lock {0} is not held by this owner")]
    NotOwner(String),
    #[error("no quorum: {reached} of {needed} nodes answered")]
    NoQuorum { reached: usize, needed: usize },
    #[error("timed out waiting for the lock {0}")]
    Timeout(String),
}

backend_error!(LockError);

impl Unavailable for LockError {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Backend(e) => e.is_unavailable(),
            Self::NoQuorum { .. } | Self::Timeout(_) => true,
            Self::NotOwner(_) => false,
        }
    }
}

/// Lease and waiting policy.
#[derive(Debug, Clone, Copy)]
pub struct LockOptions {
    /// How long a grant lasts without renewal.
    pub lease: Duration,
    /// Renew every lease/3 while the guard lives (Redisson's watchdog). Without it the lock
    /// simply expires after `lease`.
    pub watchdog: bool,
    /// Longest sleep between two attempts when no release message arrives.
    pub fallback_poll: Duration,
    /// Per-node reply bound, so a dead master costs little.
    pub node_timeout: Duration,
}

impl Default for LockOptions {
    fn default() -> Self {
        Self {
            lease: Duration::from_secs(30),
            watchdog: true,
            fallback_poll: Duration::from_millis(250),
            node_timeout: Duration::from_millis(200),
        }
    }
}

struct Shared {
    nodes: Vec<Node>,
    quorum: usize,
    keys: Keys,
    process: Uuid,
    options: LockOptions,
}

/// Hands out locks on one master, or on N masters (RedLock). Cheap to clone.
#[derive(Clone)]
pub struct LockClient {
    shared: Arc<Shared>,
}

impl LockClient {
    /// Locks on one Redis deployment: a single master, or a Redis Cluster (each lock name on
    /// the master of its slot).
    pub fn single(deployment: Deployment, keys: Keys, options: LockOptions) -> Self {
        Self::on(vec![deployment], keys, options)
    }

    /// RedLock over independent masters: a grant needs `nodes.len() / 2 + 1` of them. (A
    /// separate setting from a Redis Cluster: its masters are not independent of each other.)
    pub fn redlock(clients: Vec<redis::Client>, keys: Keys, options: LockOptions) -> Self {
        Self::on(
            clients.into_iter().map(Deployment::Single).collect(),
            keys,
            options,
        )
    }

    fn on(deployments: Vec<Deployment>, keys: Keys, options: LockOptions) -> Self {
        let quorum = deployments.len() / 2 + 1;
        let nodes = deployments
            .into_iter()
            .map(|d| Node::new(d, options.node_timeout))
            .collect();
        Self {
            shared: Arc::new(Shared {
                nodes,
                quorum,
                keys,
                process: Uuid::new_v4(),
                options,
            }),
        }
    }

    /// The owner identity of the calling task.
    fn owner(&self) -> String {
        let task = match tokio::task::try_id() {
            Some(id) => format!("task-{id}"),
            None => format!("thread-{:?}", std::thread::current().id()),
        };
        format!("{}:{task}", self.shared.process)
    }

    /// One attempt on every node. `Ok(Some(guard))` on a grant, `Ok(None)` with the shortest
    /// remaining lease of the holder (to know when to try again) otherwise.
    async fn attempt(&self, name: &str) -> Result<Result<LockGuard, Option<Duration>>, LockError> {
        let s = &self.shared;
        let keys = s.keys.lock(name);
        let owner = self.owner();
        let lease_ms = millis(s.options.lease);
        let started = Instant::now();
        let replies =
            futures::future::join_all(s.nodes.iter().map(|n| n.acquire(&keys, &owner, lease_ms)))
                .await;
        let mut fence = None::<i64>;
        let mut granted = 0;
        let mut holder_ttl = None::<i64>;
        let mut answered = 0;
        for reply in &replies {
            match reply {
                Ok(LockGrant::Granted { fence: f }) => {
                    granted += 1;
                    answered += 1;
                    fence = Some(fence.map_or(*f, |g| g.max(*f)));
                }
                Ok(LockGrant::Held { ttl_ms }) => {
                    answered += 1;
                    holder_ttl = Some(holder_ttl.map_or(*ttl_ms, |t| t.min(*ttl_ms)));
                }
                Err(e) => tracing::debug!(lock = name, error = %e, "lock node did not answer"),
            }
        }
        // Clock drift allowance of the RedLock paper: 1% of the lease plus 2 ms.
        let drift = s.options.lease / 100 + Duration::from_millis(2);
        let validity = s.options.lease.checked_sub(started.elapsed() + drift);
        match (fence, validity) {
            (Some(fence), Some(validity)) if granted >= s.quorum => Ok(Ok(LockGuard::start(
                self.clone(),
                keys,
                owner,
                fence,
                started + validity,
            ))),
            _ => {
                if granted > 0 {
                    // A partial grant would block others until it expires: undo it everywhere.
                    self.release_everywhere(&keys, &owner).await;
                }
                if answered < s.quorum {
                    return Err(LockError::NoQuorum {
                        reached: answered,
                        needed: s.quorum,
                    });
                }
                if granted > 0 {
                    // A split vote between contenders (RedLock): nobody holds the lock, so retry
                    // soon, after a random delay that breaks the tie.
                    let jitter = rand::random_range(1..=20);
                    return Ok(Err(Some(Duration::from_millis(jitter))));
                }
                let retry = holder_ttl
                    .and_then(|t| u64::try_from(t).ok())
                    .map(Duration::from_millis);
                Ok(Err(retry))
            }
        }
    }

    /// Tries for up to `wait` (zero: a single attempt). `Ok(None)` when someone else still
    /// holds the lock at the deadline. Too few answering nodes is an error at once with a zero
    /// wait, and retried until the deadline otherwise.
    pub async fn try_acquire(
        &self,
        name: &str,
        wait: Duration,
    ) -> Result<Option<LockGuard>, LockError> {
        let deadline = Instant::now() + wait;
        match self.attempt(name).await {
            Ok(Ok(guard)) => return Ok(Some(guard)),
            Ok(Err(_)) if wait.is_zero() => return Ok(None),
            Ok(Err(_)) | Err(LockError::NoQuorum { .. }) if !wait.is_zero() => {}
            Ok(Err(_)) => return Ok(None),
            Err(e) => return Err(e),
        }
        let keys = self.shared.keys.lock(name);
        // Subscribe before the next attempt, so a release between the two is not missed.
        let mut releases = self.shared.nodes[0].subscribe(&keys.channel).await.ok();
        loop {
            let holder_ttl = match self.attempt(name).await {
                Ok(Ok(guard)) => return Ok(Some(guard)),
                Ok(Err(ttl)) => ttl,
                // Too few nodes answered this time (a restart, a slow node): waiting means
                // trying again until the deadline, then reporting it.
                Err(e @ LockError::NoQuorum { .. }) if Instant::now() < deadline => {
                    tracing::debug!(lock = name, error = %e, "no quorum; retrying");
                    None
                }
                Err(e) => return Err(e),
            };
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            let poll = self.shared.options.fallback_poll;
            let nap = holder_ttl
                .map_or(poll, |t| t.min(poll))
                .max(Duration::from_millis(1));
            let wake = (now + nap).min(deadline);
            match releases.as_mut() {
                Some(stream) => {
                    // Either a release message or the timer: both mean "try again". A stream
                    // that ended (its connection dropped: a Redis restart) would answer at
                    // once forever: fall back to the timer.
                    if let Ok(None) = tokio::time::timeout_at(wake, stream.next()).await {
                        releases = None;
                    }
                }
                None => tokio::time::sleep_until(wake).await,
            }
        }
    }

    /// Waits as long as it takes.
    pub async fn acquire(&self, name: &str) -> Result<LockGuard, LockError> {
        loop {
            if let Some(guard) = self.try_acquire(name, Duration::from_secs(3600)).await? {
                return Ok(guard);
            }
        }
    }

    async fn release_everywhere(&self, keys: &LockKeys, owner: &str) {
        let lease_ms = millis(self.shared.options.lease);
        for node in &self.shared.nodes {
            if let Err(e) = node.release(keys, owner, lease_ms).await {
                tracing::debug!(error = %e, "release on one node failed; its lease will expire");
            }
        }
    }

    pub fn options(&self) -> LockOptions {
        self.shared.options
    }

    fn quorum(&self) -> usize {
        self.shared.quorum
    }

    fn nodes(&self) -> &[Node] {
        &self.shared.nodes
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}
