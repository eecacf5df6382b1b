//! `seckill`: the flash-sale core.
//!
//! Everything that decides or records a sale lives here; the `app` (Leptos) and `server` (Axum)
//! crates only adapt HTTP and UI to these functions. The folders are the system's parts:
//!
//! | part | owns |
//! | --- | --- |
//! | [`catalog`] | vouchers: created by admins, listed, preloaded into Redis; an admin ending a sale or adding stock; the console's figures |
//! | [`sale`] | sale day: a buy decided by the batched admission script, answers from memory, order IDs, an order's status, the live figures of open pages |
//! | [`draw`] | a fair opening: entries, the auditable draw at the start, units back down the ranking |
//! | [`orders`] | after the rush: paying or cancelling, the payment provider, units back on sale |
//! | [`jobs`] | what runs without a request: the order writer, the sweeper, the live push, the stock-back subscription |
//! | [`auth`] | sign-in codes and sessions |
//! | [`config`] | the typed configuration read from the environment |
//! | `handles` | [`Core`]: the handles every operation needs, and health |
//! | `infra` | private: Redis keys and connections, the Lua scripts, PostgreSQL, the lock, durability, [`Backend`] |
//!
//! Layers: [`domain`] → `infra` → the parts → the adapters in `app` and `server`, which reach
//! Redis and PostgreSQL only through the parts' functions (the compiler keeps them out of
//! `infra`; the `testing` feature opens it to the tests and benchmarks).

pub mod auth;
pub mod books;
pub mod catalog;
pub mod config;
pub mod draw;
mod handles;
mod health;
mod infra;
pub mod jobs;
pub mod orders;
pub mod reminders;
pub mod sale;
pub mod secret;
pub mod signing;

pub use ::domain;
pub use config::Config;
pub use handles::{ConnectError, Core};
pub use health::Health;
pub use infra::{
    backend::{Backend, Unavailable},
    durability::{Durability, DurabilityError},
    lock::{LockClient, LockError, LockGuard, LockOptions},
    redis_conn::{Deployment, Redis},
    ttl_map::TtlMap,
};

/// The core's insides, for the integration tests and the benchmarks only (feature `testing`):
/// Redis keys, the Lua scripts' wrappers, the PostgreSQL repositories.
#[cfg(feature = "testing")]
pub mod testing {
    pub use crate::infra::{keys, lock, redis_conn, scripts, store};

    /// The timing of the beacon chain `core` is configured for, as it reads it.
    pub async fn beacon_timing(
        core: &crate::Core,
    ) -> Result<crate::draw::ChainTiming, crate::draw::BeaconError> {
        match &core.beacon {
            Some(b) => b.timing().await,
            None => Err(crate::draw::BeaconError::WrongChain(
                "no beacon configured".into(),
            )),
        }
    }
}
