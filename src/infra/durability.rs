//! The durability promise (`SECKILL_DURABILITY`), checked against Redis at start-up.
//!
//! An admitted order lives only in Redis until the worker writes it, so what Redis persists
//! before it replies is what a shopper's order ID is worth:
//! - `everysec` (default): Redis appends every write to its AOF before replying and fsyncs once
//!   a second. A crash of any process loses nothing; a crash of the machine (power, kernel) can
//!   lose up to about a second of admissions that shoppers were told about.
//! - `fsync`: Redis fsyncs the AOF before every reply (`appendfsync always`): a machine crash
//!   loses nothing acknowledged, at the cost measured in BENCHMARKS.md.
//!
//! Neither covers a failover to an asynchronous replica, which can lose the writes it had not
//! received yet (README, "Durability").

use std::{fmt, str::FromStr};

use crate::Core;

/// What an admission must survive before its order ID is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// AOF fsynced every second (Redis `appendfsync everysec`).
    EverySec,
    /// AOF fsynced before each reply (Redis `appendfsync always`).
    Fsync,
}

impl FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "everysec" => Ok(Self::EverySec),
            "fsync" => Ok(Self::Fsync),
            other => Err(format!("{other:?} is neither everysec nor fsync")),
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::EverySec => "everysec",
            Self::Fsync => "fsync",
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
}

/// Reads Redis's persistence settings. `fsync` is made to hold (`CONFIG SET`, never weakening
/// anything) or start-up fails; with `everysec`, an AOF that is off is a loud warning.
pub async fn ensure(core: &Core) -> Result<(), DurabilityError> {
    let mut redis = core.redis.clone();
    let get = |name: &'static str| {
        let mut redis = redis.clone();
        async move {
            let pair: Vec<String> = redis::cmd("CONFIG")
                .arg("GET")
                .arg(name)
                .query_async(&mut redis)
                .await?;
            Ok::<_, redis::RedisError>(pair.get(1).cloned().unwrap_or_default())
        }
    };
    let (appendonly, appendfsync) = (get("appendonly").await?, get("appendfsync").await?);
    match core.config.durability {
        Durability::Fsync if appendonly == "yes" && appendfsync == "always" => {}
        Durability::Fsync => {
            let set: Result<(), redis::RedisError> = redis::cmd("CONFIG")
                .arg("SET")
                .arg("appendonly")
                .arg("yes")
                .arg("appendfsync")
                .arg("always")
                .query_async(&mut redis)
                .await;
            if set.is_err() {
                return Err(DurabilityError::Weaker {
                    appendonly,
                    appendfsync,
                });
            }
            tracing::info!("Redis set to appendfsync always (SECKILL_DURABILITY=fsync)");
        }
        Durability::EverySec if appendonly != "yes" => tracing::warn!(
            "Redis runs without its AOF: admitted orders would not survive a Redis restart"
        ),
        Durability::EverySec => {}
    }
    Ok(())
}
