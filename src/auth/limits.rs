//! Per-client limits on sign-in and on entering draws: fixed one-minute windows counted in Redis, so every instance
//! shares them; each counter expires with its window, so their memory is bounded by the
//! clients of the last minute (decision 26).

use std::{net::IpAddr, time::Duration};

use crate::{infra::backend::Backend, Core};

/// The window every per-client limit counts in.
pub const WINDOW: Duration = Duration::from_secs(60);

/// What a client is limited in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Asking for a sign-in code (`SECKILL_CODE_REQUESTS_PER_CLIENT`).
    CodeRequest,
    /// Sending a code to sign in (`SECKILL_SIGN_INS_PER_CLIENT`).
    SignIn,
    /// Entering a draw (`SECKILL_ENTRIES_PER_CLIENT`).
    DrawEntry,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Self::CodeRequest => "codes",
            Self::SignIn => "sign-ins",
            Self::DrawEntry => "entries",
        }
    }

    fn limit(self, core: &Core) -> u32 {
        match self {
            Self::CodeRequest => core.config.auth.codes_per_client,
            Self::SignIn => core.config.auth.sign_ins_per_client,
            Self::DrawEntry => core.config.limits.entries_per_client,
        }
    }
}

/// Counts one `action` by `client`; past the limit, how long until its window ends.
pub async fn count(
    core: &Core,
    client: IpAddr,
    action: Action,
) -> Result<Option<Duration>, Backend> {
    let key = core.keys.client_limit(client, action.name());
    let window_ms = u64::try_from(WINDOW.as_millis()).unwrap_or(u64::MAX);
    let mut redis = core.redis.clone();
    let (n, left_ms): (u64, i64) = redis::pipe()
        .atomic()
        .incr(&key, 1)
        .cmd("PEXPIRE")
        .arg(&key)
        .arg(window_ms)
        .arg("NX")
        .ignore()
        .pttl(&key)
        .query_async(&mut redis)
        .await?;
    Ok((n > u64::from(action.limit(core)))
        .then(|| Duration::from_millis(u64::try_from(left_ms).unwrap_or(window_ms))))
}
