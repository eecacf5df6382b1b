//! The durability promise (`SECKILL_DURABILITY`), checked against Redis at start-up (and,
//! for `fsync`, every second after).
//!
//! An admitted order lives only in Redis until the worker writes it, so what Redis persists
//! before it replies is what a shopper's order ID is worth:
//! - `everysec` (default): Redis appends every write to its AOF before replying and fsyncs once
//!   a second, except while that fsync is still running (a busy disk): then it replies and holds
//!   the writes in memory for up to 2 s. A crash of the server loses nothing; a kill of Redis
//!   loses nothing while the disk keeps up, and up to ~2 s of acknowledged admissions when it
//!   does not; a crash of the machine (power, kernel) up to ~2 s (design.md decision 10).
//! - `fsync`: Redis writes and fsyncs the AOF before every reply (`appendfsync always`): no
//!   crash loses anything acknowledged, at the cost measured in BENCHMARKS.md. Start-up sets it
//!   and `jobs::durability_watch` sets it again on a Redis restarted with its own setting.
//! - `replicated`: each batch of admissions is answered only once `SECKILL_MIN_REPLICAS`
//!   replicas hold it (`WAIT` after the script, on the same connection to the master that ran
//!   it), and the worker writes an order to PostgreSQL only once a replica holds its admission:
//!   a failover to a replica loses no acknowledged order (design.md decision 32). Start-up
//!   refuses a Redis whose masters have fewer replicas than asked for.
//!
//! `everysec` and `fsync` do not cover a failover to an asynchronous replica, which can lose
//! the writes it had not received yet (docs/operations.md, "Durability").

use std::{collections::HashMap, fmt, str::FromStr, time::Duration};

use crate::infra::redis_conn::Redis;

/// What an admission must survive before its order ID is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// AOF fsynced every second (Redis `appendfsync everysec`).
    EverySec,
    /// AOF fsynced before each reply (Redis `appendfsync always`).
    Fsync,
    /// Answered once replicas hold it (`SECKILL_MIN_REPLICAS` within `SECKILL_REPLICA_WAIT_MS`).
    Replicated,
}

/// How many replicas must acknowledge a write before it counts as made, and how long to wait
/// for them (`SECKILL_MIN_REPLICAS`, `SECKILL_REPLICA_WAIT_MS`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplicaWait {
    pub min_replicas: u32,
    pub timeout: Duration,
}

impl ReplicaWait {
    /// `WAIT numreplicas timeout`: blocks the connection until `min_replicas` replicas have
    /// acknowledged every write made on it before, or the timeout passes; answers how many did.
    pub fn command(&self) -> redis::Cmd {
        let mut wait = redis::cmd("WAIT");
        wait.arg(self.min_replicas)
            .arg(u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX));
        wait
    }

    /// Whether `acked` replicas (`WAIT`'s answer) are enough.
    pub fn holds(&self, acked: i64) -> bool {
        acked >= i64::from(self.min_replicas)
    }
}

impl FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "everysec" => Ok(Self::EverySec),
            "fsync" => Ok(Self::Fsync),
            "replicated" => Ok(Self::Replicated),
            other => Err(format!(
                "{other:?} is not one of everysec, fsync and replicated"
            )),
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EverySec => "everysec",
            Self::Fsync => "fsync",
            Self::Replicated => "replicated",
        })
    }
}

/// Redis cannot keep the promise asked for.
#[derive(Debug, thiserror::Error)]
pub enum DurabilityError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("SECKILL_DURABILITY=fsync needs Redis with appendonly yes and appendfsync always; it has appendonly {appendonly}, appendfsync {appendfsync} and refused CONFIG SET")]
    Weaker {
        appendonly: String,
        appendfsync: String,
    },
    #[error("SECKILL_DURABILITY=replicated needs {wanted} replica(s) of every Redis master; {master} has {have}")]
    TooFewReplicas {
        master: String,
        have: u32,
        wanted: u32,
    },
    #[error("SECKILL_DURABILITY=replicated: cannot read Redis's replicas ({0})")]
    Unreadable(String),
}

/// Reads Redis's persistence settings. `fsync` is made to hold (`CONFIG SET`, never weakening
/// anything) or start-up fails; with `everysec`, an AOF that is off is a loud warning.
pub async fn ensure(
    redis: &Redis,
    durability: Durability,
    replicas: ReplicaWait,
) -> Result<(), DurabilityError> {
    match durability {
        Durability::Fsync => {
            if let FsyncHeld::Restored { was } = hold_fsync(redis).await? {
                tracing::info!(was = %was, "Redis set to appendfsync always (SECKILL_DURABILITY=fsync)");
            }
        }
        Durability::EverySec => warn_without_aof(&config_get(redis, "appendonly").await?),
        Durability::Replicated => {
            warn_without_aof(&config_get(redis, "appendonly").await?);
            let mut redis = redis.clone();
            let wanted = replicas.min_replicas;
            let replicas = if redis.is_cluster() {
                let nodes: String = redis::cmd("CLUSTER")
                    .arg("NODES")
                    .query_async(&mut redis)
                    .await?;
                cluster_replicas(&nodes)
            } else {
                let info: String = redis::cmd("INFO")
                    .arg("replication")
                    .query_async(&mut redis)
                    .await?;
                HashMap::from([("the Redis node".to_owned(), online_replicas(&info))])
            };
            if replicas.is_empty() {
                return Err(DurabilityError::Unreadable(
                    "no master serves a slot".to_owned(),
                ));
            }
            if let Some((master, &have)) = replicas.iter().min_by_key(|(_, n)| **n) {
                if have < wanted {
                    return Err(DurabilityError::TooFewReplicas {
                        master: master.clone(),
                        have,
                        wanted,
                    });
                }
            }
            tracing::info!(
                masters = replicas.len(),
                wanted,
                "every Redis master has its replicas (SECKILL_DURABILITY=replicated)"
            );
        }
    }
    Ok(())
}

