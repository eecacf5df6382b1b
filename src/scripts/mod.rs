//! The Lua scripts (`lua/`), one wrapper per file, and the decoding of their replies.
//!
//! Each wrapper declares every key its script touches (so it runs on one Redis Cluster slot),
//! and decodes the script's reply into a Rust enum; a reply not listed is an
//! [`ScriptError::UnknownReply`], never a silent default. `redis::Script` runs `EVALSHA` and
//! falls back to loading the script on `NOSCRIPT`.

mod admit;
mod lock;
mod order_id;
mod preload;
mod raise_counter;
mod retire;
mod settle;
mod verify_code;

pub use admit::{admit, AdmissionOutcome, ADMIT_BODY, ADMIT_SOURCE};
pub use lock::{lock_acquire, lock_release, lock_renew, LockGrant, LockRelease};
pub use order_id::{next_order_id, NextIdError};
pub use preload::{preload, PreloadInput, PreloadOutcome};
pub use raise_counter::raise_counter;
pub use retire::{retire, Retirement};
pub use settle::{settle, SettleEntry};
pub use verify_code::{verify_code, CodeCheck};

use crate::domain::OrderId;

/// A script failed to run, or answered something this code does not know.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("script {script} returned an unknown reply {reply:?}")]
    UnknownReply {
        script: &'static str,
        reply: Vec<i64>,
    },
}

impl ScriptError {
    fn unknown(script: &'static str, reply: &[i64]) -> Self {
        Self::UnknownReply {
            script,
            reply: reply.to_vec(),
        }
    }
}

/// `lua/order_id.lua`: the ID library the admission and ID scripts start with.
const ORDER_ID_LIB: &str = include_str!("../../lua/order_id.lua");

/// An order ID from the `secs, seq` pair a script returns.
fn order_id(secs: i64, seq: i64) -> Option<OrderId> {
    OrderId::from_parts(u32::try_from(secs).ok()?, u32::try_from(seq).ok()?).ok()
}
