//! One Redis connection type for the whole core, on one node or on a Redis Cluster.
//!
//! `REDIS_URL` holding one URL is a single node (the embedded default); a comma-separated list
//! of seed URLs is a Redis Cluster. [`Redis`] implements `redis::aio::ConnectionLike`, so
//! scripts, commands and single-slot pipelines run the same on both; what differs (a scan or a
//! read that must see every master, a blocking read) asks [`Redis::is_cluster`] or
//! [`Deployment`]. On a cluster every command and pipeline stays inside one slot: a voucher's
//! keys share their shard's tag (`crate::infra::keys`).

use std::time::Duration;

use redis::{
    aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig, MultiplexedConnection},
    cluster::{ClusterClient, ClusterConfig},
    cluster_async::ClusterConnection,
    AsyncConnectionConfig, Client, Cmd, Pipeline, RedisFuture, RedisResult, Value,
};

/// How long opening a connection to a node may take (the shared connection, dedicated ones and
/// pub/sub subscriptions alike).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// Where Redis is: one node, or the seed nodes of a cluster.
#[derive(Clone)]
pub enum Deployment {
    Single(Client),
    Cluster {
        /// Boxed: a cluster client's settings are much larger than a node's.
        client: Box<ClusterClient>,
        /// A plain client per seed node: classic pub/sub (a `PUBLISH` on any node of a cluster
        /// reaches subscribers on every node) and per-node checks.
        seeds: Vec<Client>,
    },
}

/// How long a reply may take on the shared connection, and how long to try to connect.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub response: Duration,
    pub connect: Duration,
}

impl Deployment {
    /// Parses `REDIS_URL`: one URL, or a comma-separated list of cluster seed URLs.
    pub fn open(url: &str) -> RedisResult<Self> {
        let urls: Vec<&str> = url
            .split(',')
            .map(str::trim)
            .filter(|u| !u.is_empty())
            .collect();
        if urls.len() <= 1 {
            return Ok(Self::Single(Client::open(url.trim())?));
        }
        let seeds = urls
            .iter()
            .map(|u| Client::open(*u))
            .collect::<RedisResult<Vec<_>>>()?;
        let client = ClusterClient::builder(urls)
            // Redirections and a cluster that is reconfiguring (TRYAGAIN, CLUSTERDOWN, a
            // failover) are retried a few times, quickly: a buy answers 503 within about a
            // second rather than hanging, like on one node.
            .retries(3)
            .min_retry_wait(20)
            .max_retry_wait(300)
            .build()?;
        Ok(Self::Cluster {
            client: Box::new(client),
            seeds,
        })
    }

    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster { .. })
    }

    /// The shared, multiplexed and reconnecting connection.
    pub async fn shared(&self, t: Timeouts) -> RedisResult<Redis> {
        match self {
            Self::Single(client) => ConnectionManager::new_with_config(
                client.clone(),
                ConnectionManagerConfig::new()
                    .set_response_timeout(Some(t.response))
                    .set_connection_timeout(Some(t.connect))
                    // While Redis is down, callers wait for the reconnection: keep that short
                    // (a buy answers 503 within a second and the shopper retries) instead of
                    // the default six doubling retries, which held requests for seconds.
                    .set_number_of_retries(2)
                    .set_min_delay(Duration::from_millis(50))
                    .set_max_delay(Duration::from_millis(250)),
            )
            .await
            .map(Redis::Managed),
            Self::Cluster { client, .. } => cluster_connection(client, t).await,
        }
    }

    /// A connection of its own whose replies may take up to `response`: for blocking reads
    /// that would stall everyone on the shared one.
    pub async fn dedicated(&self, response: Duration) -> RedisResult<Redis> {
        self.connect(Timeouts {
            response,
            connect: CONNECT_TIMEOUT,
        })
        .await
    }

    /// A connection of its own with these bounds (not reconnecting by itself on one node: its
    /// owner opens it again when it drops).
    pub async fn connect(&self, t: Timeouts) -> RedisResult<Redis> {
        match self {
            Self::Single(client) => client
                .get_multiplexed_async_connection_with_config(
                    &AsyncConnectionConfig::new()
                        .set_response_timeout(Some(t.response))
                        .set_connection_timeout(Some(t.connect)),
                )
                .await
                .map(Redis::Plain),
            Self::Cluster { client, .. } => cluster_connection(client, t).await,
        }
    }

    /// A plain client per node named in `REDIS_URL` (the node itself, or each cluster seed):
    /// to subscribe with (classic pub/sub), or to look at each node (SCAN, INFO).
    pub fn seed_clients(&self) -> Vec<Client> {
        match self {
            Self::Single(client) => vec![client.clone()],
            Self::Cluster { seeds, .. } => seeds.clone(),
        }
    }
}

async fn cluster_connection(client: &ClusterClient, t: Timeouts) -> RedisResult<Redis> {
    client
        .get_async_connection_with_config(
            ClusterConfig::new()
                .set_response_timeout(t.response)
                .set_connection_timeout(t.connect),
        )
        .await
        .map(Redis::Cluster)
}

/// A connection to Redis, whichever the deployment. Cheap to clone (all are multiplexed).
#[derive(Clone)]
pub enum Redis {
    /// One node, reconnecting by itself (the shared connection).
    Managed(ConnectionManager),
    /// One node, a dedicated connection (reopened by its owner when it drops).
    Plain(MultiplexedConnection),
    /// A Redis Cluster: routed by key slot, following redirections, reconnecting by itself.
    Cluster(ClusterConnection),
}

impl Redis {
    pub fn is_cluster(&self) -> bool {
        matches!(self, Self::Cluster(_))
    }
}

impl ConnectionLike for Redis {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match self {
            Self::Managed(c) => c.req_packed_command(cmd),
            Self::Plain(c) => c.req_packed_command(cmd),
            Self::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match self {
            Self::Managed(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Plain(c) => c.req_packed_commands(pipeline, offset, count),
            Self::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Self::Managed(c) => c.get_db(),
            Self::Plain(c) => c.get_db(),
            Self::Cluster(c) => c.get_db(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_url_is_a_single_node_and_a_list_is_a_cluster() {
        let single = Deployment::open("redis://127.0.0.1:16379/").expect("valid");
        assert!(!single.is_cluster());
        let cluster = Deployment::open(
            "redis://127.0.0.1:7101, redis://127.0.0.1:7102,redis://127.0.0.1:7103",
        )
        .expect("valid");
        assert!(cluster.is_cluster());
        assert_eq!(cluster.seed_clients().len(), 3);
        assert!(Deployment::open("redis://127.0.0.1:7101,not a url").is_err());
    }
}