/// What [`hold_fsync`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FsyncHeld {
    /// Redis already had its AOF on and `appendfsync always`.
    Held,
    /// It had not (`was`: its `appendonly` and `appendfsync`); it has now.
    Restored { was: String },
}

/// `fsync`'s condition on Redis: the AOF on and fsynced before every reply. `CONFIG SET` is
/// not persisted, so a Redis restarted from its own configuration file forgets it; start-up and
/// then the watch ([`crate::jobs::durability_watch`]) call this. On a cluster `CONFIG GET`
/// reaches one node and `CONFIG SET` every node, so the setting is sent to all of them each
/// time, and `Restored` says the node asked was weaker.
pub async fn hold_fsync(redis: &Redis) -> Result<FsyncHeld, DurabilityError> {
    let appendonly = config_get(redis, "appendonly").await?;
    let appendfsync = config_get(redis, "appendfsync").await?;
    let held = appendonly == "yes" && appendfsync == "always";
    if held && !redis.is_cluster() {
        return Ok(FsyncHeld::Held);
    }
    let mut redis = redis.clone();
    let set: Result<(), redis::RedisError> = redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendonly")
        .arg("yes")
        .arg("appendfsync")
        .arg("always")
        .query_async(&mut redis)
        .await;
    match set {
        // Refused (a renamed or forbidden CONFIG): fsync cannot be promised.
        Err(e)
            if matches!(
                e.kind(),
                redis::ErrorKind::Server(
                    redis::ServerErrorKind::ResponseError | redis::ServerErrorKind::NoPerm
                )
            ) =>
        {
            Err(DurabilityError::Weaker {
                appendonly,
                appendfsync,
            })
        }
        Err(e) => Err(e.into()),
        Ok(()) if held => Ok(FsyncHeld::Held),
        Ok(()) => Ok(FsyncHeld::Restored {
            was: format!("appendonly {appendonly}, appendfsync {appendfsync}"),
        }),
    }
}

/// One of Redis's settings (`CONFIG GET`; on a cluster, one node's).
async fn config_get(redis: &Redis, name: &str) -> Result<String, DurabilityError> {
    let mut redis = redis.clone();
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg(name)
        .query_async(&mut redis)
        .await?;
    Ok(pair.get(1).cloned().unwrap_or_default())
}

fn warn_without_aof(appendonly: &str) {
    if appendonly != "yes" {
        tracing::warn!(
            "Redis runs without its AOF: admitted orders would not survive a Redis restart"
        );
    }
}

/// The replicas `INFO replication` lists as online.
fn online_replicas(info: &str) -> u32 {
    let online = info
        .lines()
        .filter(|l| l.starts_with("slave") && l.contains("state=online"))
        .count();
    u32::try_from(online).unwrap_or(u32::MAX)
}

/// Each master serving slots (by address) and its connected replicas, from `CLUSTER NODES`.
fn cluster_replicas(nodes: &str) -> HashMap<String, u32> {
    // <id> <addr> <flags> <master-id> <ping> <pong> <epoch> <link> [<slot> ...]
    let lines: Vec<Vec<&str>> = nodes
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|f: &Vec<&str>| f.len() >= 8)
        .collect();
    let healthy = |flags: &str| !flags.contains("fail") && !flags.contains("handshake");
    let mut masters: HashMap<&str, (String, u32)> = lines
        .iter()
        .filter(|f| f[2].contains("master") && healthy(f[2]) && f.len() > 8)
        .map(|f| (f[0], (f[1].split('@').next().unwrap_or(f[1]).to_owned(), 0)))
        .collect();
    for f in &lines {
        if f[2].contains("slave") && healthy(f[2]) && f[7] == "connected" {
            if let Some((_, n)) = masters.get_mut(f[3]) {
                *n += 1;
            }
        }
    }
    masters.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_are_counted_per_master_serving_slots() {
        let nodes = "\
a1 127.0.0.1:17101@27101 myself,master - 0 0 1 connected 0-5460
a2 127.0.0.1:17102@27102 master - 0 0 2 connected 5461-10922
a3 127.0.0.1:17103@27103 master,fail - 0 0 3 disconnected
r1 127.0.0.1:17104@27104 slave a1 0 0 1 connected
r2 127.0.0.1:17105@27105 slave,fail a2 0 0 2 disconnected
r3 127.0.0.1:17106@27106 slave a2 0 0 2 connected
";
        let replicas = cluster_replicas(nodes);
        assert_eq!(replicas.len(), 2, "{replicas:?}");
        assert_eq!(replicas["127.0.0.1:17101"], 1);
        assert_eq!(replicas["127.0.0.1:17102"], 1);
        let info = "role:master\r\nconnected_slaves:2\r\nslave0:ip=127.0.0.1,port=1,state=online,offset=5,lag=0\r\nslave1:ip=127.0.0.1,port=2,state=wait_bgsave,offset=0,lag=0\r\n";
        assert_eq!(online_replicas(info), 1);
    }

    #[test]
    fn durability_parses_its_three_settings() {
        for s in ["everysec", "fsync", "replicated"] {
            assert_eq!(
                s.parse::<Durability>().map(|d| d.to_string()).as_deref(),
                Ok(s)
            );
        }
        assert!("always".parse::<Durability>().is_err());
    }
}
