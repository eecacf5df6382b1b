//! [`Backend`]: the one error of the backing stores (PostgreSQL, Redis, and the Lua scripts'
//! replies), and whether it means "out of reach" (answer 503, the same request may succeed once
//! the store is back) or a fault of this code or its data (500).
//!
//! Every service error wraps a `Backend` in one variant beside its own refusals, and classifies
//! itself with an exhaustive match ([`Unavailable`]); no classification ends in a wildcard, so a
//! new variant cannot fall to 500 unnoticed (design.md §8, decision 22).

use std::sync::Arc;

/// A backing store failed, or answered something this code does not know.
#[derive(Debug, thiserror::Error)]
pub enum Backend {
    #[error("postgres: {0}")]
    Postgres(#[from] sqlx::Error),
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// A script answered a reply its wrapper does not list (never a silent default).
    #[error("script {script} returned an unknown reply {reply:?}")]
    UnknownReply {
        script: &'static str,
        reply: Vec<i64>,
    },
    /// Fewer replicas than `SECKILL_MIN_REPLICAS` acknowledged a write within
    /// `SECKILL_REPLICA_WAIT_MS` (`SECKILL_DURABILITY=replicated`): the write was made on the
    /// master and may or may not survive a failover, so it is not reported as done.
    #[error("only {acked} of {wanted} replica(s) acknowledged the write in time")]
    NotReplicated { acked: i64, wanted: u32 },
    /// A sale's state on this Redis master was not checked against PostgreSQL since the master
    /// changed (a failover, a restart): its admissions wait for the reconciliation.
    #[error("the sale is being reconciled after its Redis master changed")]
    Unreconciled,
    /// One failure handed to several callers: a batched admission call fails for each of its
    /// shoppers.
    #[error("{0}")]
    Shared(Arc<Backend>),
}

impl Backend {
    /// The failure itself, past any sharing.
    pub fn root(&self) -> &Self {
        match self {
            Self::Shared(e) => e.root(),
            other => other,
        }
    }

    /// A script's reply that its wrapper does not know.
    pub(crate) fn unknown_reply(script: &'static str, reply: &[i64]) -> Self {
        Self::UnknownReply {
            script,
            reply: reply.to_vec(),
        }
    }
}

/// An error that may be a store being out of reach.
pub trait Unavailable {
    /// `true` when the operation may succeed unchanged once PostgreSQL or Redis is back.
    fn is_unavailable(&self) -> bool;
}

impl Unavailable for Backend {
    fn is_unavailable(&self) -> bool {
        match self {
            Self::Postgres(e) => postgres_unavailable(e),
            Self::Redis(e) => redis_unavailable(e),
            Self::UnknownReply { .. } => false,
            Self::NotReplicated { .. } | Self::Unreconciled => true,
            Self::Shared(e) => e.is_unavailable(),
        }
    }
}

/// PostgreSQL could not be reached or is shutting down (the request may be retried once it is
/// back), as opposed to a fault of the statement or the data.
fn postgres_unavailable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed => true,
        // Class 08: connection exceptions; 57P0x: the server is shutting down or starting.
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}

/// Redis out of reach: the connection failed, dropped or timed out, or the node is loading,
/// has lost its master, or the cluster is down or moving the slot (a redirection the client
/// did not follow: a pipeline's, during a failover).
fn redis_unavailable(e: &redis::RedisError) -> bool {
    e.redirect_node().is_some()
        || e.is_io_error()
        || e.is_connection_dropped()
        || e.is_connection_refusal()
        || e.is_timeout()
        || e.is_unrecoverable_error()
        || matches!(
            e.code(),
            Some("LOADING" | "MASTERDOWN" | "CLUSTERDOWN" | "TRYAGAIN")
        )
}

/// Lets `?` turn the stores' own errors into a service error that wraps [`Backend`] in its
/// `Backend` variant: `backend_error!(BuyError);`.
macro_rules! backend_error {
    ($($error:ty),+ $(,)?) => {$(
        impl From<sqlx::Error> for $error {
            fn from(e: sqlx::Error) -> Self {
                Self::Backend($crate::infra::backend::Backend::Postgres(e))
            }
        }
        impl From<redis::RedisError> for $error {
            fn from(e: redis::RedisError) -> Self {
                Self::Backend($crate::infra::backend::Backend::Redis(e))
            }
        }
    )+};
}
pub(crate) use backend_error;
