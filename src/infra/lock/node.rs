//! One Redis deployment of a lock (a master, or a whole Redis Cluster where the lock name's
//! slot decides the master): a lazily (re)connected connection with a short reply bound, so a
//! dead master fails fast instead of stalling the quorum.

use std::time::Duration;

use futures::{Stream, StreamExt};
use tokio::sync::Mutex;
use uuid::Uuid;

use crate::{
    infra::backend::Backend,
    infra::keys::LockKeys,
    infra::redis_conn::{Deployment, Redis, Timeouts},
    infra::scripts::{self, LockGrant, LockRelease},
};

pub(super) struct Node {
    deployment: Deployment,
    timeout: Duration,
    conn: Mutex<Option<Redis>>,
}

/// A unique ID for one acquire or release request (a re-sent request is applied once).
fn request_id() -> String {
    Uuid::new_v4().simple().to_string()
}

impl Node {
    pub(super) fn new(deployment: Deployment, timeout: Duration) -> Self {
        Self {
            deployment,
            timeout,
            conn: Mutex::new(None),
        }
    }

    async fn connection(&self) -> Result<Redis, redis::RedisError> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let c = self
            .deployment
            .connect(Timeouts {
                response: self.timeout,
                connect: self.timeout,
            })
            .await?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Forgets a connection that failed, so the next call reconnects.
    async fn reset(&self, err: &Backend) {
        if let Backend::Redis(e) = err {
            if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() {
                *self.conn.lock().await = None;
            }
        }
    }

    pub(super) async fn acquire(
        &self,
        keys: &LockKeys,
        owner: &str,
        lease_ms: u64,
    ) -> Result<LockGrant, Backend> {
        let mut c = self.connection().await?;
        let r = scripts::lock_acquire(&mut c, keys, owner, lease_ms, &request_id()).await;
        if let Err(e) = &r {
            self.reset(e).await;
        }
        r
    }

    pub(super) async fn release(
        &self,
        keys: &LockKeys,
        owner: &str,
        lease_ms: u64,
    ) -> Result<LockRelease, Backend> {
        let mut c = self.connection().await?;
        let r = scripts::lock_release(&mut c, keys, owner, lease_ms, &request_id()).await;
        if let Err(e) = &r {
            self.reset(e).await;
        }
        r
    }

    pub(super) async fn renew(
        &self,
        keys: &LockKeys,
        owner: &str,
        lease_ms: u64,
    ) -> Result<bool, Backend> {
        let mut c = self.connection().await?;
        let r = scripts::lock_renew(&mut c, keys, owner, lease_ms).await;
        if let Err(e) = &r {
            self.reset(e).await;
        }
        r
    }

    /// Release announcements of one lock, on a pub/sub connection of its own. Classic pub/sub:
    /// on a Redis Cluster a `PUBLISH` on the lock's master reaches subscribers on every node,
    /// so the first seed node that answers will do.
    pub(super) async fn subscribe(
        &self,
        channel: &str,
    ) -> Result<impl Stream<Item = ()> + Unpin + Send, redis::RedisError> {
        let mut last = None;
        for client in self.deployment.seed_clients() {
            let opened = tokio::time::timeout(self.timeout, client.get_async_pubsub()).await;
            let mut pubsub = match opened {
                Ok(Ok(p)) => p,
                Ok(Err(e)) => {
                    last = Some(e);
                    continue;
                }
                Err(_) => {
                    last = Some(std::io::Error::from(std::io::ErrorKind::TimedOut).into());
                    continue;
                }
            };
            pubsub.subscribe(channel).await?;
            return Ok(pubsub.into_on_message().map(|_| ()));
        }
        Err(last.unwrap_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "no Redis node to subscribe on",
            )
            .into()
        }))
    }
}
