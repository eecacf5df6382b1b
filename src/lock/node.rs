//! One Redis master of a lock: a lazily (re)connected multiplexed connection with a short reply
//! bound, so a dead master fails fast instead of stalling the quorum.

use std::time::Duration;

use futures::{Stream, StreamExt};
use redis::{aio::MultiplexedConnection, AsyncConnectionConfig, Client};
use tokio::sync::Mutex;

use crate::{
    keys::LockKeys,
    scripts::{self, LockGrant, LockRelease, ScriptError},
};

pub(super) struct Node {
    client: Client,
    timeout: Duration,
    conn: Mutex<Option<MultiplexedConnection>>,
}

impl Node {
    pub(super) fn new(client: Client, timeout: Duration) -> Self {
        Self {
            client,
            timeout,
            conn: Mutex::new(None),
        }
    }

    async fn connection(&self) -> Result<MultiplexedConnection, redis::RedisError> {
        let mut slot = self.conn.lock().await;
        if let Some(c) = slot.as_ref() {
            return Ok(c.clone());
        }
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout));
        let c = self
            .client
            .get_multiplexed_async_connection_with_config(&config)
            .await?;
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Forgets a connection that failed, so the next call reconnects.
    async fn reset(&self, err: &ScriptError) {
        if let ScriptError::Redis(e) = err {
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
    ) -> Result<LockGrant, ScriptError> {
        let mut c = self.connection().await?;
        let r = scripts::lock_acquire(&mut c, keys, owner, lease_ms).await;
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
    ) -> Result<LockRelease, ScriptError> {
        let mut c = self.connection().await?;
        let r = scripts::lock_release(&mut c, keys, owner, lease_ms).await;
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
    ) -> Result<bool, ScriptError> {
        let mut c = self.connection().await?;
        let r = scripts::lock_renew(&mut c, keys, owner, lease_ms).await;
        if let Err(e) = &r {
            self.reset(e).await;
        }
        r
    }

    /// Release announcements of one lock, on a pub/sub connection of its own.
    pub(super) async fn subscribe(
        &self,
        channel: &str,
    ) -> Result<impl Stream<Item = ()> + Unpin + Send, redis::RedisError> {
        let mut pubsub = tokio::time::timeout(self.timeout, self.client.get_async_pubsub())
            .await
            .map_err(|_| {
                redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut))
            })??;
        pubsub.subscribe(channel).await?;
        Ok(pubsub.into_on_message().map(|_| ()))
    }
}
