//! The drills' local services: found on the ports they were started on, stopped and started
//! through `scripts/services.sh`, Redis's `appendfsync` read and set.

use std::{process::Command, time::Duration};

use anyhow::{bail, Context};
use seckill::config::{DEFAULT_DATABASE_URL, DEFAULT_REDIS_URL};
use tokio::time::Instant;

use crate::{report, scratch::Scratch};

/// The drills stop and kill the stores: only the project's own local ones, on whatever ports
/// `scripts/services.sh` started them (`SECKILL_REDIS_PORT`, `SECKILL_PG_PORT`).
pub(super) fn local_services_only() -> anyhow::Result<()> {
    let redis = std::env::var("REDIS_URL").unwrap_or_else(|_| DEFAULT_REDIS_URL.to_owned());
    let pg = std::env::var("DATABASE_URL").unwrap_or_else(|_| DEFAULT_DATABASE_URL.to_owned());
    let (local_redis, local_pg) = local_urls(|name| std::env::var(name).ok())?;
    if redis.trim_end_matches('/') != local_redis.trim_end_matches('/') || pg != local_pg {
        bail!("the drills kill and stop the stores: run them on the local services (scripts/services.sh), not {redis} / {pg} (the local ones: {local_redis} / {local_pg})");
    }
    Ok(())
}

/// The local services' URLs as `scripts/services.sh` prints them, on the ports named by `var`
/// (`SECKILL_REDIS_PORT`, `SECKILL_PG_PORT`; unset: the defaults, 16379 and 15432).
pub(super) fn local_urls(var: impl Fn(&str) -> Option<String>) -> anyhow::Result<(String, String)> {
    let port = |name: &str, default: u16| -> anyhow::Result<u16> {
        var(name).map_or(Ok(default), |v| {
            v.trim()
                .parse()
                .with_context(|| format!("{name}={v:?} is not a port"))
        })
    };
    let redis = port("SECKILL_REDIS_PORT", 16379)?;
    let pg = port("SECKILL_PG_PORT", 15432)?;
    Ok((
        format!("redis://127.0.0.1:{redis}/"),
        format!("postgres://seckill:seckill@127.0.0.1:{pg}/seckill"),
    ))
}

/// `scripts/services.sh <cmd>` on the local services.
pub(super) fn services(cmd: &str) -> anyhow::Result<()> {
    let status = Command::new(report::root().join("scripts").join("services.sh"))
        .arg(cmd)
        // Set, these would make the script use them instead of managing the local services.
        .env_remove("REDIS_URL")
        .env_remove("DATABASE_URL")
        .status()
        .with_context(|| format!("scripts/services.sh {cmd}"))?;
    if !status.success() {
        bail!("scripts/services.sh {cmd} failed");
    }
    Ok(())
}

/// Redis's `appendfsync`.
pub(super) async fn appendfsync(scratch: &Scratch) -> anyhow::Result<String> {
    let mut c = scratch.core.redis.clone();
    let pair: Vec<String> = redis::cmd("CONFIG")
        .arg("GET")
        .arg("appendfsync")
        .query_async(&mut c)
        .await?;
    Ok(pair.get(1).cloned().unwrap_or_default())
}

pub(super) async fn set_appendfsync(scratch: &Scratch, to: &str) -> anyhow::Result<()> {
    let mut c = scratch.core.redis.clone();
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("appendfsync")
        .arg(to)
        .query_async::<()>(&mut c)
        .await?;
    Ok(())
}

/// Waits (30 s at most) until the scratch connection to Redis answers again.
pub(super) async fn redis_answers(scratch: &Scratch) -> anyhow::Result<()> {
    let from = Instant::now();
    loop {
        let mut c = scratch.core.redis.clone();
        match redis::cmd("PING").query_async::<String>(&mut c).await {
            Ok(_) => return Ok(()),
            Err(e) if from.elapsed() > Duration::from_secs(30) => return Err(e.into()),
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_local_services_are_found_on_the_ports_they_were_started_on() {
        let (redis, pg) = local_urls(|_| None).expect("defaults");
        assert_eq!(
            (redis.as_str(), pg.as_str()),
            (DEFAULT_REDIS_URL, DEFAULT_DATABASE_URL),
            "unset: the defaults the server itself uses"
        );
        let (redis, pg) = local_urls(|name| match name {
            "SECKILL_REDIS_PORT" => Some("26479".into()),
            "SECKILL_PG_PORT" => Some("25432".into()),
            _ => None,
        })
        .expect("ports");
        assert_eq!(redis, "redis://127.0.0.1:26479/");
        assert_eq!(pg, "postgres://seckill:seckill@127.0.0.1:25432/seckill");
        assert!(local_urls(|_| Some("not a port".into())).is_err());
    }
}
