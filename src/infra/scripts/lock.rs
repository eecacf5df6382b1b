//! `lua/lock_acquire.lua`, `lua/lock_release.lua`, `lua/lock_renew.lua`: one node's side of the
//! distributed lock (see `crate::infra::lock`).

use std::sync::LazyLock;

use redis::{aio::ConnectionLike, Script};

use super::Backend;
use crate::infra::keys::LockKeys;

static LOCK_ACQUIRE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/lock_acquire.lua")));
static LOCK_RELEASE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/lock_release.lua")));
static LOCK_RENEW: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("../../../lua/lock_renew.lua")));

/// What one node answered to an acquire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockGrant {
    /// Granted (or re-entered) with this fencing token.
    Granted { fence: i64 },
    /// Held by another owner for this many more milliseconds (-1: no expiry, -2: just gone).
    Held { ttl_ms: i64 },
}

/// Runs `lua/lock_acquire.lua`. `request` is unique per acquire call: the same request
/// delivered twice counts one hold.
pub async fn lock_acquire<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LockKeys,
    owner: &str,
    lease_ms: u64,
    request: &str,
) -> Result<LockGrant, Backend> {
    let reply: Vec<i64> = LOCK_ACQUIRE
        .key(&keys.lock)
        .key(&keys.fence)
        .arg(owner)
        .arg(lease_ms)
        .arg(request)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0, fence] => Ok(LockGrant::Granted { fence: *fence }),
        [1, ttl_ms] => Ok(LockGrant::Held { ttl_ms: *ttl_ms }),
        _ => Err(Backend::unknown_reply("lock_acquire", &reply)),
    }
}

/// What one node answered to a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockRelease {
    Freed,
    /// Re-entered holds remain.
    StillHeld {
        count: i64,
    },
    /// The caller does not own the lock (it expired, maybe someone else holds it now).
    NotOwner,
}

/// Runs `lua/lock_release.lua`. `request` is unique per release call: the same request
/// delivered twice releases one hold.
pub async fn lock_release<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LockKeys,
    owner: &str,
    lease_ms: u64,
    request: &str,
) -> Result<LockRelease, Backend> {
    let reply: Vec<i64> = LOCK_RELEASE
        .key(&keys.lock)
        .arg(owner)
        .arg(lease_ms)
        .arg(&keys.channel)
        .arg(request)
        .invoke_async(conn)
        .await?;
    match reply.as_slice() {
        [0] => Ok(LockRelease::Freed),
        [1, count] => Ok(LockRelease::StillHeld { count: *count }),
        [2] => Ok(LockRelease::NotOwner),
        _ => Err(Backend::unknown_reply("lock_release", &reply)),
    }
}

/// Runs `lua/lock_renew.lua`; `true` when the lease was extended.
pub async fn lock_renew<C: ConnectionLike + Send>(
    conn: &mut C,
    keys: &LockKeys,
    owner: &str,
    lease_ms: u64,
) -> Result<bool, Backend> {
    let reply: i64 = LOCK_RENEW
        .key(&keys.lock)
        .arg(owner)
        .arg(lease_ms)
        .invoke_async(conn)
        .await?;
    match reply {
        1 => Ok(true),
        0 => Ok(false),
        _ => Err(Backend::unknown_reply("lock_renew", &[reply])),
    }
}
