//! Per-client limits on sign-in and on entering draws: fixed one-minute windows counted in Redis, so every instance
//! shares them; each counter expires with its window, so their memory is bounded by the
//! clients of the last minute (decision 26).

use std::{
    net::{IpAddr, Ipv6Addr},
    time::Duration,
};

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

/// How many clients' worth an IPv6 site (its /48) may do in a window: a site is given a /48
/// whole, so one holder rotating through its 65,536 /64s is counted as this many clients, not
/// 65,536 (a free tunnel broker hands out /48s).
pub const SITE_CLIENTS: u32 = 16;

/// Counts one `action` by `client` (an IPv4 address, or an IPv6 /64: `server/src/client.rs`),
/// and by its IPv6 site; past either's limit, how long until that window ends.
pub async fn count(
    core: &Core,
    client: IpAddr,
    action: Action,
) -> Result<Option<Duration>, Backend> {
    let limit = u64::from(action.limit(core));
    let site = site_of(client);
    let mut counters = vec![(client, limit)];
    if site != client {
        counters.push((site, limit * u64::from(SITE_CLIENTS)));
    }
    let window_ms = u64::try_from(WINDOW.as_millis()).unwrap_or(u64::MAX);
    let mut pipe = redis::pipe();
    pipe.atomic();
    for (network, _) in &counters {
        let key = core.keys.client_limit(site, *network, action.name());
        pipe.incr(&key, 1)
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(window_ms)
            .arg("NX")
            .ignore()
            .pttl(&key);
    }
    let mut redis = core.redis.clone();
    let counted: Vec<(u64, i64)> = pipe.query_async(&mut redis).await?;
    Ok(counters
        .iter()
        .zip(counted)
        .filter(|((_, limit), (n, _))| n > limit)
        .map(|(_, (_, left_ms))| Duration::from_millis(u64::try_from(left_ms).unwrap_or(window_ms)))
        .max())
}

/// The site `client` belongs to: an IPv6 address's /48, an IPv4 address itself.
fn site_of(client: IpAddr) -> IpAddr {
    match client {
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & (u128::MAX << 80))),
        v4 => v4,
    }
}
