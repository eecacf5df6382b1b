//! What an instance reaches before any part is made (Redis, its key names, the session keys
//! kept there, the outgoing HTTP client, the admissions' own connections), and start-up's
//! patience with a Redis that is still loading.

use std::{sync::Arc, time::Duration};

use super::{ConnectError, Core};
use crate::{
    config::Config,
    infra::keys::Keys,
    infra::redis_conn::{Deployment, Redis, Timeouts},
};

/// What an instance reaches before any part is made: Redis (one node or a cluster), its key
/// names, the session keys kept there, the outgoing HTTP client and the admissions' replication
/// setting.
pub(super) struct Links {
    pub deployment: Deployment,
    pub redis: Redis,
    pub keys: Keys,
    pub session_keys: crate::auth::token::SessionKeys,
    pub http: reqwest::Client,
    pub replicated: Option<Arc<crate::sale::lanes::Replicated>>,
}

impl Links {
    pub async fn open(config: &Config) -> Result<Self, ConnectError> {
        let deployment =
            Deployment::open(config.redis_url.expose()).map_err(ConnectError::Redis)?;
        let redis = deployment
            .shared(Timeouts {
                response: Core::REDIS_RESPONSE_TIMEOUT,
                connect: crate::infra::redis_conn::CONNECT_TIMEOUT,
            })
            .await
            .map_err(ConnectError::Redis)?;
        let keys = Keys::new(config.key_prefix.clone());
        let session_keys = session_keys(config, &redis, &keys).await?;
        // Outgoing HTTP: the SMS relay (plain http on loopback or a private network), the
        // payment provider and the randomness beacon (https, with Mozilla's roots built in).
        let http = reqwest::Client::builder()
            .connect_timeout(crate::infra::redis_conn::CONNECT_TIMEOUT)
            .build()
            .map_err(ConnectError::Http)?;
        let replicated = replicated_admissions(&deployment, config).await?;
        Ok(Self {
            deployment,
            redis,
            keys,
            session_keys,
            http,
            replicated,
        })
    }
}

/// The keys sessions are signed with: configured, or one kept in Redis (made by the first
/// instance).
async fn session_keys(
    config: &Config,
    redis: &Redis,
    keys: &Keys,
) -> Result<crate::auth::token::SessionKeys, ConnectError> {
    match &config.auth.session_keys {
        Some(configured) => Ok(configured.clone()),
        None => once_loaded(|| {
            let (mut redis, keys) = (redis.clone(), keys.clone());
            async move { crate::auth::token::shared_session_key(&mut redis, &keys).await }
        })
        .await
        .map_err(|e| ConnectError::SessionKey(e.to_string()))?
        .map_err(ConnectError::SessionKey),
    }
}

/// How long start-up waits for a Redis that is loading its dataset (a restart from its AOF).
const LOADING_WAIT: Duration = Duration::from_secs(60);

/// With `SECKILL_DURABILITY=replicated`, the admission lanes' own connections and the wait
/// for replicas: a `WAIT` holds its connection until the replicas answer, so admissions do not
/// share the connection every other request uses. `None` otherwise.
async fn replicated_admissions(
    deployment: &Deployment,
    config: &Config,
) -> Result<Option<Arc<crate::sale::lanes::Replicated>>, ConnectError> {
    if config.durability != crate::Durability::Replicated {
        return Ok(None);
    }
    let wait = config.replicas;
    let mut connections = Vec::with_capacity(ADMISSION_CONNECTIONS);
    for _ in 0..ADMISSION_CONNECTIONS {
        connections.push(
            deployment
                .shared(Timeouts {
                    response: Core::REDIS_RESPONSE_TIMEOUT + wait.timeout,
                    connect: crate::infra::redis_conn::CONNECT_TIMEOUT,
                })
                .await
                .map_err(ConnectError::Redis)?,
        );
    }
    Ok(Some(Arc::new(crate::sale::lanes::Replicated {
        connections,
        wait,
    })))
}

/// Connections the admissions use when each batch waits for replicas.
const ADMISSION_CONNECTIONS: usize = 4;

/// Runs `read` until Redis has loaded its dataset: a `LOADING` answer is tried again every
/// 250 ms for up to [`LOADING_WAIT`]; any other answer, or an error, is returned at once.
pub(super) async fn once_loaded<T, F, Fut>(mut read: F) -> Result<T, crate::infra::backend::Backend>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, crate::infra::backend::Backend>>,
{
    let since = tokio::time::Instant::now();
    loop {
        match read().await {
            Err(crate::infra::backend::Backend::Redis(e))
                if e.code() == Some("LOADING") && since.elapsed() < LOADING_WAIT =>
            {
                tracing::warn!("Redis is loading its dataset; start-up waits for it");
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
            other => return other,
        }
    }
}
